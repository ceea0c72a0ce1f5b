"""Questions that compare a table row's cells across its years: which year is
highest or lowest, which years (or how many) are above or below an amount, which
years the table gives."""

from __future__ import annotations

import re
from decimal import Decimal

from .calculator import calculate, describe, parse_number
from .table_lookup import YEAR, Match, numeric, operand
from .tables import Row, Table
from .types import Claim, Operation

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


def asks_years_shown(text: str) -> bool:
    """ "Which years does the table cover": asked of the columns, not compared."""
    return bool(_WHICH_YEARS_SHOWN.search(text) and not _threshold(text))


def comparison_claims(text: str, match: Match) -> list[Claim] | None:
    """The claims of a question comparing the cells of the row `match` found,
    or None when the question does not compare."""
    threshold = _threshold(text)
    if threshold is not None and (
        _WHICH_YEAR.search(text) or _HOW_MANY_YEARS.search(text)
    ):
        return _beyond(match, *threshold, count=bool(_HOW_MANY_YEARS.search(text)))
    if _WHICH_YEAR.search(text) and (_MOST.search(text) or _LEAST.search(text)):
        return _extreme(match, bool(_MOST.search(text)))
    return None


def _threshold(text: str) -> tuple[bool, Decimal] | None:
    """(below, the amount) of "less than 1,000", "exceed $2,000"; the amount is
    taken in the table's own unit, as a question about the table writes it."""
    match = _THRESHOLD.search(text)
    if match is None:
        return None
    amount = parse_number(match["number"].strip())
    if amount is None:
        return None
    return match["direction"].lower() in _BELOW, amount


def _year_cells(table: Table, row: Row) -> list[tuple[Decimal, int]]:
    return [
        (value, column)
        for column in table.value_columns
        if (value := numeric(row, column)) is not None
        and YEAR.search(table.columns[column])
    ]


def _beyond(match: Match, below: bool, amount: Decimal, *, count: bool) -> list[Claim]:
    """The years whose cell is below (or above) `amount`, and how many there are."""
    table, row = match.table, match.row
    cells = _year_cells(table, row)
    if len(cells) < 2:
        return []
    chosen = [
        (value, column)
        for value, column in cells
        if (value < amount if below else value > amount)
    ]
    if not chosen:
        return []
    listed = "; ".join(f"{table.columns[c]}: {row.value(c)}" for _, c in chosen)
    word = "below" if below else "above"
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
