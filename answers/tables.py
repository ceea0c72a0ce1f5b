"""Tables as our parsers write them (one `a | b | c` line per row) read back into
rows and columns: which rows are headers, what each column is called, which
cells of a row are its label and which its values."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from retrieval.lexicon import YEAR, YEAR_DIGITS

from .calculator import join_spaced_digits, parse_number

CELL_SEPARATOR = "|"
_NUMERIC = re.compile(r"\d")
_YEAR_ONLY = re.compile(
    r"^(?:(?:(?:fy|fiscal|year|q[1-4]|h[12])\s*'?(?:19|20)?\d\d|'\d\d|(?:19|20)\d\d)"
    r"(?:\s*/\s*\d{2,4})?|"
    rf"[a-z]+\.? \d{{1,2}},? {YEAR_DIGITS}|{YEAR_DIGITS}\s*年)$",
    re.IGNORECASE,
)
MAX_HEADER_ROWS = 3
_UNIT = re.compile(
    r"\b(?:in|of) (?:thousands|millions|billions)\b|^\(.*\)$|千元|万元|百万", re.I
)
_PERIOD = re.compile(
    r"^(?:(?:(?:fiscal )?years?|quarter|period|(?:three|six|nine|twelve) months)"
    r" ended |as (?:at|of) )?(?:[a-z]+\.? \d{1,2},? |\d{1,2} [a-z]+,? )?"
    rf"{YEAR_DIGITS}\s*(?:年)?[:：]?$",
    re.IGNORECASE,
)
_TOTAL_ROW = re.compile(r"total\b|合计|总计", re.IGNORECASE)
_SHORT_YEAR = re.compile(r"\b(?:fy|fiscal|financial year)\s?'?(\d\d)\b", re.IGNORECASE)


def is_row_line(line: str) -> bool:
    return " | " in line or line.startswith("| ") or line.endswith(" |")


def split_cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.split(CELL_SEPARATOR)]


@dataclass(frozen=True)
class Row:
    quote: str  # the row as the source writes it
    cells: tuple[str, ...]
    label: str  # what the row is about: its first cell, after its section's label
    section: str = ""  # the label of the section row above it, if any

    def value(self, column: int) -> str:
        return self.cells[column] if column < len(self.cells) else ""


@dataclass(frozen=True)
class Table:
    columns: tuple[str, ...]  # a label per column ("" where the header says none)
    rows: tuple[Row, ...]  # data rows, in order
    header_quotes: tuple[str, ...]  # the header rows as written
    caption: str = ""  # the sentence that says what the table shows

    @property
    def value_columns(self) -> range:
        return range(1, len(self.columns))


def read_table(lines: Sequence[str]) -> Table:
    """The header rows (leading rows without values other than years and dates),
    column labels joined down those rows, and data rows labelled by their first
    cell, with the label of a section row (a label without values) before it."""
    cells = [split_cells(line) for line in lines]
    width = max(len(row) for row in cells)
    cells = [row + [""] * (width - len(row)) for row in cells]
    header_count = _header_rows(cells)
    columns = _column_labels(cells[:header_count], width)
    rows: list[Row] = []
    section = ""
    for line, row in zip(lines[header_count:], cells[header_count:], strict=True):
        if row[0] and not any(row[1:]):
            section = row[0].rstrip(":：")
            continue
        label = row[0] or section
        if section and row[0] and section not in row[0]:
            label = f"{section} {row[0]}"
        rows.append(Row(quote=line, cells=tuple(row), label=label, section=section))
        if _TOTAL_ROW.match(row[0]):
            section = ""  # a section's total closes it ("Total current")
    return Table(tuple(columns), tuple(rows), tuple(lines[:header_count]))


def _header_rows(cells: list[list[str]]) -> int:
    """How many leading rows are headers: captions (a label alone) and rows whose
    value cells hold no amounts, only words, years and dates ("December 31",
    "2019", "U.S. $ in thousands").

    A chunk may start in the middle of a table: its first row is then data, which
    shows as amounts like those of the rows below.
    """
    if len(cells) < 2:
        return 0
    count = 0
    columns_named = False
    for row in cells[: MAX_HEADER_ROWS + 1]:
        if not any(row) or any(_is_amount(cell) for cell in row[1:] if cell):
            break
        if columns_named and _is_section(row):
            break
        columns_named = columns_named or any(row[1:])
        count += 1
    if count == len(cells) or not any(
        _is_amount(cell) for row in cells[count:] for cell in row[1:]
    ):
        # Text only: the first row names the columns when the others differ from it.
        return 1 if _looks_like_header(cells[0], cells[1:]) else 0
    return count


def _is_section(row: list[str]) -> bool:
    """A label alone below the column names ("Other current assets:") opens the
    first group of rows, unless it says the unit or the period of the columns."""
    label = row[0]
    return (
        bool(label)
        and not any(row[1:])
        and not _UNIT.search(label)
        and not _PERIOD.match(label)
    )


def _is_amount(cell: str) -> bool:
    """A number the way tables write amounts ("1,250", "(3.9)", "$ 12", "4%"), but
    not a year, which names a column."""
    return parse_number(cell) is not None and not _YEAR_ONLY.match(cell)


def _looks_like_header(first: list[str], others: list[list[str]]) -> bool:
    """A first row without numbers, or whose value cells are all years
    ("OWASP Top Ten | 2003 | 2004 | 2007"), names the columns of rows that hold
    numbers."""
    numbers = [n for cell in first for n in re.findall(r"\d+(?:\.\d+)?", cell)]
    if not numbers:
        return True
    others_have_numbers = any(re.search(r"\d", " ".join(row)) for row in others)
    values = [cell for cell in first[1:] if cell]
    return (
        others_have_numbers
        and bool(values)
        and all(_YEAR_ONLY.match(cell) for cell in values)
    )


def _column_labels(header: list[list[str]], width: int) -> list[str]:
    """A label per column: each header row's cell, where an upper row with a single
    cell over the value columns (a caption like "Years ended June 30,") covers all
    of them and a cell of a wider upper row spans the empty cells to its right."""
    labels = [[] for _ in range(width)]
    for index, row in enumerate(header):
        filled = list(row)
        last = index == len(header) - 1
        values = [cell for cell in row[1:] if cell]
        if not last and len(values) == 1 and width > 2:
            filled[1:] = [values[0]] * (width - 1)
        elif not last:
            for column in range(2, width):
                if not filled[column] and filled[column - 1]:
                    filled[column] = filled[column - 1]
        for column, cell in enumerate(filled):
            if cell and cell not in labels[column]:
                labels[column].append(cell)
    return [with_full_year(join_spaced_digits(" ".join(parts))) for parts in labels]


def with_full_year(text: str) -> str:
    """Adds the year written out to a label such as "FY19", so that "2019" finds it."""
    if YEAR.search(text):
        return text
    short = _SHORT_YEAR.search(text)
    if short is None:
        return text
    year = int(short.group(1))
    return f"{text} ({1900 + year if year >= 50 else 2000 + year})"
