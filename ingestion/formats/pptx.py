"""PPTX: one section per visible slide, headed by its title, its text frames and
tables in reading order, then its speaker notes; every block carries the slide's
number as its page."""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Iterable, Iterator
from typing import Any

from pptx import Presentation
from pptx.enum.shapes import PP_PLACEHOLDER
from pptx.oxml.ns import qn
from pptx.shapes.group import GroupShape

from ..blocks import (
    HEADING,
    LIST_ITEM,
    PARAGRAPH,
    TABLE_ROW,
    Block,
    ParseError,
    TooManyPages,
    table_row_text,
)
from . import ooxml
from .base import ParseRequest
from .textutil import join_lines

# Placeholders whose paragraphs are bullets unless a paragraph says otherwise.
_BULLETED = frozenset({PP_PLACEHOLDER.BODY, PP_PLACEHOLDER.OBJECT})
# Text the layout puts on every slide, not the slide's own content.
_FURNITURE = frozenset(
    {PP_PLACEHOLDER.DATE, PP_PLACEHOLDER.FOOTER, PP_PLACEHOLDER.SLIDE_NUMBER}
)
_A_BU_NONE, _A_BU_CHAR, _A_BU_AUTONUM = (
    qn("a:buNone"),
    qn("a:buChar"),
    qn("a:buAutoNum"),
)
_SLIDE_PART = re.compile(r"ppt/slides/slide\d+\.xml", re.IGNORECASE)
_HIDDEN = frozenset({"0", "false", "off"})
NOTES_HEADING = "Notes"
_MAX_HEADING_CHARS = 200


def parse(data: bytes, request: ParseRequest) -> list[Block]:
    """Every slide not marked hidden, in order; the request's shard does not apply.

    The archive is checked against the limits, and its slides counted from the zip
    directory against `max_slides`, before anything is parsed; every member is
    inflated once in bounded chunks first (`ooxml.check_members`).
    """
    limits = request.limits
    ooxml.check_archive(data, limits, label="PPTX")
    ooxml.check_members(data, label="PPTX")  # python-pptx inflates them unbounded
    data = ooxml.with_forward_slashes(data, label="PPTX")
    data = ooxml.transitional_package(data, limits, label="PPTX")  # for python-pptx
    _check_slide_count(data, limits.max_slides)
    try:
        presentation = Presentation(io.BytesIO(data))
    except MemoryError:
        raise
    except Exception as exc:
        raise ParseError("not a valid PPTX presentation") from exc
    slides = list(presentation.slides)
    _check_count(len(slides), limits.max_slides)
    blocks: list[Block] = []
    for number, slide in enumerate(slides, start=1):
        if slide.element.get("show", "1").lower() not in _HIDDEN:
            blocks.extend(_slide_blocks(slide, number))
    return blocks


def _check_slide_count(data: bytes, max_slides: int | None) -> None:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        count = sum(1 for name in archive.namelist() if _SLIDE_PART.fullmatch(name))
    _check_count(count, max_slides)


def _check_count(count: int, max_slides: int | None) -> None:
    if max_slides is not None and count > max_slides:
        raise TooManyPages(
            f"the presentation has {count} slides, more than the {max_slides} limit"
        )


def _slide_blocks(slide: Any, number: int) -> Iterator[Block]:
    title_shape = slide.shapes.title
    title = _one_line(title_shape.text_frame.text) if title_shape is not None else ""
    if not title or len(title) > _MAX_HEADING_CHARS:
        # Too long for a title (python-pptx takes the first placeholder for one,
        # whatever it holds): the shape's words are read as the slide's body.
        title, title_shape = f"Slide {number}", None
    path = (title,)
    yield Block(text=title, heading_path=path, page=number, kind=HEADING)
    for shape in _reading_order(slide.shapes):
        if _placeholder(shape) in _FURNITURE or (
            title_shape is not None and shape.shape_id == title_shape.shape_id
        ):
            continue
        yield from _shape_blocks(shape, path, number)
    notes = _notes_text(slide)
    if notes:
        notes_path = (title, NOTES_HEADING)
        yield Block(
            text=NOTES_HEADING, heading_path=notes_path, page=number, kind=HEADING
        )
        for paragraph in notes.split("\n"):
            if paragraph.strip():
                yield Block(
                    text=paragraph.strip(), heading_path=notes_path, page=number
                )


def _reading_order(shapes: Iterable[Any]) -> list[Any]:
    """Top to bottom, then left to right (a group's members inside the group)."""
    return sorted(shapes, key=lambda shape: (shape.top or 0, shape.left or 0))


def _shape_blocks(shape: Any, path: tuple[str, ...], number: int) -> Iterator[Block]:
    if isinstance(shape, GroupShape):
        for member in _reading_order(shape.shapes):
            yield from _shape_blocks(member, path, number)
    elif shape.has_table:
        yield from _table_blocks(shape.table, path, number)
    elif shape.has_text_frame:
        bulleted = _placeholder(shape) in _BULLETED
        for paragraph in shape.text_frame.paragraphs:
            text = join_lines(paragraph.text.replace("\v", "\n").split("\n"))
            if text:
                kind = LIST_ITEM if _is_bullet(paragraph, bulleted) else PARAGRAPH
                yield Block(text=text, heading_path=path, page=number, kind=kind)


def _table_blocks(table: Any, path: tuple[str, ...], number: int) -> Iterator[Block]:
    """Rows as "a | b | c", the first row first and repeated with every other row
    as its header; a cell merged over keeps its place, empty."""
    header = ""
    for row in table.rows:
        text = table_row_text([_one_line(cell.text) for cell in row.cells])
        if not text:
            continue
        yield Block(
            text=text,
            heading_path=path,
            page=number,
            kind=TABLE_ROW,
            table_header=header,
        )
        header = header or text


def _is_bullet(paragraph: Any, bulleted: bool) -> bool:
    properties = paragraph._p.pPr
    if properties is not None:
        if properties.find(_A_BU_NONE) is not None:
            return False
        if (
            properties.find(_A_BU_CHAR) is not None
            or properties.find(_A_BU_AUTONUM) is not None
        ):
            return True
    return bulleted or paragraph.level > 0


def _notes_text(slide: Any) -> str:
    if not slide.has_notes_slide:
        return ""
    frame = slide.notes_slide.notes_text_frame
    return frame.text.replace("\v", "\n") if frame is not None else ""


def _placeholder(shape: Any) -> PP_PLACEHOLDER | None:
    if not shape.is_placeholder:
        return None
    try:
        return shape.placeholder_format.type
    except ValueError:  # a placeholder element without a type PowerPoint knows
        return None


def _one_line(text: str) -> str:
    return " ".join(text.split())
