"""PDF tables read as rows of cells, the rest of the page as paragraphs.

Two kinds of table, both found from what one pdfminer pass already gives:

- ruled: a grid of drawn lines and rectangles. `TableCollector` records the page's
  straight horizontal and vertical path segments as it interprets the page, and
  only a page that has some goes through pdfplumber's grid finder (its "lines"
  strategy, fed with our segments instead of a second parse). Each glyph goes to
  the cell under its centre; a cell spanning columns leaves the columns after it
  empty, so every value stays under its header cell.
- unruled, as financial statements are set: rows of a label and amounts, the
  amounts right-aligned in columns. Found among the lines of the paragraphs: runs
  of baselines whose cells after the first are all amounts and line up into
  columns, with up to `_MAX_HEADER_ROWS` header rows above (years, "Years ended
  June 30,") over those columns.

A table's rows replace its text in the paragraphs and take the place of its first
glyph (ruled) or first line (unruled) in reading order. A page where neither is
found gives exactly the paragraphs of `glyph_paragraphs`. Why not pdfplumber's own
"text" strategy, and what all this costs: docs/benchmarks.md, "PDF tables".
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pdfplumber.table import (
    Table,
    cells_to_tables,
    edges_to_intersections,
    intersections_to_cells,
    merge_edges,
)

from ..blocks import PARAGRAPH, TABLE_ROW, Block, table_row_text
from .pdf_layout import Glyph, GlyphCollector, Line, glyph_lines

if TYPE_CHECKING:
    from pdfminer.pdfinterp import PDFGraphicState, PDFResourceManager
    from pdfminer.pdfpage import PDFPage
    from pdfminer.utils import Matrix, PathSegment

# (x0, top, x1, bottom) with top = -y, so that top grows down the page as in
# pdfplumber.
Box = tuple[float, float, float, float]

_AXIS_SLACK = 0.5  # points a ruling may lean and still be horizontal or vertical
_MIN_RULING = 3.0  # shorter segments are glyph parts or dots, not rulings
_MAX_RULINGS = 4000  # beyond: a drawing, not a table (and the grid search is n²)
_MAX_EDGES = 400  # merged edges a page may have for the grid search
_TOLERANCE = 3.0  # pdfplumber's snap, join and intersection tolerance
_GLYPH_MIDDLE = 0.3  # a glyph's vertical centre above its baseline, in font sizes

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


class TableCollector(GlyphCollector):
    """`GlyphCollector` that also records the page's rulings: the straight
    horizontal and vertical segments of its paths, as boxes (`rulings`)."""

    def __init__(self, rsrcmgr: PDFResourceManager) -> None:
        super().__init__(rsrcmgr)
        self.rulings: list[Box] = []

    def begin_page(self, page: PDFPage, ctm: Matrix) -> None:
        super().begin_page(page, ctm)
        self.rulings = []

    def paint_path(
        self,
        graphicstate: PDFGraphicState,
        stroke: bool,
        fill: bool,
        evenodd: bool,
        path: Sequence[PathSegment],
    ) -> None:
        rulings = self.rulings
        if len(rulings) > _MAX_RULINGS:
            return
        a, b, c, d, e, f = self.ctm
        start = current = None
        for segment in path:
            operator = segment[0]
            if operator == "h":
                point = start
            elif len(segment) >= 3:
                x, y = segment[-2], segment[-1]
                point = (x * a + y * c + e, x * b + y * d + f)
            else:
                continue
            if operator == "m":
                start = point
            elif operator in ("l", "h") and current is not None and point is not None:
                _add_ruling(rulings, current, point)
            current = point


def _add_ruling(
    rulings: list[Box], one: tuple[float, float], other: tuple[float, float]
) -> None:
    (x0, y0), (x1, y1) = one, other
    if abs(y1 - y0) <= _AXIS_SLACK and abs(x1 - x0) >= _MIN_RULING:
        rulings.append((min(x0, x1), -y0, max(x0, x1), -y0))
    elif abs(x1 - x0) <= _AXIS_SLACK and abs(y1 - y0) >= _MIN_RULING:
        rulings.append((x0, -max(y0, y1), x0, -min(y0, y1)))


def page_blocks(
    glyphs: list[Glyph],
    rulings: list[Box],
    *,
    page: int,
    clean: Callable[[list[str]], str],
) -> list[Block]:
    """The page's paragraphs and table rows in reading order; `clean` turns the
    lines of a paragraph or a cell into its text."""
    blocks: list[Block] = []
    for part in page_parts(glyphs, rulings):
        if isinstance(part, PdfTable):
            for cells in part.rows:
                text = table_row_text([" ".join(clean(c).split()) for c in cells])
                if text:
                    blocks.append(Block(text=text, page=page, kind=TABLE_ROW))
        else:
            text = clean(part)
            if text:
                blocks.append(Block(text=text, page=page, kind=PARAGRAPH))
    return blocks


@dataclass(frozen=True)
class PdfTable:
    """Rows of cells, each cell the lines of its text."""

    rows: list[list[list[str]]]


def page_parts(glyphs: list[Glyph], rulings: list[Box]) -> list[list[str] | PdfTable]:
    """Paragraphs (their lines) and tables, in reading order."""
    grids = _ruled_grids(rulings) if len(rulings) >= 4 else []
    if not grids:
        return _paragraphs_and_unruled_tables(glyphs)
    tables, outside = _fill_grids(grids, glyphs)
    parts: list[list[str] | PdfTable] = []
    # A table sits where its first glyph was drawn: the text drawn before it first.
    slot_starts = [first for first, _ in tables]
    slots: list[list[Glyph]] = [[] for _ in range(len(tables) + 1)]
    for index, glyph in outside:
        slots[bisect_right(slot_starts, index)].append(glyph)
    parts.extend(_paragraphs_and_unruled_tables(slots[0]))
    for (_, table), slot in zip(tables, slots[1:], strict=True):
        parts.append(table)
        parts.extend(_paragraphs_and_unruled_tables(slot))
    return parts


# --- Ruled tables ----------------------------------------------------------------


def _ruled_grids(rulings: list[Box]) -> list[list[list[Box | None]]]:
    """Each grid found as rows of cells (None where a spanning cell covers it)."""
    edges = [
        {
            "x0": x0,
            "x1": x1,
            "top": top,
            "bottom": bottom,
            "doctop": top,
            "width": x1 - x0,
            "height": bottom - top,
            "orientation": "h" if top == bottom else "v",
        }
        for x0, top, x1, bottom in rulings
    ]
    edges = merge_edges(edges, _TOLERANCE, _TOLERANCE, _TOLERANCE, _TOLERANCE)
    edges = [e for e in edges if max(e["width"], e["height"]) >= _MIN_RULING]
    if len(edges) > _MAX_EDGES:
        return []
    horizontal = sum(1 for e in edges if e["orientation"] == "h")
    if horizontal < 2 or len(edges) - horizontal < 2:
        return []
    intersections = edges_to_intersections(edges, _TOLERANCE, _TOLERANCE)
    grids = []
    for cells in cells_to_tables(intersections_to_cells(intersections)):
        rows = [row.cells for row in Table(None, cells).rows]
        if len(rows) >= 2 and len(rows[0]) >= 2:
            grids.append(rows)
    return grids


def _fill_grids(
    grids: list[list[list[Box | None]]], glyphs: list[Glyph]
) -> tuple[list[tuple[int, PdfTable]], list[tuple[int, Glyph]]]:
    """Tables (with the index of their first glyph, in that order) and the
    glyphs outside them, with their indexes."""
    found: list[tuple[int, list[list[list[Glyph]]]]] = []
    for grid in grids:
        found.append((-1, [[[] for _ in row] for row in grid]))
    outside: list[tuple[int, Glyph]] = []
    for index, glyph in enumerate(glyphs):
        place = _cell_of(grids, glyph) if glyph[1] == 0 else None
        if place is None:
            outside.append((index, glyph))
            continue
        table, row, column = place
        first, cells = found[table]
        if first < 0:
            found[table] = (index, cells)
        cells[row][column].append(glyph)
    tables = [
        (
            first,
            PdfTable(
                [[_cell_lines(cell) for cell in row] for row in cells],
            ),
        )
        for first, cells in found
        if first >= 0
    ]
    return sorted(tables, key=lambda table: table[0]), outside


def _cell_of(
    grids: list[list[list[Box | None]]], glyph: Glyph
) -> tuple[int, int, int] | None:
    _, _, start, end, across, size = glyph
    x = (start + end) / 2
    top = -(across + _GLYPH_MIDDLE * size)
    for table, grid in enumerate(grids):
        for row_index, row in enumerate(grid):
            for column, cell in enumerate(row):
                if cell is not None and _inside(cell, x, top):
                    return table, row_index, column
    return None


def _inside(box: Box, x: float, top: float) -> bool:
    x0, box_top, x1, bottom = box
    return x0 <= x < x1 and box_top <= top < bottom


def _cell_lines(glyphs: list[Glyph]) -> list[str]:
    return [line.text for lines in glyph_lines(glyphs) for line in lines]


# --- Unruled tables --------------------------------------------------------------


@dataclass(slots=True)
class _Cell:
    start: float
    end: float
    text: str
    lines: list[Line]

    @property
    def is_amount(self) -> bool:
        return bool(_AMOUNT.match(self.text))


@dataclass(slots=True)
class _Row:
    across: float
    size: float
    cells: list[_Cell]


def _paragraphs_and_unruled_tables(
    glyphs: list[Glyph],
) -> list[list[str] | PdfTable]:
    paragraphs = glyph_lines(glyphs)
    tables = _unruled_tables(paragraphs)
    if not tables:
        return [[line.text for line in lines] for lines in paragraphs]
    table_of = {id(line): table for table, lines in tables for line in lines}
    parts: list[list[str] | PdfTable] = []
    placed: set[int] = set()
    for lines in paragraphs:
        kept = [line.text for line in lines if id(line) not in table_of]
        here = [table_of[id(line)] for line in lines if id(line) in table_of]
        for table in here:
            if id(table) not in placed:
                placed.add(id(table))
                parts.append(table)
        if kept:
            parts.append(kept)
    return parts


def _unruled_tables(
    paragraphs: list[list[Line]],
) -> list[tuple[PdfTable, list[Line]]]:
    """Tables of aligned amounts, each with the lines it takes from paragraphs."""
    rows = _baseline_rows(paragraphs)
    tables: list[tuple[PdfTable, list[Line]]] = []
    index = 0
    while index < len(rows):
        if not _is_body(rows[index]):
            index += 1
            continue
        end = _run_end(rows, index)
        table = _read_unruled(rows, index, end)
        if table is not None:
            tables.append(table)
        index = end
    return tables


def _baseline_rows(paragraphs: list[list[Line]]) -> list[_Row]:
    """Horizontal lines grouped by baseline, top to bottom, cells left to right."""
    lines = [line for lines in paragraphs for line in lines if line.direction == 0]
    if len(lines) < 2 * _MIN_BODY_ROWS:
        return []
    lines.sort(key=lambda line: (-line.across, line.start))
    rows: list[_Row] = []
    for line in lines:
        cell = _Cell(line.start, line.end, line.text, [line])
        row = rows[-1] if rows else None
        if row is not None and abs(row.across - line.across) <= 0.3 * max(
            row.size, line.size
        ):
            row.cells.append(cell)
            row.size = max(row.size, line.size)
        else:
            rows.append(_Row(line.across, line.size, [cell]))
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
    rows: list[_Row], start: int, end: int
) -> tuple[PdfTable, list[Line]] | None:
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
    header = _header_rows(rows, start, value_start, label_end)
    table_rows: list[list[list[str]]] = []
    lines: list[Line] = []
    for row in [*header, *body]:
        cells: list[list[str]] = [[] for _ in range(len(columns) + 1)]
        caption = row in header and _is_caption(row, columns, value_start)
        for cell in row.cells:
            if cell.end <= value_start:
                column = 0
            else:
                column = 1 if caption else _column_of(cell, columns)
            if column is None:
                return None
            cells[column].append(cell.text)
            lines.extend(cell.lines)
        table_rows.append(cells)
    return PdfTable(table_rows), lines


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
    rows: list[_Row], start: int, value_start: float, label_end: float
) -> list[_Row]:
    """Up to `_MAX_HEADER_ROWS` rows just above the body whose cells are short and
    each either in the label column or over the value columns, one at least."""
    header: list[_Row] = []
    index = start - 1
    below = rows[start]
    while index >= 0 and len(header) < _MAX_HEADER_ROWS:
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
