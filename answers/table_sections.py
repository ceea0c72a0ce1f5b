"""Questions about the rows of a table's section (or of a whole table): "What
are the components of X?" lists them, "How many components of X exceeded N in
2019?" counts them."""

from __future__ import annotations

import re

from .calculator import calculate, describe
from .question import analyse
from .ranking import Matcher
from .table_comparisons import threshold_in
from .table_lookup import (
    MIN_QUESTION_SHARE,
    Match,
    numeric,
    operand,
    weighted_share,
    years_asked,
)
from .tables import Row, Table
from .types import Claim, Operation, Source, TermStatistics

# "What are the components of X?": the rows of X's section, or of the table.
_COMPONENTS = re.compile(
    r"\bwhat (?:are|were) (?:the )?(?:main |key |different )?(?:components|segments"
    r"|types|categories|items|elements|classes|kinds|sources|regions|lines)\b"
    r"(?: (?:of|under|in|within|for|that make up) (?:the )?(?P<what>.+))?",
    re.I,
)
# "How many components of deferred tax assets exceeded $50,000 in 2019?"
_HOW_MANY_COMPONENTS = re.compile(
    r"\bhow many (?:(?:major|main|key|different) )?(?:components|types|categories"
    r"|items|elements|kinds|classes|sources)\b(?: (?:are there |were there )?"
    r"(?:of|under|in|within|for) (?:the )?(?P<what>.+?))?"
    r"(?= (?:are there|were there|exceed(?:ed|s)?|above|below|over|under|more|less"
    r"|greater|were|was|are|had|have)\b|$)",
    re.I,
)
_TOTAL = re.compile(r"\btotal\b|合计|总计", re.I)


def section_claims(
    text: str, tables: list[tuple[Source, Table]], statistics: TermStatistics | None
) -> list[Claim] | None:
    """The claims of a question listing or counting a section's rows, or None
    when the question does not ask that."""
    listed = _COMPONENTS.search(text)
    if listed:
        return _components(listed["what"] or "", tables, statistics)
    counted = _HOW_MANY_COMPONENTS.search(text)
    if counted:
        return _counted(counted["what"] or "", text, tables, statistics)
    return None


def _components(
    what: str, tables: list[tuple[Source, Table]], statistics: TermStatistics | None
) -> list[Claim]:
    """The labels of the rows of a section ("Deferred tax liabilities:") or of a
    whole table that `what` names, totals left out."""
    named = _named_rows(what, tables, statistics)
    if named is None:
        return []
    source, _, section, rows = named
    return [
        Claim(
            text=f"{section or 'The table'}: {'; '.join(row.cells[0] for row in rows)}",
            source_ids=[source.id],
            quote=rows[0].quote,
        )
    ]


def _counted(
    what: str,
    text: str,
    tables: list[tuple[Source, Table]],
    statistics: TermStatistics | None,
) -> list[Claim]:
    """How many rows the section (or table) `what` names has, or how many of them
    are beyond the amount the question names in the year it names."""
    named = _named_rows(what, tables, statistics)
    if named is None:
        return []
    source, table, section, rows = named
    beyond = threshold_in(text)
    if beyond is not None:
        years = years_asked(text)
        columns = [
            c for c in table.value_columns if years and years[0] in table.columns[c]
        ]
        if len(columns) != 1:
            return []
        rows = [row for row in rows if beyond.holds(numeric(row, columns[0]))]
    else:
        columns = []
    operands = []
    for row in rows:
        column = columns[0] if columns else _first_number(table, row)
        if column is None:
            return []
        operands.append(operand(Match(source, table, row, 0.0), row, column))
    if not operands:
        return []
    calculation = calculate(Operation.COUNT, operands, decimals=0)
    listed = "; ".join(row.cells[0] for row in rows)
    return [
        Claim(
            text=f"{section or 'The table'}: {listed}; count: {describe(calculation)}",
            source_ids=[source.id],
            quote=rows[0].quote,
            calculation=calculation,
        )
    ]


def _first_number(table: Table, row: Row) -> int | None:
    return next((c for c in table.value_columns if numeric(row, c) is not None), None)


def _named_rows(
    what: str, tables: list[tuple[Source, Table]], statistics: TermStatistics | None
) -> tuple[Source, Table, str, list[Row]] | None:
    """The rows (totals left out) of the section, or whole table, that `what`
    names best; None unless it names one clearly and it has two rows or more."""
    what = re.sub(r"(?:\b(?:in|of) )?(?:the )?table\b.*$", "", what).strip()
    wanted = analyse(what).terms if what else ()
    best: tuple[float, Source, Table, str, list[Row]] | None = None
    for source, table in tables:
        groups: dict[str, list[Row]] = {}
        for row in table.rows:
            groups.setdefault(row.section, []).append(row)
        for section, rows in groups.items():
            named = Matcher(f"{section} {' '.join(table.columns)}")
            share = weighted_share(wanted, named, statistics) if wanted else 1.0
            if best is None or share > best[0]:
                best = (share, source, table, section, rows)
    if best is None or best[0] < MIN_QUESTION_SHARE:
        return None
    _, source, table, section, rows = best
    # One row per label: a table may repeat its rows under other headings.
    first: dict[str, Row] = {}
    for row in rows:
        if row.cells[0] and not _TOTAL.search(row.cells[0]):
            first.setdefault(row.cells[0], row)
    rows = list(first.values())
    if len(rows) < 2:
        return None
    return source, table, section, rows
