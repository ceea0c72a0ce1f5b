"""HTML: the visible text of a page as headings, paragraphs, list items and table
rows; scripts, styles and hidden elements are left out."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from ..blocks import HEADING, LIST_ITEM, PARAGRAPH, TABLE_ROW, Block, table_row_text
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
_HTML_VOID = frozenset(
    {
        "area",
        "base",
        "br",
        "col",
        "embed",
        "hr",
        "img",
        "input",
        "link",
        "meta",
        "param",
        "source",
        "track",
        "wbr",
    }
)
# Elements whose end tag is often omitted: hiding them could swallow the page.
_HTML_OPTIONAL_END = frozenset(
    {"p", "li", "dt", "dd", "tr", "td", "th", "option", "tbody", "thead", "tfoot"}
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


class _HTMLTextExtractor(HTMLParser):
    """Collects visible text as blocks; block elements and <br> end a paragraph."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[Block] = []
        self._headings = HeadingStack()
        self._parts: list[str] = []
        self._preformatted = False
        self._skip_tag: str | None = None
        self._skip_depth = 0
        self._pre_depth = 0
        self._list_depth = 0
        self._heading: int | None = None
        self._tables: list[_TableState] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._skip_tag is not None:
            if tag == self._skip_tag:
                self._skip_depth += 1
            return
        if tag in _HTML_SKIP or _html_hidden(attrs):
            if tag not in _HTML_VOID and tag not in _HTML_OPTIONAL_END:
                self._skip_tag, self._skip_depth = tag, 1
                return
            if tag in _HTML_VOID:
                return
        self._start(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._skip_tag is None and tag in _HTML_VOID and not _html_hidden(attrs):
            self._start(tag)

    def handle_endtag(self, tag: str) -> None:
        if self._skip_tag is not None:
            if tag == self._skip_tag:
                self._skip_depth -= 1
                if self._skip_depth <= 0:
                    self._skip_tag = None
            return
        self._end(tag)

    def handle_data(self, data: str) -> None:
        if self._skip_tag is not None:
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

    def close(self) -> None:
        super().close()
        while self._tables:
            self._end_table()
        self._flush()

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
            self._end_cell()
            table = self._tables[-1]
            if table.row is None:
                table.row = []
            table.cell = []
        elif cell is not None:
            if tag in _HTML_BLOCK or tag in _HTML_HEADINGS or tag == "br":
                cell.append(" ")
        elif tag in _HTML_HEADINGS:
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


def _html_hidden(attrs: list[tuple[str, str | None]]) -> bool:
    for name, value in attrs:
        if name == "hidden":
            return True
        if name == "aria-hidden" and (value or "").lower() == "true":
            return True
        if name == "style" and value and _HTML_HIDDEN_STYLE.search(value):
            return True
    return False


def parse(data: bytes, request: ParseRequest) -> list[Block]:
    """The whole page (the request's shard and limits do not apply)."""
    extractor = _HTMLTextExtractor()
    extractor.feed(clean_text(decode_text(data, html_declared_charset(data))))
    extractor.close()
    return extractor.blocks
