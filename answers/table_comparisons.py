"""Questions that compare a table's cells: which year of a row is highest or
lowest, which years (or how many) are above or below an amount, which years the
table gives; and which item is highest or lowest: the row with the largest cell
of the column asked ("Which contractual obligation has the highest total?"), or
the column with the largest cell of the row asked ("In which segment were net
balances at September 30, 2018 the largest?")."""

from __future__ import annotations

import re
from collections.abc import Sequence
from decimal import Decimal
from typing import NamedTuple

from retrieval.lexicon import YEAR

from .calculator import calculate, describe, parse_number
from .question import Question, analyse
from .ranking import Matcher
from .table_lookup import (
    MIN_QUESTION_SHARE,
    OPERATION_WORDS,
    Match,
    best_row,
    numeric,
    operand,
    weighted_share,
    years_asked,
)
from .tables import Row, Table
from .types import Claim, Operation, Source, TermStatistics

_WHICH_YEAR = re.compile(r"\b(?:which|what) (?:years?|periods?)\b|哪一?年|哪些年", re.I)
# "Which years does the table provide information for ...", "In which years was X
# calculated": the periods the table's columns are.
_WHICH_YEARS_SHOWN = re.compile(
    r"\b(?:which|what) (?:years|periods|fiscal years)\b(?!.*\b(?:than|highest|lowest"
    r"|larger|smaller|higher|lower|more|less)\b)",
    re.I,
)
_HOW_MANY_YEARS = re.compile(r"\bhow many (?:of the )?(?:years|periods)\b|几年", re.I)
_THRESHOLD = re.compile(
    r"\b(?P<direction>less|lower|below|under|fewer|smaller|greater|more|higher|above"
    r"|over|larger|exceed(?:ed|s|ing)?)\b(?:\s+than)?\s*"
    r"(?P<number>[-−$€£(]*\s*\d[\d,]*(?:\.\d+)?\)?%?)",
    re.I,
)
_BELOW = frozenset({"less", "lower", "below", "under", "fewer", "smaller"})
_MOST = re.compile(
    r"\b(?:highest|largest|greatest|most|higher|larger|greater|more|bigger|biggest)\b"
    r"|最高|最大|最多|更高|更大|更多",
    re.I,
)
_LEAST = re.compile(
    r"\b(?:lowest|smallest|least|lower|smaller|less|fewer)\b|最低|最小|最少|更低|更小",
    re.I,
)
# "Which segment ...", "What is the component that ...": an item, not a year.
_WHICH_ITEM = re.compile(
    r"\bwhich\b|\bwhat (?:is|was|are|were) the [\w\s-]+? (?:that|which|with)\b"
    r"|哪个|哪一个|哪些",
    re.I,
)
# Superlatives, and comparatives that are not a threshold ("less than one year").
_ITEM_MOST = re.compile(
    r"\b(?:highest|largest|greatest|most|biggest|(?:higher|larger|greater|bigger)"
    r"(?! than))\b|最高|最大|最多",
    re.I,
)
_ITEM_LEAST = re.compile(
    r"\b(?:lowest|smallest|least|fewest|(?:lower|smaller)(?! than))\b|最低|最小|最少",
    re.I,
)
_ORDINAL = re.compile(r"\b(?:second|third|fourth|fifth|next)\b|第[二三四五]", re.I)
_TOTAL = re.compile(r"\btotal\b|合计|总计", re.I)


def asks_years_shown(text: str) -> bool:
    """ "Which years does the table cover": asked of the columns, not compared."""
    return bool(_WHICH_YEARS_SHOWN.search(text) and not threshold_in(text))


def comparison_claims(text: str, match: Match) -> list[Claim] | None:
    """The claims of a question comparing the cells of the row `match` found,
    or None when the question does not compare."""
    threshold = threshold_in(text)
    if threshold is not None and (
        _WHICH_YEAR.search(text) or _HOW_MANY_YEARS.search(text)
    ):
        return _beyond(match, threshold, count=bool(_HOW_MANY_YEARS.search(text)))
    if _WHICH_YEAR.search(text) and (_MOST.search(text) or _LEAST.search(text)):
        return _extreme(match, bool(_MOST.search(text)))
    return None


