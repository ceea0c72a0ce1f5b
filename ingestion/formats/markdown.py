"""Markdown (CommonMark and GitHub tables): headings, paragraphs, list items, code
blocks and table rows, with the inline markup stripped."""

from __future__ import annotations

import re
import textwrap
from html import unescape

from ..blocks import HEADING, LIST_ITEM, PARAGRAPH, TABLE_ROW, Block, table_row_text
from .base import ParseRequest
from .encoding import decode_text
from .headings import HeadingStack
from .textutil import clean_text, join_lines

_MD_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_MD_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_MD_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_MD_RULE = re.compile(r"^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$")
_MD_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]+(.*))?$")
_MD_TASK = re.compile(r"^\[[ xX]\][ \t]+")
_MD_QUOTE = re.compile(r"^ {0,3}>[ \t]?")
_MD_REF_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:[ \t]*\S+")
_MD_TABLE_SEP = re.compile(
    r"^[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$"
)
_MD_FRONT_MATTER_KEY = re.compile(r"^[\w-]+[ \t]*:")

_MD_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)
_MD_IMAGE = re.compile(r"!\[[^\]]*\](?:\([^)]*\)|\[[^\]]*\])")
_MD_LINK = re.compile(r"\[([^\]]*)\](?:\([^)]*\)|\[[^\]]*\])")
_MD_AUTOLINK = re.compile(r"<((?:https?|ftp|mailto):[^>\s]+)>")
_MD_HTML_TAG = re.compile(r"<!--.*?-->|</?[A-Za-z][^>]*>", re.DOTALL)
_MD_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_MD_EM_STAR = re.compile(r"(?<![\w*])\*(?=[^\s*])([^*\n]+?)(?<=[^\s*])\*(?![\w*])")
_MD_EM_UNDERSCORE = re.compile(r"(?<![\w_])_(?=[^\s_])([^_\n]+?)(?<=[^\s_])_(?![\w_])")
_MD_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_MD_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


def _strip_markdown_inline(text: str) -> str:
    pieces = _MD_CODE_SPAN.split(text)
    out: list[str] = []
    # split() with two groups yields: text, fence, code, text, fence, code, ...
    for index in range(0, len(pieces), 3):
        plain = pieces[index]
        plain = _MD_IMAGE.sub("", plain)
        plain = _MD_LINK.sub(r"\1", plain)
        plain = _MD_AUTOLINK.sub(r"\1", plain)
        plain = _MD_HTML_TAG.sub("", plain)
        plain = _MD_STRONG.sub(r"\2", plain)
        plain = _MD_EM_STAR.sub(r"\1", plain)
        plain = _MD_EM_UNDERSCORE.sub(r"\1", plain)
        plain = _MD_STRIKE.sub(r"\1", plain)
        plain = _MD_ESCAPE.sub(r"\1", plain)
        out.append(unescape(plain))
        if index + 2 < len(pieces):
            out.append(pieces[index + 2].strip())
    return "".join(out)


def _skip_front_matter(lines: list[str]) -> list[str]:
    if not lines or lines[0].strip() != "---":
        return lines
    for end in range(1, min(len(lines), 100)):
        if lines[end].strip() in ("---", "..."):
            body = [line for line in lines[1:end] if line.strip()]
            if body and all(
                _MD_FRONT_MATTER_KEY.match(line) or line[:1] in " \t-" for line in body
            ):
                return lines[end + 1 :]
            break
    return lines


def _md_table_cells(line: str) -> list[str]:
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|") and not line.endswith("\\|"):
        line = line[:-1]
    cells = re.split(r"(?<!\\)\|", line)
    return [_strip_markdown_inline(cell).strip() for cell in cells]


class _MarkdownReader:
    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self._headings = HeadingStack()
        self._lines: list[str] = []
        self._kind = PARAGRAPH

    def flush(self) -> None:
        if self._lines:
            text = " ".join(_strip_markdown_inline(join_lines(self._lines)).split())
            if text:
                self.emit(text, self._kind)
        self._lines = []
        self._kind = PARAGRAPH

    def emit(self, text: str, kind: str, table_header: str = "") -> None:
        self.blocks.append(
            Block(
                text=text,
                heading_path=self._headings.path,
                kind=kind,
                table_header=table_header,
            )
        )

    def heading(self, level: int, raw: str) -> None:
        self.flush()
        text = " ".join(_strip_markdown_inline(raw).split())
        if not text:
            return
        self._headings.push(level, text)
        self.emit(text, HEADING)

    def read(self, text: str) -> list[Block]:
        lines = _skip_front_matter(clean_text(text).split("\n"))
        index = 0
        while index < len(lines):
            index = self._read_line(lines, index)
        self.flush()
        return self.blocks

    def _read_line(self, lines: list[str], index: int) -> int:
        line = lines[index]
        fence = _MD_FENCE.match(line)
        if fence:
            return self._read_fence(lines, index, fence.group(1))
        if not line.strip():
            self.flush()
            return index + 1
        while _MD_QUOTE.match(line):
            line = _MD_QUOTE.sub("", line, count=1)
        atx = _MD_ATX.match(line)
        if atx:
            self.heading(len(atx.group(1)), atx.group(2) or "")
            return index + 1
        setext = _MD_SETEXT.match(line)
        if setext and self._lines and self._kind == PARAGRAPH:
            raw = " ".join(self._lines)
            self._lines = []
            self.heading(1 if setext.group(1)[0] == "=" else 2, raw)
            return index + 1
        if _MD_RULE.match(line):
            self.flush()
            return index + 1
        if (
            "|" in line
            and index + 1 < len(lines)
            and "|" in lines[index + 1]
            and _MD_TABLE_SEP.match(lines[index + 1])
        ):
            return self._read_table(lines, index)
        item = _MD_LIST_ITEM.match(line)
        if item:
            self.flush()
            self._kind = LIST_ITEM
            self._lines.append(_MD_TASK.sub("", item.group(1) or ""))
            return index + 1
        if _MD_REF_DEF.match(line):
            return index + 1
        self._lines.append(line)
        return index + 1

    def _read_fence(self, lines: list[str], index: int, marker: str) -> int:
        self.flush()
        end = index + 1
        closing = re.compile(rf"^ {{0,3}}{re.escape(marker[0])}{{{len(marker)},}}\s*$")
        while end < len(lines) and not closing.match(lines[end]):
            end += 1
        code = textwrap.dedent("\n".join(lines[index + 1 : end])).strip("\n")
        if code.strip():
            self.emit(code, PARAGRAPH)
        return end + 1

    def _read_table(self, lines: list[str], index: int) -> int:
        self.flush()
        header = table_row_text(_md_table_cells(lines[index]))
        if header:
            self.emit(header, TABLE_ROW)
        index += 2
        while index < len(lines) and lines[index].strip() and "|" in lines[index]:
            row = table_row_text(_md_table_cells(lines[index]))
            if row:
                self.emit(row, TABLE_ROW, header)
            index += 1
        return index


def parse(data: bytes, request: ParseRequest) -> list[Block]:
    """The whole file (the request's shard and limits do not apply)."""
    return _MarkdownReader().read(decode_text(data))
