"""HTML: the visible text of a page as headings, paragraphs, list items and table
rows; scripts, styles and hidden elements are left out.

The page is read by libxml2's HTML parser (through lxml) with this module as its
event target: it runs in time linear in the input, where the standard library's
`html.parser` rescans an unclosed tag from its start at every feed (quadratic on a
page of unclosed tags, docs/security/parsing.md). libxml2 closes the elements a page
leaves open, so every start has its end and a hidden element can be skipped whole.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from lxml import etree

from ..blocks import (
    HEADING,
    LIST_ITEM,
    PARAGRAPH,
    TABLE_ROW,
    Block,
    check_block_count,
    table_row_text,
)
from .base import ParseRequest
from .encoding import decode_text, html_declared_charset
from .headings import HeadingStack
from .textutil import clean_text, join_lines, paragraphs

_HTML_SKIP = frozenset(
    {
        "script",
        "style",
        "noscript",
        "template",
        "title",
        "svg",
        "iframe",
        "object",
        "canvas",
        "select",
        "textarea",
    }
)
_HTML_BLOCK = frozenset(
    {
        "address",
        "article",
        "aside",
        "blockquote",
        "body",
        "caption",
        "center",
        "dd",
        "details",
        "dialog",
        "dir",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "header",
        "hgroup",
        "hr",
        "html",
        "legend",
        "li",
        "main",
        "menu",
        "nav",
        "ol",
        "p",
        "pre",
        "section",
        "summary",
        "ul",
    }
)
_HTML_HEADINGS = {f"h{level}": level for level in range(1, 7)}
_HTML_LISTS = frozenset({"ul", "ol", "menu", "dir"})
_WHITESPACE = re.compile(r"\s+")
_HTML_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)


class _TableState:
    def __init__(self) -> None:
        self.row: list[str] | None = None
        self.cell: list[str] | None = None


class _HTMLTextExtractor:
    """An lxml parser target: collects visible text as blocks; block elements and
    <br> end a paragraph."""

    def __init__(self, max_blocks: int | None = None) -> None:
        self.blocks: list[Block] = []
        self._max_blocks = max_blocks
        self._headings = HeadingStack()
        self._parts: list[str] = []
        self._preformatted = False
        self._skip_depth = 0  # open elements inside a skipped one, itself included
        self._pre_depth = 0
        self._list_depth = 0
        self._heading: int | None = None
        self._tables: list[_TableState] = []

    def start(self, tag: str, attrib: Mapping[str, str]) -> None:
        if self._skip_depth:
            self._skip_depth += 1
        elif tag in _HTML_SKIP or _html_hidden(attrib):
            self._skip_depth = 1
        else:
            self._start(tag)

    def end(self, tag: str) -> None:
        if self._skip_depth:
            self._skip_depth -= 1
        else:
            self._end(tag)

    def data(self, data: str) -> None:
        if self._skip_depth:
            return
        cell = self._cell()
        if cell is not None:
            cell.append(data)
        elif self._pre_depth:
            self._parts.append(data)
            self._preformatted = True
        elif not self._tables or data.strip():
            # Keep one space at the edges: "<b>big</b> deal" must not glue words.
            self._parts.append(_WHITESPACE.sub(" ", data))

    def close(self) -> list[Block]:
        while self._tables:
            self._end_table()
        self._flush()
        return self.blocks

    def _cell(self) -> list[str] | None:
        return self._tables[-1].cell if self._tables else None

    def _start(self, tag: str) -> None:
        cell = self._cell()
        if tag == "table":
            if cell is None:
                self._flush()
            self._tables.append(_TableState())
        elif tag == "tr" and self._tables:
            self._end_row()
            self._tables[-1].row = []
        elif tag in ("td", "th") and self._tables:
            self._start_cell()
        elif cell is not None:
            if tag in _HTML_BLOCK or tag in _HTML_HEADINGS or tag == "br":
                cell.append(" ")
        else:
            self._start_outside_cell(tag)

    def _start_cell(self) -> None:
        self._end_cell()
        table = self._tables[-1]
        if table.row is None:
            table.row = []
        table.cell = []

    def _start_outside_cell(self, tag: str) -> None:
        if tag in _HTML_HEADINGS:
            self._flush()
            self._heading = _HTML_HEADINGS[tag]
        elif tag == "br":
            self._parts.append("\n")
        elif tag in _HTML_BLOCK:
            self._flush()
            if tag == "pre":
                self._pre_depth += 1
            elif tag in _HTML_LISTS:
                self._list_depth += 1

    def _end(self, tag: str) -> None:
        cell = self._cell()
        if tag == "table" and self._tables:
            self._end_table()
        elif tag == "tr" and self._tables:
            self._end_row()
        elif tag in ("td", "th") and self._tables:
            self._end_cell()
        elif cell is not None:
            if tag in _HTML_BLOCK or tag in _HTML_HEADINGS:
                cell.append(" ")
        elif tag in _HTML_HEADINGS or tag in _HTML_BLOCK:
            self._flush()
            if tag == "pre":
                self._pre_depth = max(0, self._pre_depth - 1)
            elif tag in _HTML_LISTS:
                self._list_depth = max(0, self._list_depth - 1)

    def _end_cell(self) -> None:
        table = self._tables[-1]
        if table.cell is not None and table.row is not None:
            table.row.append(join_lines(["".join(table.cell)]))
        table.cell = None

    def _end_row(self) -> None:
        self._end_cell()
        table = self._tables[-1]
        text = table_row_text(table.row or [])
        if text:
            self._emit(text, TABLE_ROW)
        table.row = None

    def _end_table(self) -> None:
        self._end_row()
        self._tables.pop()

    def _flush(self) -> None:
        if not self._parts and self._heading is None:
            return
        raw = "".join(self._parts)
        self._parts = []
        preformatted, self._preformatted = self._preformatted, False
        level, self._heading = self._heading, None
        if level is not None:
            text = join_lines(raw.split("\n"))
            if text:
                self._headings.push(level, text)
                self._emit(text, HEADING)
        elif preformatted:
            text = "\n".join(line.rstrip() for line in raw.split("\n")).strip("\n")
            if text.strip():
                self._emit(text, PARAGRAPH)
        else:
            kind = LIST_ITEM if self._list_depth else PARAGRAPH
            for paragraph in paragraphs(raw):
                self._emit(paragraph, kind)

    def _emit(self, text: str, kind: str) -> None:
        self.blocks.append(
            Block(text=text, heading_path=self._headings.path, kind=kind)
        )
        check_block_count(len(self.blocks), self._max_blocks)


def _html_hidden(attrib: Mapping[str, str]) -> bool:
    if not attrib:
        return False
    if "hidden" in attrib:
        return True
    if attrib.get("aria-hidden", "").lower() == "true":
        return True
    style = attrib.get("style")
    return bool(style and _HTML_HIDDEN_STYLE.search(style))


_FEED_BYTES = 1024 * 1024


def parse(data: bytes, request: ParseRequest) -> list[Block]:
    """The whole page (the request's shard does not apply)."""
    text = clean_text(decode_text(data, html_declared_charset(data)))
    # Decoded by our rules above; libxml2 is told the result's encoding so that it
    # does not guess again from a <meta> tag. huge_tree: no 10 MB text node limit
    # (the memory and time limits bound a parse).
    parser = etree.HTMLParser(
        target=_HTMLTextExtractor(request.limits.max_blocks),
        encoding="utf-8",
        huge_tree=True,
    )
    encoded = text.encode("utf-8", errors="replace")
    # In pieces, so that a limit the target raises stops the reading early.
    for start in range(0, len(encoded), _FEED_BYTES):
        parser.feed(encoded[start : start + _FEED_BYTES])
    return parser.close()