class Threshold(NamedTuple):
    below: bool
    amount: Decimal  # in the table's own unit, as a question about it writes it
    percent: bool  # "exceed 20%": compared with the percentages, not the amounts

    def holds(self, value: Decimal | None) -> bool:
        if value is None:
            return False
        return value < self.amount if self.below else value > self.amount


def threshold_in(text: str) -> Threshold | None:
    """The threshold of "less than 1,000", "exceed $2,000", "above 20%"."""
    match = _THRESHOLD.search(text)
    if match is None:
        return None
    number = match["number"].strip()
    amount = parse_number(number)
    if amount is None:
        return None
    return Threshold(match["direction"].lower() in _BELOW, amount, number.endswith("%"))


def _is_percentage(table: Table, row: Row, column: int) -> bool:
    return "%" in row.value(column) or "%" in table.columns[column]


def _year_cells(table: Table, row: Row) -> list[tuple[Decimal, int]]:
    return [
        (value, column)
        for column in table.value_columns
        if (value := numeric(row, column)) is not None
        and YEAR.search(table.columns[column])
    ]


def _beyond(match: Match, threshold: Threshold, *, count: bool) -> list[Claim]:
    """The years whose cell is below (or above) the threshold, and how many
    there are; a percentage is compared with the row's percentages only."""
    table, row = match.table, match.row
    cells = [
        (value, column)
        for value, column in _year_cells(table, row)
        if _is_percentage(table, row, column) == threshold.percent
    ]
    if len(cells) < 2:
        return []
    chosen = [(value, column) for value, column in cells if threshold.holds(value)]
    if not chosen:
        return []
    listed = "; ".join(f"{table.columns[c]}: {row.value(c)}" for _, c in chosen)
    word = "below" if threshold.below else "above"
    text = f"{row.label} is {word} the amount asked in {listed}"
    calculation = None
    if count:
        calculation = calculate(
            Operation.COUNT, [operand(match, row, c) for _, c in chosen], decimals=0
        )
        text += f"; years: {describe(calculation)}"
    return [
        Claim(
            text=text,
            source_ids=[match.source.id],
            quote=row.quote,
            calculation=calculation,
        )
    ]


def years_shown(match: Match) -> list[Claim]:
    table, row = match.table, match.row
    years = list(
        dict.fromkeys(
            found.group()
            for _, column in _year_cells(table, row)
            if (found := YEAR.search(table.columns[column]))
        )
    )
    if len(years) < 2:
        return []
    listed = f"{', '.join(years[:-1])} and {years[-1]}"
    return [
        Claim(
            text=f"{row.label} is given for {listed}"
            if match.score
            else f"The table covers {listed}",
            source_ids=[match.source.id],
            quote=row.quote,
        )
    ]


def _extreme(match: Match, most: bool) -> list[Claim]:
    table, row = match.table, match.row
    cells = _year_cells(table, row)
    if len(cells) < 2:
        return []
    _, column = (max if most else min)(cells)
    others = "; ".join(
        f"{table.columns[c]}: {row.value(c)}" for _, c in cells if c != column
    )
    word = "highest" if most else "lowest"
    return [
        Claim(
            text=(
                f"{row.label} is {word} in {table.columns[column]} "
                f"({row.value(column)}; {others})"
            ),
            source_ids=[match.source.id],
            quote=row.quote,
        )
    ]


