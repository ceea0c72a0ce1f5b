"""XLSX: one section per visible worksheet, its rows as table rows under the header
row found in it, cells as the sheet shows them (cached formula values included).

Read with openpyxl in read-only mode, which streams each sheet's XML. A sheet's
declared dimension is not trusted (a wrong one pads every row to it, or cuts rows
off): rows are read as they are stored and counted against `max_sheet_cells`.
"""

from __future__ import annotations

import datetime as dt
import io
import re
import warnings
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from openpyxl import load_workbook

from ..blocks import (
    HEADING,
    TABLE_ROW,
    Block,
    FileTooLarge,
    ParseError,
    table_row_text,
)
from . import ooxml
from .base import ParseRequest

_VISIBLE = "visible"
# Excel shows 15 significant digits: 0.1 + 0.2 is "0.3" there, not 0.30000000000000004.
_SIGNIFICANT_DIGITS = 15
_FIXED_DECIMALS = re.compile(r"0\.(0+)")
_QUOTED = re.compile(r'"[^"]*"|\\.')


def parse(data: bytes, request: ParseRequest) -> list[Block]:
    """Every visible sheet: its name as a heading, the rows above its header row
    as paragraphs, then the header row and each data row as table rows (empty
    cells kept, so that each value stays under its column's name). Hidden and
    very hidden sheets are left out; the request's shard does not apply. A Strict
    Open XML workbook is read from a transitional copy, which openpyxl can read."""
    ooxml.check_archive(data, request.limits, label="XLSX")
    ooxml.check_members(data, label="XLSX")  # openpyxl inflates them unbounded
    data = ooxml.with_forward_slashes(data, label="XLSX")
    data = ooxml.transitional_package(data, request.limits, label="XLSX")
    with warnings.catch_warnings():
        # openpyxl warns about styles and extensions it does not read; not our concern.
        warnings.simplefilter("ignore")
        try:
            workbook = load_workbook(
                io.BytesIO(data), read_only=True, data_only=True, keep_links=False
            )
        except MemoryError:
            raise
        except Exception as exc:
            raise ParseError("not a valid XLSX workbook") from exc
        try:
            blocks: list[Block] = []
            for sheet in workbook.worksheets:
                if getattr(sheet, "sheet_state", _VISIBLE) != _VISIBLE:
                    continue
                try:
                    rows = _sheet_rows(sheet, request.limits.max_sheet_cells)
                except (ParseError, MemoryError):
                    raise
                except Exception as exc:  # read lazily: malformed XML shows here
                    raise ParseError(
                        "the XLSX holds a sheet that cannot be read"
                    ) from exc
                blocks.extend(_sheet_blocks(str(sheet.title), rows))
            return blocks
        finally:
            workbook.close()


def _sheet_rows(sheet: Any, max_cells: int | None) -> list[list[str]]:
    """The sheet's non-empty rows as displayed text, without trailing empty cells."""
    sheet.reset_dimensions()
    rows: list[list[str]] = []
    cells = 0
    for row in sheet.iter_rows():
        # A missing row is one step too: a row numbered in the billions must not
        # take billions of steps.
        cells += max(len(row), 1)
        if max_cells is not None and cells > max_cells:
            raise FileTooLarge(
                f"the sheet {str(sheet.title)[:40]!r} has more than {max_cells} "
                "cells (rows x columns), the limit for one worksheet"
            )
        texts = [_displayed(cell) for cell in row]
        while texts and not texts[-1]:
            texts.pop()
        if texts:
            rows.append(texts)
    return rows


def _sheet_blocks(name: str, rows: list[list[str]]) -> Iterator[Block]:
    if not rows:  # no section: a workbook of empty sheets is an empty document
        return
    title = " ".join(name.split()) or "Sheet"
    path = (title,)
    yield Block(text=title, heading_path=path, kind=HEADING)
    header_index = _header_row(rows)
    for row in rows[:header_index]:  # a title or a note above the table
        yield Block(text=" ".join(cell for cell in row if cell), heading_path=path)
    table = rows[header_index:]
    # Columns left of the table, empty in all its rows, would give every row an
    # empty first cell, where readers look for the row's label.
    first = min(next(i for i, text in enumerate(row) if text) for row in table)
    width = max(len(row) for row in table)
    header = table_row_text(_padded(table[0], first, width))
    yield Block(text=header, heading_path=path, kind=TABLE_ROW)
    for row in table[1:]:
        yield Block(
            text=table_row_text(_padded(row, first, width)),
            heading_path=path,
            kind=TABLE_ROW,
            table_header=header,
        )


def _header_row(rows: list[list[str]]) -> int:
    """The first row of two or more cells, mostly words rather than numbers, that
    fills at least half as many cells as the fullest row (so that "Exported by: |
    Ann" above a wide table is not its header); else the first row."""
    filled = [[cell for cell in row if cell] for row in rows]
    widest = max(len(cells) for cells in filled)
    for index, cells in enumerate(filled):
        words = [cell for cell in cells if not _is_number(cell)]
        if len(cells) >= max(2, widest / 2) and len(words) * 2 > len(cells):
            return index
    return 0


def _is_number(text: str) -> bool:
    try:
        float(text.replace(",", "").rstrip("%"))
    except ValueError:
        return False
    return True


def _padded(row: list[str], first: int, width: int) -> list[str]:
    return row[first:] + [""] * (width - len(row))


def _displayed(cell: Any) -> str:
    value = cell.value
    if value is None:
        return ""
    if type(value) is str:  # most cells: no format to look up
        return " ".join(value.split())
    return cell_text(value, cell.number_format)


def cell_text(value: object, number_format: str = "General") -> str:
    """A cell's value the way a reader sees it: dates as ISO dates, numbers without
    binary noise, with the format's percent sign, decimals and thousands commas."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, dt.datetime):
        if value.time() == dt.time():
            return value.date().isoformat()
        return value.isoformat(sep=" ", timespec="seconds").removesuffix(":00")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return str(value)
    if isinstance(value, int | float):
        return _number_text(value, number_format)
    return " ".join(str(value).split())


def _number_text(value: float, number_format: str) -> str:
    percent, places, grouped = _number_style(number_format)
    if percent:
        value *= 100
    comma = "," if grouped else ""
    if places is not None or (grouped and float(value).is_integer()):
        text = f"{value:{comma}.{places or 0}f}"
    elif float(value).is_integer() and abs(value) < 10**_SIGNIFICANT_DIGITS:
        text = f"{int(value):{comma}d}"
    else:
        text = f"{value:.{_SIGNIFICANT_DIGITS}g}"
    return f"{text}%" if percent else text


@lru_cache(maxsize=256)
def _number_style(number_format: str) -> tuple[bool, int | None, bool]:
    """(percent, fixed decimal places, thousands commas) of a number format, from
    its first section (positive numbers) without its literal text."""
    section = _QUOTED.sub("", (number_format or "General").split(";")[0])
    decimals = _FIXED_DECIMALS.search(section)
    return (
        "%" in section,
        len(decimals.group(1)) if decimals is not None else None,
        "#,##" in section or "0,0" in section,
    )
