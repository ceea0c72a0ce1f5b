"""Unruled tables, as financial statements are set: rows of a label and amounts,
the amounts right-aligned in columns, with no grid.

Found among the lines of a page's paragraphs (`pdf_layout.glyph_lines`), so no
second pass over the glyphs: runs of baselines whose cells after the first are all
amounts and line up into columns (section rows such as "Operating expenses:"
between them), with up to `_MAX_HEADER_ROWS` header rows above (years, "Years
ended June 30,") over those columns. A currency sign set apart from its amount
joins it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import islice

from .pdf_layout import Line

# Rows of cells, each cell the lines of its text.
TableRows = list[list[list[str]]]

_MAX_HEADER_ROWS = 3
_MAX_ROW_STEP = 3.0  # baseline step, in font sizes, still inside one table
_MAX_HEADER_STEP = 2.5
_MAX_LABEL_ONLY_ROWS = 2  # section rows ("Operating expenses:") inside a table
_MAX_LABEL_CHARS = 80
_MAX_HEADER_CELL_CHARS = 40
_MIN_BODY_ROWS = 2
_AMOUNT = re.compile(
    r"^(?:[-−–+]?\(?[-−–]?(?:[$€£¥]\s?)?[-−–]?\(?\d[\d,]*(?:\.\d+)?\)?\s?%?\)?"
    r"|[-−–—]+|n/?a)$",
    re.IGNORECASE,
)
_CURRENCY = frozenset("$€£¥")


@dataclass(slots=True)
class _Cell:
    start: float
    end: float
    text: str
    lines: list[Line]
    is_amount: bool = field(init=False)  # asked of each cell many times

    def __post_init__(self) -> None:
        self.is_amount = _AMOUNT.match(self.text) is not None


@dataclass(slots=True)
class _Row:
    across: float
    size: float
    cells: list[_Cell]


def unruled_tables(paragraphs: list[list[Line]]) -> list[tuple[TableRows, list[Line]]]:
    """Tables of aligned amounts found among the lines of `paragraphs`, each with
    the lines it takes from them."""
    amounts = (
        1
        for lines in paragraphs
        for line in lines
        if line.direction == 0 and _AMOUNT.match(line.text)
    )
    if sum(islice(amounts, _MIN_BODY_ROWS)) < _MIN_BODY_ROWS:
        return []  # each body row has an amount of its own: no table here
    rows = _baseline_rows(paragraphs)
    tables: list[tuple[TableRows, list[Line]]] = []
    index = taken = 0  # rows before `taken` belong to a table already
    while index < len(rows):
        if not _is_body(rows[index]):
            index += 1
            continue
        end = _run_end(rows, index)
        table = _read_unruled(rows, index, end, taken)
        if table is not None:
            tables.append(table)
            taken = end
        index = end
    return tables


def _baseline_rows(paragraphs: list[list[Line]]) -> list[_Row]:
    """Horizontal lines grouped by baseline, top to bottom, cells left to right."""
    lines = [line for lines in paragraphs for line in lines if line.direction == 0]
    if len(lines) < 2 * _MIN_BODY_ROWS:
        return []
    lines.sort(key=lambda line: (-line.across, line.start))
    rows: list[_Row] = []
    row: _Row | None = None
    for line in lines:
        text, across, size = line.text, line.across, line.size
        cell = _Cell(line.start, line.end, text, [line])
        if row is not None and abs(row.across - across) <= 0.3 * (
            size if size > row.size else row.size  # max(), without a call
        ):
            row.cells.append(cell)
            row.size = size if size > row.size else row.size
        else:
            row = _Row(across, size, [cell])
            rows.append(row)
    for row in rows:
        if len(row.cells) > 1:
            row.cells.sort(key=lambda cell: cell.start)
            row.cells = _currency_joined(row.cells)
    return rows


def _currency_joined(cells: list[_Cell]) -> list[_Cell]:
    """A "$" set apart from its amount ("$      1,496.5") joins it."""
    joined: list[_Cell] = []
    for cell in cells:
        previous = joined[-1] if joined else None
        if previous is not None and previous.text in _CURRENCY:
            joined[-1] = _Cell(
                previous.start,
                cell.end,
                f"{previous.text} {cell.text}",
                previous.lines + cell.lines,
            )
        else:
            joined.append(cell)
    return joined


def _is_body(row: _Row) -> bool:
    """Cells after the first are all amounts (the first is a label or one more)."""
    cells = row.cells
    return (
        len(cells) >= 2
        and len(cells[0].text) <= _MAX_LABEL_CHARS
        and all(cell.is_amount for cell in cells[1:])
    )


def _is_label_only(row: _Row, value_start: float) -> bool:
    cells = row.cells
    return (
        len(cells) == 1
        and not cells[0].is_amount
        and len(cells[0].text) <= _MAX_LABEL_CHARS
        and cells[0].end < value_start
    )


def _run_end(rows: list[_Row], start: int) -> int:
    """End of the run of body rows from `start`, with section rows between them."""
    value_start = min(_value_cells(rows[start])[0].start, float("inf"))
    end = start + 1
    index = start + 1
    label_only = 0
    while index < len(rows):
        row, above = rows[index], rows[index - 1]
        if above.across - row.across > _MAX_ROW_STEP * max(row.size, above.size):
            break
        if _is_body(row):
            value_start = min(value_start, _value_cells(row)[0].start)
            label_only = 0
            end = index + 1
        elif _is_label_only(row, value_start) and label_only < _MAX_LABEL_ONLY_ROWS:
            label_only += 1
        else:
            break
        index += 1
    return end


def _value_cells(row: _Row) -> list[_Cell]:
    cells = row.cells
    return cells if cells[0].is_amount else cells[1:]


def _read_unruled(
    rows: list[_Row], start: int, end: int, taken: int
) -> tuple[TableRows, list[Line]] | None:
    body = rows[start:end]
    if sum(1 for row in body if _is_body(row)) < _MIN_BODY_ROWS:
        return None
    columns = _columns([cell for row in body for cell in _value_cells(row)])
    if columns is None:
        return None
    value_start = columns[0][0]
    labels = [row.cells[0] for row in body if not row.cells[0].is_amount]
    label_end = max((cell.end for cell in labels), default=value_start)
    if label_end > value_start:
        return None  # a "label" reaching into the amounts: not a table
    header = _header_rows(rows, start, taken, value_start, label_end)
    # Each cell's column first: a cell between columns refuses the table before
    # any row of (maybe hundreds of) empty cells is made.
    placed: list[tuple[_Row, list[int]]] = []
    for index, row in enumerate([*header, *body]):
        caption = index < len(header) and _is_caption(row, columns, value_start)
        row_columns: list[int] = []
        for cell in row.cells:
            if cell.end <= value_start:
                column = 0
            else:
                column = 1 if caption else _column_of(cell, columns)
            if column is None:
                return None
            row_columns.append(column)
        placed.append((row, row_columns))
    table_rows: list[list[list[str]]] = []
    lines: list[Line] = []
    for row, row_columns in placed:
        cells: list[list[str]] = [[] for _ in range(len(columns) + 1)]
        for cell, column in zip(row.cells, row_columns, strict=True):
            cells[column].append(cell.text)
            lines.extend(cell.lines)
        table_rows.append(cells)
    return table_rows, lines


def _columns(cells: list[_Cell]) -> list[tuple[float, float]] | None:
    """Value columns: the spans of amounts that overlap, left to right; None when
    they do not line up (no column holds amounts of two rows)."""
    spans = sorted((cell.start, cell.end) for cell in cells)
    columns: list[tuple[float, float]] = []
    counts: list[int] = []
    for start, end in spans:
        if columns and start <= columns[-1][1]:
            columns[-1] = (columns[-1][0], max(columns[-1][1], end))
            counts[-1] += 1
        else:
            columns.append((start, end))
            counts.append(1)
    if not columns or max(counts) < _MIN_BODY_ROWS:
        return None
    return columns


def _is_caption(
    row: _Row, columns: list[tuple[float, float]], value_start: float
) -> bool:
    """A header row with one cell over several value columns ("Years ended June
    30,"): it spans them from the first, wherever its text is centred."""
    over = [cell for cell in row.cells if cell.end > value_start]
    if len(over) != 1:
        return False
    cell = over[0]
    spanned = [c for c in columns if cell.start <= c[1] and cell.end >= c[0]]
    return len(spanned) > 1


def _column_of(cell: _Cell, columns: list[tuple[float, float]]) -> int | None:
    """1 + the first column the cell overlaps, or the nearest (a header cell
    centred over a narrower column of amounts)."""
    for index, (start, end) in enumerate(columns, start=1):
        if cell.start <= end and cell.end >= start:
            return index
    middle = (cell.start + cell.end) / 2
    return 1 + min(
        range(len(columns)),
        key=lambda index: abs((columns[index][0] + columns[index][1]) / 2 - middle),
    )


def _header_rows(
    rows: list[_Row], start: int, taken: int, value_start: float, label_end: float
) -> list[_Row]:
    """Up to `_MAX_HEADER_ROWS` rows just above the body whose cells are short and
    each either in the label column or over the value columns, one at least; none
    before `taken`, which belong to the table above."""
    header: list[_Row] = []
    index = start - 1
    below = rows[start]
    while index >= taken and len(header) < _MAX_HEADER_ROWS:
        row = rows[index]
        step = row.across - below.across
        if step > _MAX_HEADER_STEP * max(row.size, below.size):
            break
        in_label = [cell for cell in row.cells if cell.end <= value_start]
        over_values = [
            cell
            for cell in row.cells
            if cell.end > value_start and cell.start >= label_end
        ]
        if (
            not over_values
            or len(over_values) + len(in_label) != len(row.cells)
            or any(len(cell.text) > _MAX_HEADER_CELL_CHARS for cell in row.cells)
        ):
            break
        header.insert(0, row)
        below = row
        index -= 1
    return header