def item_comparison_claims(
    question: Question,
    text: str,
    tables: Sequence[tuple[Source, Table]],
    statistics: TermStatistics | None,
) -> list[Claim] | None:
    """The claims of "which item is highest (or lowest)", or None when the
    question does not ask that; [] when no table answers it."""
    most, least = _ITEM_MOST.search(text), _ITEM_LEAST.search(text)
    if (
        not _WHICH_ITEM.search(text)
        or _WHICH_YEAR.search(text)
        or _HOW_MANY_YEARS.search(text)
        or threshold_in(text)
        or _ORDINAL.search(text)
        or not (most or least)
    ):
        return None
    highest = bool(most) and not (least and least.start() < most.start())
    match = best_row(question, list(tables), statistics)
    if match is not None and not _TOTAL.search(match.row.label):
        return _extreme_column(match, highest)
    return _extreme_row(question, text, tables, statistics, highest)


def _extreme_column(match: Match, highest: bool) -> list[Claim]:
    """The column (an item, not a year or a total) holding the row's extreme."""
    table, row = match.table, match.row
    cells = [
        (value, column)
        for column in table.value_columns
        if (value := numeric(row, column)) is not None
        and "%" not in row.value(column)
        and table.columns[column]
        and not YEAR.search(table.columns[column])
        and not _TOTAL.search(table.columns[column])
    ]
    if len(cells) < 2:
        return []
    ranked = sorted(cells, reverse=highest)
    word = "highest" if highest else "lowest"
    others = "; ".join(f"{table.columns[c]}: {row.value(c)}" for _, c in ranked[1:3])
    best = ranked[0][1]
    return [
        Claim(
            text=(
                f"{table.columns[best]} has the {word} {row.label}: "
                f"{row.value(best)} ({others})"
            ),
            source_ids=[match.source.id],
            quote=row.quote,
        )
    ]


def _extreme_row(
    question: Question,
    text: str,
    tables: Sequence[tuple[Source, Table]],
    statistics: TermStatistics | None,
    highest: bool,
) -> list[Claim]:
    """The row (not a total) with the extreme cell of the one column the
    question names, in the table whose caption and labels name the question."""
    wanted = [
        term
        for term in question.content_terms
        if term.text not in OPERATION_WORDS and not YEAR.fullmatch(term.text)
    ]
    best: tuple[float, Source, Table, int] | None = None
    for source, table in tables:
        column = _column_named(text, table)
        if column is None:
            continue
        named = Matcher(
            " ".join(
                (table.caption, *table.columns, *{row.section for row in table.rows})
            )
        )
        share = weighted_share(wanted, named, statistics) if wanted else 0.0
        if share >= MIN_QUESTION_SHARE and (best is None or share > best[0]):
            best = (share, source, table, column)
    if best is None:
        return []
    _, source, table, column = best
    rows = [
        (value, index)
        for index, row in enumerate(table.rows)
        if row.cells[0]
        and not _TOTAL.search(row.label)
        and (value := numeric(row, column)) is not None
    ]
    if len(rows) < 2:
        return []
    ranked = [table.rows[index] for _, index in sorted(rows, reverse=highest)]
    word = "highest" if highest else "lowest"
    name = table.columns[column]
    others = "; ".join(f"{row.cells[0]}: {row.value(column)}" for row in ranked[1:3])
    top = ranked[0]
    said = f"{top.cells[0]} has the {word} {name}: {top.value(column)} ({others})"
    return [Claim(text=said, source_ids=[source.id], quote=top.quote)]


def _column_named(text: str, table: Table) -> int | None:
    """The one value column the question names: by its year, else by every word
    that sets its label apart from the other columns' ("Total" of "Payments Due
    by Period Total")."""
    years = years_asked(text)
    if years:
        found = [
            column
            for column in table.value_columns
            if all(year in table.columns[column] for year in years)
        ]
        return found[0] if len(found) == 1 else None
    asked = Matcher(text)
    words = {
        column: {
            term.text
            for term in analyse(table.columns[column]).terms
            if not YEAR.fullmatch(term.text)
        }
        for column in table.value_columns
    }
    shared = set.intersection(*words.values()) if words else set()
    found = [
        column
        for column, label_words in words.items()
        if (own := label_words - shared) and all(asked.has(word) for word in own)
    ]
    return found[0] if len(found) == 1 else None
