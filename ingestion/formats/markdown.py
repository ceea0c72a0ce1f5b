"""Markdown (CommonMark and GitHub tables): headings, paragraphs, list items, code
blocks and table rows, with the inline markup stripped."""

from __future__ import annotations

import re
import textwrap
from html import unescape
from itertools import chain

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
from .encoding import decode_text
from .headings import HeadingStack
from .textutil import clean_text, join_lines

# Every pattern here runs in time linear in its input (docs/security/parsing.md):
# each starts with a literal, so a search skips to the next candidate in C; what an
# attempt scans stops at the next character that could start another attempt (an
# opening bracket, a delimiter, the separators below), so failed attempts do not
# rescan the same text; and possessive quantifiers (*+, ++) never give back what
# they took. Replacements keep one group through split() and join(), in C, rather
# than a Python call per match.
_MD_ATX = re.compile(r" {0,3}(#{1,6})(?=[ \t]|$)")
_MD_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_MD_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_MD_RULE = re.compile(r"^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$")
_MD_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]+(.*))?$")
_MD_TASK = re.compile(r"^\[[ xX]\][ \t]+")
_MD_QUOTES = re.compile(r"(?: {0,3}>[ \t]?)++")
_MD_REF_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:[ \t]*\S+")
_MD_TABLE_SEP = re.compile(
    r"^[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$"
)
_MD_FRONT_MATTER_KEY = re.compile(r"^[\w-]+[ \t]*:")

# Separators of the inline text: \x00 stands for a code span, \x01 between the
# cells of a table row. Neither survives clean_text, and no pattern crosses one.
_CODE = "\x00"
_CELL = "\x01"
_X = _CODE + _CELL
# A run of up to 16 backticks opens a code span that the next run of the same
# length closes (CommonMark); one longer is text. Only the last run of each
# length can fail to close, so at most 16 attempts scan far.
_MD_CODE_SPAN = re.compile(
    rf"(`(?<!``)`{{0,15}}+)(?!`)((?:[^`{_X}]++|`++)+?)(?<!`)\1(?!`)"
)
_BRACKETED = rf"\[[^\[\]{_X}]*+\]"
# A link destination, with one level of parentheses inside: (Foo_(bar)).
_PARENTHESISED = rf"\([^(){_X}]*+(?:\([^(){_X}]*+\)[^(){_X}]*+)*+\)"
_MD_IMAGE = re.compile(rf"!{_BRACKETED}(?:{_PARENTHESISED}|{_BRACKETED})")
_MD_LINK = re.compile(rf"\[([^\[\]{_X}]*+)\](?:{_PARENTHESISED}|{_BRACKETED})")
_MD_AUTOLINK = re.compile(rf"<((?:https?|ftp|mailto):[^<>\s{_X}]++)>")
_MD_HTML_COMMENT = re.compile(rf"<!--(?:[^-<{_X}]++|-(?!->)|<(?!!--))*+-->")
_MD_HTML_TAG = re.compile(rf"</?[A-Za-z][^<>{_X}]*+>")


def _paired(delimiter: str) -> re.Pattern[str]:
    """`**text**`: the text may not hold the delimiter, and touches it."""
    d, c = re.escape(delimiter), re.escape(delimiter[0])
    body = rf"[^{c}{_X}]*+(?:{c}(?!{c})[^{c}{_X}]*+)*+"
    return re.compile(rf"{d}(?=[^\s{c}])({body})(?<=\S){d}")


def _single(delimiter: str) -> re.Pattern[str]:
    """`*text*` not inside a word."""
    c = re.escape(delimiter)
    return re.compile(
        rf"{c}(?<![\w{c}]{c})(?=[^\s{c}])([^{c}\n{_X}]++)(?<=[^\s{c}]){c}(?![\w{c}])"
    )


_MD_STRONG_STAR = _paired("**")
_MD_STRONG_UNDERSCORE = _paired("__")
_MD_EM_STAR = _single("*")
_MD_EM_UNDERSCORE = _single("_")
_MD_STRIKE = _paired("~~")
_MD_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_MD_CELL_PIPE = re.compile(r"(?<!\\)\|")
# Every inline pattern, and html.unescape, needs one of these.
_MD_INLINE_MARK = re.compile(r"[`*_~\[<&\\]")
_EMPHASIS_AND_ESCAPES = (
    _MD_STRONG_STAR,
    _MD_STRONG_UNDERSCORE,
    _MD_EM_STAR,
    _MD_EM_UNDERSCORE,
    _MD_STRIKE,
    _MD_ESCAPE,
)


def _keep_group(pattern: re.Pattern[str], text: str) -> str:
    """pattern.sub(r"\1", text), without a Python call per match."""
    return "".join(pattern.split(text))


def _strip_markdown_inline(text: str) -> str:
    return _strip_inline_cells([text])[0]


def _strip_inline_cells(cells: list[str]) -> list[str]:
    """Each text with its inline markup stripped; code spans are kept as written."""
    text = _CELL.join(cells)
    if not _MD_INLINE_MARK.search(text):
        return cells
    # split() with two groups yields: text, fence, code, text, fence, code, ...
    pieces = _MD_CODE_SPAN.split(text)
    plain = _CODE.join(pieces[0::3])
    plain = _MD_IMAGE.sub("", plain)
    plain = _keep_group(_MD_LINK, plain)
    plain = _keep_group(_MD_AUTOLINK, plain)
    plain = _MD_HTML_COMMENT.sub("", plain)
    plain = _MD_HTML_TAG.sub("", plain)
    for pattern in _EMPHASIS_AND_ESCAPES:
        plain = _keep_group(pattern, plain)
    plain = unescape(plain)
    codes = map(str.strip, pieces[2::3])
    texts = plain.split(_CODE)
    pairs = zip(texts[:-1], codes, strict=True)
    joined = "".join(chain.from_iterable(pairs)) + texts[-1]
    return joined.split(_CELL)


def _atx_title(rest: str) -> str:
    """The title after an ATX heading's #s, without its closing #s (CommonMark)."""
    title = rest.strip(" \t")
    unclosed = title.rstrip("#")
    if not unclosed:
        return ""
    if unclosed[-1] in " \t":
        return unclosed.rstrip(" \t")
    return title


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
    return [cell.strip() for cell in _strip_inline_cells(_MD_CELL_PIPE.split(line))]


class _MarkdownReader:
    def __init__(self, max_blocks: int | None = None) -> None:
        self.blocks: list[Block] = []
        self._max_blocks = max_blocks
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
        check_block_count(len(self.blocks), self._max_blocks)

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
        if line[0].isalpha() and "|" not in line:
            self._lines.append(line)  # prose: no block starts with a letter
            return index + 1
        quotes = _MD_QUOTES.match(line)
        if quotes:
            line = line[quotes.end() :]
        return self._read_marked_line(lines, index, line)

    def _read_marked_line(self, lines: list[str], index: int, line: str) -> int:
        """`lines[index]`, without its quote markers as `line`: a heading, a rule,
        a table, a list item, a link reference definition or more of a paragraph."""
        atx = _MD_ATX.match(line)
        if atx:
            self.heading(len(atx.group(1)), _atx_title(line[atx.end() :]))
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
    """The whole file (the request's shard does not apply)."""
    return _MarkdownReader(request.limits.max_blocks).read(decode_text(data))
