"""Questions about a table's cells, answered from the table.

The question's row is the table row whose label it names best (the IDF-weighted
share of the label's words the question holds, and of the question's words the
label holds); its columns are those whose labels hold the years (or other words)
it names. Then:

- a change, percentage change, average, sum, difference, ratio or percentage is
  computed (`calculator`) and the claim carries the calculation: "Other, change
  from 2018 to 2019: 44.1 − 56.7 = -12.6";
- "which year ... highest", "how many years ... above N" compare the row's cells,
  "which segment ... highest" the rows of a column or the columns of a row
  (`table_comparisons`); "what are the components of X", "how many components
  of X" list or count the rows of X's section (`table_sections`);
- any other question asking for a value gets the cell, labelled by its row and
  column: "Total sales, 2019: $1,496.5".

Nothing is answered from a table unless the row and columns are named clearly
enough; the sentence and row ranking of the other modules answers the rest.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from retrieval.lexicon import YEAR, YEAR_DIGITS
from retrieval.tokens import normalized

from .calculator import CalculationError, calculate, describe
from .question import Question, analyse, has_cjk
from .questions import subject_parts
from .table_comparisons import (
    asks_years_shown,
    comparison_claims,
    item_comparison_claims,
    years_shown,
)
from .table_lookup import (
    AVERAGE,
    SUM,
    Match,
    best_row,
    cell_label,
    columns_asked,
    every_year_column,
    names_a_column,
    numeric,
    operand,
    ordered_by_time,
    tables_for,
    with_previous_year,
)
from .table_sections import section_claims
from .tables import Table
from .types import Claim, Operand, Operation, Source, TermStatistics

_PERCENTAGE_CHANGE = re.compile(
    r"percent(?:age)? (?:change|increase|decrease|growth|decline|rise|fall)"
    r"|% (?:change|increase|decrease)|growth rate|rate of (?:change|growth)"
    r"|percentage (?:increase|decrease) ?/ ?\(?(?:increase|decrease)\)?"
    r"|(?:增长|下降|变化|减少)(?:率|幅度|的百分比)|同比(?:增长|变化)",
    re.I,
)
_CHANGE = re.compile(
    r"\b(?:change|increase|decrease|growth|grow|grew|decline|declined|movement"
    r"|variance|rise|fall)\b|变化|变动|增加|减少|增长|下降",
    re.I,
)
_DIFFERENCE = re.compile(r"\bdifference\b|差额|相差|差距", re.I)
_RATIO = re.compile(r"\bratio\b|\bproportion\b|比率|比值", re.I)
_PERCENTAGE = re.compile(
    r"\bwhat percentage\b|\bpercentage of\b|\bas a percentage\b|\bpercent of\b"
    r"|\bshare of\b|占.*(?:比例|百分比|比重)",
    re.I,
)
_PAIR = (
    re.compile(r"\bratio of (?P<a>.+?) (?:to|and|over|versus|vs\.?) (?P<b>.+?)$", re.I),
    re.compile(
        r"\b(?:proportion|percentage|percent|share) of (?P<a>.+?) "
        r"(?:over|to|in|of|out of|within|from|relative to|compared to) "
        r"(?:the )?(?P<b>total .+?|.+?)$",
        re.I,
    ),
    re.compile(r"\bdifference between (?P<a>.+?) and (?P<b>.+?)$", re.I),
    re.compile(r"\b(?:sum|total) of (?P<a>.+?) and (?P<b>.+?)$", re.I),
)


@dataclass(frozen=True)
class TableAnswer:
    claims: list[Claim]
    # The cells of the row and columns asked for, nothing computed or compared:
    # a sentence that names more of the question may say it better.
    looked_up: bool = False


def table_claims(
    question: Question,
    sources: Sequence[Source],
    statistics: TermStatistics | None,
) -> TableAnswer:
    """What a table of `sources` answers; no claims when none fits."""
    text = normalized(question.text).rstrip("?？ ")
    tables = tables_for(text, sources)
    if not tables:
        return TableAnswer([])
    shown = asks_years_shown(text)
    whole = _whole_table_claims(question, text, tables, statistics, shown=shown)
    if whole is not None:
        return TableAnswer(whole)
    operation = _operation(text)
    claims = _pair_claims(question, text, operation, tables, statistics)
    if claims is not None:
        return TableAnswer(claims)
    match = best_row(question, tables, statistics)
    if match is None and shown:
        source, table = tables[0]
        match = Match(source, table, table.rows[0], 0.0)
    if match is None:
        return TableAnswer([])
    if operation is not None and _names_operation(match.row.label, operation):
        operation = None  # "total sales", "average price": a row, not a sum
    columns = columns_asked(question, match.table, match.row, words=operation is None)
    if columns is None:
        return TableAnswer([])
    if operation is Operation.SUM and len(columns) == 1:
        operation = None  # "the total X in 2019": the row's cell is that total
    if operation is Operation.PERCENTAGE and _in_percent(match, columns):
        operation = None  # "the percentage of revenue from Apple": the cell says it
    return _row_claims(question, text, operation, match, columns, shown=shown)


def _whole_table_claims(
    question: Question,
    text: str,
    tables: list[tuple[Source, Table]],
    statistics: TermStatistics | None,
    *,
    shown: bool,
) -> list[Claim] | None:
    """The claims of a question about a table's rows together (its components,
    which item is highest), or None when the question asks about one row."""
    listed = section_claims(text, tables, statistics)
    if listed is not None:
        return listed
    if question.asks_explanation and not shown:
        return []
    return item_comparison_claims(question, text, tables, statistics)


def _pair_claims(
    question: Question,
    text: str,
    operation: Operation | None,
    tables: list[tuple[Source, Table]],
    statistics: TermStatistics | None,
) -> list[Claim] | None:
    """The claims of "ratio of A to B" and the like, or None unless `text` names
    two rows of one table that way."""
    pair = _pair(text) if operation in _PAIR_OPERATIONS else None
    if pair is not None:
        first, second = (best_row(analyse(part), tables, statistics) for part in pair)
        if first and second and first.table is second.table and first.row != second.row:
            return _two_rows(question, operation, first, second)
    return _listed_rows(question, operation, tables, statistics)


def _listed_rows(
    question: Question,
    operation: Operation | None,
    tables: list[tuple[Source, Table]],
    statistics: TermStatistics | None,
) -> list[Claim] | None:
    """The claims of "the total / average X of A, B and C in 2019" over the rows
    A, B and C of one table, or None unless the question lists such rows."""
    if operation is Operation.PERCENTAGE and SUM.search(question.text):
        operation = Operation.SUM  # "the total percentage of revenue from A and B"
    if operation not in (Operation.SUM, Operation.AVERAGE):
        return None
    parts = subject_parts(question.text)
    if not parts:
        return None
    matches = [best_row(analyse(part), tables, statistics) for part in parts]
    if not all(matches) or len({id(match.table) for match in matches}) != 1:
        return None
    rows = [match.row for match in matches]
    if len(set(rows)) != len(rows):
        return None
    table, first = matches[0].table, matches[0]
    columns = [
        column
        for column in columns_asked(question, table, first.row) or []
        if all(numeric(row, column) is not None for row in rows)
    ]
    if len(columns) != 1:
        return None
    operands = [operand(first, row, columns[0]) for row in rows]
    labels = ", ".join(row.label for row in rows)
    words = f"{_NAMES[operation].capitalize()} of {labels}, {table.columns[columns[0]]}"
    return _calculated(operation, operands, first, words)


def _row_claims(
    question: Question,
    text: str,
    operation: Operation | None,
    match: Match,
    columns: list[int],
    *,
    shown: bool,
) -> TableAnswer:
    """What the question asks of the row `match` found, in its `columns`."""
    compared = comparison_claims(text, match)
    if compared is not None:
        return TableAnswer(compared)
    if shown:
        return TableAnswer(years_shown(match))
    if operation is not None:
        return TableAnswer(_one_row(question, operation, match, columns))
    # A value asked for by the column it is in ("... in 2019") is that cell.
    if columns and (question.asks_number or names_a_column(text, match.table)):
        return TableAnswer([_cells(match, columns)], looked_up=True)
    return TableAnswer([])


def _in_percent(match: Match, columns: list[int]) -> bool:
    return bool(columns) and all(
        match.row.value(column).rstrip().endswith("%") for column in columns
    )


_PAIR_OPERATIONS = frozenset(
    {Operation.RATIO, Operation.PERCENTAGE, Operation.DIFFERENCE, Operation.SUM}
)


def _operation(text: str) -> Operation | None:
    if _PERCENTAGE_CHANGE.search(text):
        return Operation.PERCENTAGE_CHANGE
    if AVERAGE.search(text):
        return Operation.AVERAGE
    if _RATIO.search(text):
        return Operation.RATIO
    if _PERCENTAGE.search(text):
        return Operation.PERCENTAGE
    if _DIFFERENCE.search(text):
        return Operation.DIFFERENCE
    if _CHANGE.search(text):
        return Operation.CHANGE
    if SUM.search(text):
        return Operation.SUM
    return None


_OPERATION_PATTERNS = {
    Operation.SUM: SUM,
    Operation.AVERAGE: AVERAGE,
    Operation.CHANGE: _CHANGE,
    Operation.DIFFERENCE: _DIFFERENCE,
    Operation.RATIO: _RATIO,
}


def _names_operation(label: str, operation: Operation) -> bool:
    pattern = _OPERATION_PATTERNS.get(operation)
    return pattern is not None and bool(pattern.search(normalized(label)))


def _pair(text: str) -> tuple[str, str] | None:
    """The two rows of "ratio of A to B", "difference between A and B", ..."""
    for pattern in _PAIR:
        match = pattern.search(text)
        if match:
            a, b = (_trim_part(match[part]) for part in ("a", "b"))
            if a and b and not (YEAR.fullmatch(a) and YEAR.fullmatch(b)):
                return a, b
    return None


def _trim_part(part: str) -> str:
    """A row phrase without the year or period after it ("B in 2019")."""
    part = re.split(
        r"\b(?:in|for|as at|as of|at|during|of fiscal|on|between)\b\s*"
        rf"(?:fy|fiscal|year)?\s*{YEAR_DIGITS}\b.*$",
        part,
    )[0]
    return part.strip(" ,.?")


# --- Claims -------------------------------------------------------------------


_NAMES = {
    Operation.CHANGE: "change",
    Operation.PERCENTAGE_CHANGE: "percentage change",
    Operation.AVERAGE: "average",
    Operation.SUM: "total",
    Operation.DIFFERENCE: "difference",
    Operation.RATIO: "ratio",
    Operation.PERCENTAGE: "percentage",
}


def _calculated(
    operation: Operation, operands: list[Operand], match: Match, words: str
) -> list[Claim]:
    decimals = (
        2
        if operation not in (Operation.CHANGE, Operation.SUM, Operation.DIFFERENCE)
        else max((_places(operand.value) for operand in operands), default=0)
    )
    try:
        calculation = calculate(operation, operands, decimals=decimals)
    except CalculationError:
        return []
    return [
        Claim(
            text=f"{words}: {describe(calculation)}",
            source_ids=[match.source.id],
            quote=match.row.quote,
            calculation=calculation,
        )
    ]


def _places(value: Decimal) -> int:
    return max(0, -value.as_tuple().exponent)


def _one_row(
    question: Question, operation: Operation, match: Match, columns: list[int]
) -> list[Claim]:
    table, row = match.table, match.row
    if operation in (
        Operation.CHANGE,
        Operation.PERCENTAGE_CHANGE,
        Operation.DIFFERENCE,
    ):
        columns = with_previous_year(table, row, columns)
        if len(columns) != 2:
            return []
        if operation is Operation.DIFFERENCE:
            operation = Operation.CHANGE
        columns = ordered_by_time(table, columns)
    elif operation is Operation.AVERAGE:
        columns = (
            with_previous_year(table, row, columns)
            if columns
            else every_year_column(table, row)
        )
        if len(columns) < 2:
            return []
    elif operation is Operation.SUM:
        if len(columns) < 2:
            return []
    else:
        if len(columns) != 2:
            return []
    operands = [operand(match, row, column) for column in columns]
    names = [table.columns[c] or str(c) for c in columns]
    if operation in (Operation.CHANGE, Operation.PERCENTAGE_CHANGE):
        words = f"{row.label}, {_NAMES[operation]} from {names[0]} to {names[-1]}"
    else:
        words = f"{row.label}, {_NAMES[operation]} of {', '.join(names)}"
    return _calculated(operation, operands, match, words)


def _two_rows(
    question: Question, operation: Operation, first: Match, second: Match
) -> list[Claim]:
    table = first.table
    columns = [
        c
        for c in columns_asked(question, table, first.row) or []
        if numeric(second.row, c) is not None
    ]
    if not columns:
        shared = [
            c
            for c in table.value_columns
            if numeric(first.row, c) is not None and numeric(second.row, c) is not None
        ]
        columns = shared[:1] if len(shared) == 1 else []
    if len(columns) != 1:
        return []
    column = columns[0]
    operands = [
        operand(first, first.row, column),
        operand(first, second.row, column),
    ]
    name = table.columns[column]
    words = (
        f"{_NAMES[operation].capitalize()} of {first.row.label} and "
        f"{second.row.label}{f', {name}' if name else ''}"
    )
    return _calculated(operation, operands, first, words)


def _cells(match: Match, columns: list[int]) -> Claim:
    cjk = has_cjk(match.row.quote)
    colon, glue = ("：", "；") if cjk else (": ", "; ")
    parts = [
        f"{cell_label(match.table, match.row, column)}{colon}{match.row.value(column)}"
        for column in columns
    ]
    return Claim(
        text=glue.join(parts), source_ids=[match.source.id], quote=match.row.quote
    )
