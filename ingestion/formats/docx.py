"""DOCX: body paragraphs, headings, list items and table rows in document order,
readable in shards cut at headings."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import accumulate
from typing import TYPE_CHECKING

from docx.opc.constants import CONTENT_TYPE as CT
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.oxml.ns import qn
from lxml import etree

from ..blocks import (
    HEADING,
    LIST_ITEM,
    PARAGRAPH,
    TABLE_ROW,
    Block,
    ParseError,
    table_row_text,
)
from . import ooxml
from .base import ParseRequest
from .headings import HeadingStack
from .textutil import join_lines

if TYPE_CHECKING:
    from lxml.etree import _Element

_W_P, _W_TBL, _W_TR, _W_TC = qn("w:p"), qn("w:tbl"), qn("w:tr"), qn("w:tc")
_W_R, _W_T, _W_TAB, _W_BR, _W_CR = (
    qn("w:r"),
    qn("w:t"),
    qn("w:tab"),
    qn("w:br"),
    qn("w:cr"),
)
_W_NO_BREAK_HYPHEN = qn("w:noBreakHyphen")
_W_SDT, _W_SDT_CONTENT, _W_CUSTOM_XML = (
    qn("w:sdt"),
    qn("w:sdtContent"),
    qn("w:customXml"),
)
_W_PPR, _W_RPR, _W_VANISH = qn("w:pPr"), qn("w:rPr"), qn("w:vanish")
_W_TCPR, _W_GRID_SPAN = qn("w:tcPr"), qn("w:gridSpan")
_W_PSTYLE, _W_OUTLINE, _W_NUMPR = qn("w:pStyle"), qn("w:outlineLvl"), qn("w:numPr")
_W_VAL = qn("w:val")
_W_DOCUMENT, _W_BODY = qn("w:document"), qn("w:body")
_DOCX_MAIN_TYPES = frozenset(
    {
        CT.WML_DOCUMENT_MAIN,
        "application/vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml",
        "application/vnd.ms-word.document.macroEnabled.main+xml",
        "application/vnd.ms-word.template.macroEnabledTemplate.main+xml",
    }
)
# Subtrees that never hold visible body text: properties, deletions, field codes, and
# the legacy copy of drawings (mc:Fallback repeats mc:Choice).
_DOCX_SKIP = frozenset(
    {
        _W_PPR,
        _W_RPR,
        qn("w:del"),
        qn("w:moveFrom"),
        qn("w:instrText"),
        qn("w:delText"),
        ooxml.MC_FALLBACK,
    }
)
_DOCX_FALSE = frozenset({"0", "false", "off"})
_HEADING_STYLE = re.compile(r"^(?:heading|标题)\s*([1-9])$", re.IGNORECASE)
_TOC_STYLE = re.compile(r"^toc(?:\s*\d|\s+heading)$", re.IGNORECASE)
_MAX_HEADING_CHARS = 200
RETAIN_MAX_DOCX_BYTES = 4 * 2**20  # zipped; its XML tree is many times larger

_DocxParagraph = tuple[str, int | None, str]  # (block kind, heading level, text)


def parse(data: bytes, request: ParseRequest) -> list[Block]:
    """Body paragraphs, headings and table rows in document order.

    Headers, footers, footnotes, comments and table-of-contents entries are left out.
    With `shard` = (index, count), only the index-th of `count` runs of the body, cut
    at headings (see `_DocxBody`); the shards' blocks in order are the whole's.
    The XML tree goes into `retain`, if given: freeing a large one takes time, which
    the parser processes spend after they have answered (docs/benchmarks.md,
    Summary). Not the tree of a file of RETAIN_MAX_DOCX_BYTES or more, whose
    memory matters more while its text is chunked and embedded.
    The archive is checked against the limits first, before anything is inflated.
    """
    ooxml.check_archive(data, request.limits, label="DOCX")
    document, styles_element = _docx_parts(data)
    retain = request.retain
    if retain is not None and len(data) < RETAIN_MAX_DOCX_BYTES:
        retain.append(document)
    body = document.find(_W_BODY)
    if body is None:
        raise ParseError("not a Word document: it has no body")
    _docx_prune(body)
    reader = _DocxBody(body, _DocxStyles(styles_element))
    index, count = request.shard
    starts = reader.shard_starts(count)
    return reader.blocks(starts[index], starts[index + 1])


def _docx_parts(data: bytes) -> tuple[_Element, _Element | None]:
    """The root elements of the main document part and of its styles part."""
    package = ooxml.Package(data, label="DOCX")
    main_name = package.main_part(_DOCX_MAIN_TYPES, "not a Word document")
    styles_name = package.related(main_name, RT.STYLES)
    main = package.read(main_name)
    styles = (
        package.read(styles_name)
        if styles_name is not None and package.has(styles_name)
        else None
    )
    if main.tag != _W_DOCUMENT:
        raise ParseError("not a Word document")
    return main, styles


@dataclass(frozen=True)
class _DocxStyle:
    name: str
    based_on: str | None
    outline: int | None
    numbered: bool


class _DocxStyles:
    """Heading level, list-ness and TOC-ness of paragraph styles (with basedOn)."""

    def __init__(self, styles_element: _Element | None) -> None:
        self._styles: dict[str, _DocxStyle] = {}
        self._facts: dict[str | None, tuple[bool, int | None, bool]] = {}
        self.default: str | None = None
        if styles_element is None:
            return
        for style in styles_element.iterchildren(qn("w:style")):
            if style.get(qn("w:type")) != "paragraph":
                continue
            style_id = style.get(qn("w:styleId")) or ""
            name = style.find(qn("w:name"))
            based_on = style.find(qn("w:basedOn"))
            ppr = style.find(_W_PPR)
            outline = ppr.find(_W_OUTLINE) if ppr is not None else None
            self._styles[style_id] = _DocxStyle(
                name=(name.get(_W_VAL) or "") if name is not None else "",
                based_on=based_on.get(_W_VAL) if based_on is not None else None,
                outline=_int_or_none(outline.get(_W_VAL))
                if outline is not None
                else None,
                numbered=ppr is not None and ppr.find(_W_NUMPR) is not None,
            )
            if style.get(qn("w:default")) in ("1", "true", "on"):
                self.default = style_id

    def _chain(self, style_id: str | None) -> Iterator[_DocxStyle]:
        seen: set[str] = set()
        while style_id is not None and style_id not in seen:
            seen.add(style_id)
            style = self._styles.get(style_id)
            if style is None:
                return
            yield style
            style_id = style.based_on

    def name(self, style_id: str | None) -> str:
        style = self._styles.get(style_id or "")
        return style.name if style is not None else ""

    def heading_level(self, style_id: str | None) -> int | None:
        """0 for Title, 1-9 for headings (by name, else by outline level)."""
        name = self.name(style_id).strip()
        if name.lower() == "title":
            return 0
        match = _HEADING_STYLE.match(name)
        if match:
            return int(match.group(1))
        for style in self._chain(style_id):
            if style.outline is not None:
                return style.outline + 1 if 0 <= style.outline <= 8 else None
        return None

    def numbered(self, style_id: str | None) -> bool:
        return any(style.numbered for style in self._chain(style_id))

    def facts(self, style_id: str | None) -> tuple[bool, int | None, bool]:
        """(table-of-contents entry, heading level, numbered), once per style."""
        facts = self._facts.get(style_id)
        if facts is None:
            facts = self._facts[style_id] = (
                _TOC_STYLE.match(self.name(style_id).strip()) is not None,
                self.heading_level(style_id),
                self.numbered(style_id),
            )
        return facts


def _int_or_none(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _docx_prune(body: _Element) -> None:
    """Drop hidden runs and the subtrees that never hold visible text, in C.

    Run properties make up most of a body's elements; walking them in Python cost
    more than the rest of the parse.
    """
    for vanish in list(body.iter(_W_VANISH)):
        properties = vanish.getparent()
        run = properties.getparent()
        if (
            properties.tag == _W_RPR
            and run is not None
            and run.tag == _W_R
            and vanish.get(_W_VAL, "true").lower() not in _DOCX_FALSE
        ):
            run.getparent().remove(run)
    etree.strip_elements(body, *(_DOCX_SKIP - {_W_PPR}), with_tail=False)


def _docx_collect(element: _Element, parts: list[str]) -> None:
    for child in element.iterchildren():
        tag = child.tag
        if not isinstance(tag, str) or tag in _DOCX_SKIP:
            continue
        if tag == _W_T:
            parts.append(child.text or "")
        elif tag == _W_TAB:
            parts.append("\t")
        elif tag in (_W_BR, _W_CR):
            parts.append("\n")
        elif tag == _W_NO_BREAK_HYPHEN:
            parts.append("-")
        elif tag == _W_P:  # text boxes and nested table cells
            parts.append("\n")
            _docx_collect(child, parts)
            parts.append("\n")
        else:
            _docx_collect(child, parts)


def _docx_text(element: _Element) -> str:
    parts: list[str] = []
    _docx_collect(element, parts)
    return join_lines("".join(parts).split("\n"))


def _docx_children(parent: _Element, wanted: frozenset[str]) -> Iterator[_Element]:
    """Children with a wanted tag, looking through content controls and custom XML."""
    for child in parent.iterchildren():
        tag = child.tag
        if tag in wanted:
            yield child
        elif tag == _W_SDT:
            content = child.find(_W_SDT_CONTENT)
            if content is not None:
                yield from _docx_children(content, wanted)
        elif tag == _W_CUSTOM_XML:
            yield from _docx_children(child, wanted)


def _docx_row_text(row: _Element) -> str:
    cells: list[str] = []
    for cell in _docx_children(row, frozenset({_W_TC})):
        cells.append(" ".join(_docx_text(cell).split()))
        # A cell merged across columns (gridSpan) keeps the columns after it, so
        # every row has its values under the same header cells.
        cells.extend([""] * (_docx_grid_span(cell) - 1))
    return table_row_text(cells)


def _docx_grid_span(cell: _Element) -> int:
    properties = cell.find(_W_TCPR)
    span = properties.find(_W_GRID_SPAN) if properties is not None else None
    value = _int_or_none(span.get(_W_VAL)) if span is not None else None
    return max(1, min(value or 1, 64))


class _DocxBody:
    """The body's paragraphs and tables as blocks, readable in shards.

    A shard starts at a heading that follows a content paragraph, so that chunking
    each shard alone gives the chunks of the whole (a chunk never spans a heading);
    the heading stack it starts under is rebuilt from the headings before it, which
    costs a style lookup per paragraph and the text of headings only.
    """

    def __init__(self, body: _Element, styles: _DocxStyles) -> None:
        self.elements = list(_docx_children(body, frozenset({_W_P, _W_TBL})))
        self.styles = styles
        self._read: dict[int, _DocxParagraph | None] = {}

    def _style(self, element: _Element) -> tuple[bool, int | None, bool]:
        """(table-of-contents entry, heading level, numbered) of a paragraph."""
        # One pass over the paragraph properties, not a find() per property: this
        # runs for every paragraph.
        style_id = self.styles.default
        outline: str | None = None
        has_numbering = False
        # pPr comes first where Word writes it; others may put a comment before it.
        ppr = element[0] if len(element) and element[0].tag == _W_PPR else None
        if ppr is None:
            ppr = element.find(_W_PPR)
        if ppr is not None:
            seen_style = False
            for child in ppr:
                tag = child.tag
                if tag == _W_PSTYLE and not seen_style:
                    style_id, seen_style = child.get(_W_VAL), True
                elif tag == _W_OUTLINE and outline is None:
                    outline = child.get(_W_VAL, "")
                elif tag == _W_NUMPR:
                    has_numbering = True
        is_toc, level, numbered = self.styles.facts(style_id)
        if outline is not None:
            value = _int_or_none(outline)
            level = value + 1 if value is not None and 0 <= value <= 8 else None
        return is_toc, level, numbered or has_numbering

    def paragraph(self, index: int) -> _DocxParagraph | None:
        """The block a paragraph gives, if any."""
        if index in self._read:
            return self._read.pop(index)
        element = self.elements[index]
        is_toc, level, numbered = self._style(element)
        if is_toc:
            return None
        text = _docx_text(element)
        if not text:
            return None
        if level is not None and len(text) <= _MAX_HEADING_CHARS:
            return HEADING, level, text
        return (LIST_ITEM if numbered else PARAGRAPH), None, text

    def _heading(self, index: int) -> _DocxParagraph | None:
        """The paragraph if it is a heading; reads the text of heading styles only."""
        element = self.elements[index]
        if element.tag != _W_P:
            return None
        is_toc, level, _ = self._style(element)
        if is_toc or level is None:
            return None
        read = self._read[index] = self.paragraph(index)
        return read if read is not None and read[0] == HEADING else None

    def _may_start_shard(self, index: int) -> bool:
        if self._heading(index) is None or self.elements[index - 1].tag != _W_P:
            return False
        before = self._read[index - 1] = self.paragraph(index - 1)
        return before is not None and before[0] != HEADING

    def shard_starts(self, count: int) -> list[int]:
        """Start of each of `count` shards of about equal size, and the end.

        A shard that finds no heading to start at is empty; the one before it
        reads on to the end.
        """
        end = len(self.elements)
        if count == 1 or not end:
            return [0, *[end] * count]
        # Children (runs, table rows) stand in for the work an element costs.
        sizes = list(accumulate(len(element) + 1 for element in self.elements))
        starts = [0]
        for shard in range(1, count):
            index = max(bisect_left(sizes, sizes[-1] * shard / count), starts[-1] + 1)
            while index < end and not self._may_start_shard(index):
                index += 1
            starts.append(min(index, end))
        return [*starts, end]

    def blocks(self, start: int, end: int) -> list[Block]:
        headings = HeadingStack()
        for index in range(start):
            heading = self._heading(index)
            if heading is not None:
                headings.push(heading[1], heading[2])
            self._read.pop(index, None)
        path = headings.path
        blocks: list[Block] = []
        for index in range(start, end):
            element = self.elements[index]
            if element.tag == _W_TBL:
                header = ""
                for row in _docx_children(element, frozenset({_W_TR})):
                    text = _docx_row_text(row)
                    if text:
                        blocks.append(
                            Block(
                                text=text,
                                heading_path=path,
                                kind=TABLE_ROW,
                                table_header=header,
                            )
                        )
                        header = header or text
                continue
            paragraph = self.paragraph(index)
            if paragraph is None:
                continue
            kind, level, text = paragraph
            if kind == HEADING:
                path = headings.push(level, text)
            blocks.append(Block(text=text, heading_path=path, kind=kind))
        return blocks
