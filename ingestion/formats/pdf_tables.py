"""PDF tables read as rows of cells, the rest of the page as paragraphs.

Two kinds of table, both found from what one pdfminer pass already gives:

- ruled: a grid of drawn lines and rectangles. `TableCollector` records the page's
  straight horizontal and vertical path segments as it interprets the page, and
  only a page that has some goes through pdfplumber's grid finder (its "lines"
  strategy, fed with our segments instead of a second parse; its edge merging,
  crossings and cell search copied here on tuples, checked against its own on
  random rulings). Each glyph goes to
  the cell under its centre; a cell spanning columns leaves the columns after it
  empty, so every value stays under its header cell.
- unruled, as financial statements are set: amounts right-aligned in columns
  beside a label, found among the lines of the paragraphs (`pdf_columns.py`).

A table's rows replace its text in the paragraphs and take the place of its first
glyph (ruled) or first line (unruled) in reading order. A page where neither is
found gives exactly the paragraphs of `glyph_paragraphs`. Why not pdfplumber's own
"text" strategy, and what all this costs: docs/benchmarks.md, "PDF tables".
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import groupby
from operator import itemgetter
from typing import TYPE_CHECKING

from pdfplumber.table import Table, cells_to_tables

from ..blocks import PARAGRAPH, TABLE_ROW, Block, table_row_text
from .pdf_columns import TableRows, unruled_tables
from .pdf_layout import Glyph, GlyphCollector, glyph_lines

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
        if ruling_limit_reached(rulings):
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
                add_ruling(rulings, current, point)
            current = point


def ruling_limit_reached(rulings: list[Box]) -> bool:
    return len(rulings) > _MAX_RULINGS


def add_ruling(
    rulings: list[Box], one: tuple[float, float], other: tuple[float, float]
) -> None:
    """The segment from `one` to `other` as a ruling, if it is one."""
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

    rows: TableRows


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
    horizontal = sum(1 for _, top, _, bottom in rulings if top == bottom)
    if horizontal < 2 or len(rulings) - horizontal < 2:
        return []  # merging edges makes no more of either: no grid (underlines)
    edges = [e for e in _merged_edges(rulings) if max(e[4], e[5]) >= _MIN_RULING]
    if len(edges) > _MAX_EDGES:
        return []
    horizontal = sum(1 for e in edges if e[6])
    if horizontal < 2 or len(edges) - horizontal < 2:
        return []
    grids = []
    for cells in cells_to_tables(_cells(_intersections(edges))):
        rows = [row.cells for row in Table(None, cells).rows]
        if len(rows) >= 2 and len(rows[0]) >= 2:
            grids.append(rows)
    return grids


# An edge of the grid search: x0, top, x1, bottom, width, height, horizontal.
_Edge = tuple[float, float, float, float, float, float, bool]


def _merged_edges(rulings: list[Box]) -> list[_Edge]:
    """pdfplumber's `merge_edges` with our tolerances: the same edges in the same
    order, from the same arithmetic, as tuples (its copy of an edge's dict for
    every move and every join was most of the grid search's time)."""
    edges = [
        (x0, top, x1, bottom, x1 - x0, bottom - top, top == bottom)
        for x0, top, x1, bottom in rulings
    ]
    # pdfplumber sorts all edges by ("h", top) or ("v", x0): the horizontal
    # ones first, by top, then the vertical ones, by x0, each sort stable.
    flat_at, upright_at = itemgetter(1), itemgetter(0)
    merged: list[_Edge] = []
    for edges_of_a_kind, at in (
        (sorted(_snapped([e for e in edges if e[6]], 1), key=flat_at), flat_at),
        (
            sorted(_snapped([e for e in edges if not e[6]], 0), key=upright_at),
            upright_at,
        ),
    ):
        for _, group in groupby(edges_of_a_kind, key=at):
            merged.extend(_joined(list(group)))
    return merged


def _snapped(edges: list[_Edge], at: int) -> list[_Edge]:
    """pdfplumber's `snap_objects`: edges whose position `at` (x0 of vertical
    edges, top of horizontal ones) is within the tolerance of the next one's
    move to their mean, cluster by cluster."""
    if not edges:
        return []
    cluster_of: dict[float, int] = {}
    index, last = 0, None
    for value in sorted({edge[at] for edge in edges}):
        if last is not None and value > last + _TOLERANCE:
            index += 1
        cluster_of[value] = index
        last = value
    clusters: list[list[_Edge]] = [[] for _ in range(index + 1)]
    for edge in edges:
        clusters[cluster_of[edge[at]]].append(edge)
    snapped = []
    for cluster in clusters:
        mean = sum(edge[at] for edge in cluster) / len(cluster)
        for x0, top, x1, bottom, width, height, flat in cluster:
            if at == 0:
                shift = mean - x0
                snapped.append(
                    (x0 + shift, top, x1 + shift, bottom, width, height, flat)
                )
            else:
                shift = mean - top
                snapped.append(
                    (x0, top + shift, x1, bottom + shift, width, height, flat)
                )
    return snapped


def _joined(group: list[_Edge]) -> list[_Edge]:
    """pdfplumber's `join_edge_group`: edges of one line that touch or overlap
    (within the tolerance) joined into one."""
    flat = group[0][6]
    low, high = (0, 2) if flat else (1, 3)
    group.sort(key=lambda edge: edge[low])
    joined = [group[0]]
    for edge in group[1:]:
        last = joined[-1]
        if edge[low] <= last[high] + _TOLERANCE:
            if edge[high] > last[high]:
                x0, top, x1, bottom, width, height, _ = last
                if flat:
                    joined[-1] = (x0, top, edge[2], bottom, edge[2] - x0, height, flat)
                else:
                    grown = height + (edge[3] - bottom)
                    joined[-1] = (x0, top, x1, edge[3], width, grown, flat)
        else:
            joined.append(edge)
    return joined


def _intersections(edges: list[_Edge]) -> dict[tuple[float, float], tuple]:
    """pdfplumber's `edges_to_intersections`: each point where a vertical and a
    horizontal edge cross (within the tolerance), with the boxes of the edges
    of each side crossing there, as (vertical, horizontal) sets. The horizontal
    edges near each vertical one are found by bisection, then held to
    pdfplumber's own comparisons."""
    flat = sorted((e for e in edges if e[6]), key=lambda e: e[1])
    tops = [e[1] for e in flat]
    found: dict[tuple[float, float], tuple[set, set]] = {}
    for v in edges:
        if v[6]:
            continue
        v_x, v_top, _, v_bottom = v[:4]
        lowest = bisect_left(tops, v_top - 2 * _TOLERANCE)
        highest = bisect_right(tops, v_bottom + 2 * _TOLERANCE)
        for h in flat[lowest:highest]:
            if (
                v_top <= h[1] + _TOLERANCE
                and v_bottom >= h[1] - _TOLERANCE
                and v_x >= h[0] - _TOLERANCE
                and v_x <= h[2] + _TOLERANCE
            ):
                sides = found.setdefault((v_x, h[1]), (set(), set()))
                sides[0].add(v[:4])
                sides[1].add(h[:4])
    return found


def _cells(intersections: dict) -> list[Box]:
    """pdfplumber's `intersections_to_cells`, the same cells in the same order,
    with the points below and right of each one looked up instead of searched
    for (its search made the grid finder quadratic in the intersections)."""
    sides = intersections

    def connects(one: tuple, other: tuple) -> bool:
        if one[0] == other[0] and not sides[one][0].isdisjoint(sides[other][0]):
            return True
        return one[1] == other[1] and not sides[one][1].isdisjoint(sides[other][1])

    column: dict[float, list[tuple]] = {}  # same x, top to bottom
    row: dict[float, list[tuple]] = {}  # same top, left to right
    for point in sorted(intersections):
        column.setdefault(point[0], []).append(point)
        row.setdefault(point[1], []).append(point)
    after = {p: i for points in column.values() for i, p in enumerate(points)}
    right_of = {p: i for points in row.values() for i, p in enumerate(points)}
    cells: list[Box] = []
    for point in sorted(intersections):
        below = column[point[0]][after[point] + 1 :]
        right = row[point[1]][right_of[point] + 1 :]
        cell = next(
            (
                (point[0], point[1], corner[0], corner[1])
                for down in below
                if connects(point, down)
                for across in right
                if connects(point, across)
                for corner in [(across[0], down[1])]
                if corner in sides
                and connects(corner, across)
                and connects(corner, down)
            ),
            None,
        )
        if cell is not None:
            cells.append(cell)
    return cells


def _fill_grids(
    grids: list[list[list[Box | None]]], glyphs: list[Glyph]
) -> tuple[list[tuple[int, PdfTable]], list[tuple[int, Glyph]]]:
    """Tables (with the index of their first glyph, in that order) and the
    glyphs outside them, with their indexes."""
    found: list[tuple[int, list[list[list[Glyph]]]]] = []
    for grid in grids:
        found.append((-1, [[[] for _ in row] for row in grid]))
    outside: list[tuple[int, Glyph]] = []
    cell_of = _CellIndex(grids).cell_of
    for index, glyph in enumerate(glyphs):
        place = cell_of(glyph) if glyph[1] == 0 else None
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


class _CellIndex:
    """The grids' cells by bands of the page's height, so that finding a
    glyph's cell looks at the cells of its band only."""

    _BAND = 16.0  # points

    def __init__(self, grids: list[list[list[Box | None]]]) -> None:
        self._bands: dict[int, list[tuple[Box, tuple[int, int, int]]]] = {}
        for table, grid in enumerate(grids):
            for row_index, row in enumerate(grid):
                for column, cell in enumerate(row):
                    if cell is None:
                        continue
                    _, top, _, bottom = cell
                    entry = (cell, (table, row_index, column))
                    for band in range(self._band(top), self._band(bottom) + 1):
                        self._bands.setdefault(band, []).append(entry)

    def _band(self, top: float) -> int:
        return math.floor(top / self._BAND)

    def cell_of(self, glyph: Glyph) -> tuple[int, int, int] | None:
        """(table, row, column) of the first cell, in grid order, under the
        glyph's centre."""
        _, _, start, end, across, size = glyph
        x = (start + end) / 2
        top = -(across + _GLYPH_MIDDLE * size)
        for (x0, box_top, x1, bottom), place in self._bands.get(self._band(top), ()):
            if x0 <= x < x1 and box_top <= top < bottom:
                return place
        return None


def _cell_lines(glyphs: list[Glyph]) -> list[str]:
    return [line.text for lines in glyph_lines(glyphs) for line in lines]


def _paragraphs_and_unruled_tables(
    glyphs: list[Glyph],
) -> list[list[str] | PdfTable]:
    paragraphs = glyph_lines(glyphs)
    tables = [(PdfTable(rows), lines) for rows, lines in unruled_tables(paragraphs)]
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
