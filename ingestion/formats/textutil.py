"""Text helpers shared by the formats: CJK-aware line joining and clean-up."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from core.text import RADICALS, UNSPACED

_CJK_RE = re.compile(f"[{UNSPACED}]")
CJK_FIRST = RADICALS[0]  # the lowest code point of UNSPACED: a cheap test first
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")
_HYPHENATED_END = re.compile(r"[^\W\d_][-\u2010]")
_SOFT_HYPHEN = "\u00ad"
_BLANK_LINE = re.compile(r"\n[ \t\v\u3000]*+\n")


def is_cjk(char: str) -> bool:
    return char >= CJK_FIRST and _CJK_RE.match(char) is not None


def remove_control_chars(text: str) -> str:
    """Drop C0 controls other than tab, newline, form feed and carriage return."""
    return _CONTROL_RE.sub("", text)


def join_lines(lines: Iterable[str], *, dehyphenate: bool = False) -> str:
    """Join wrapped lines into one paragraph, collapsing whitespace.

    No space is inserted where either side is CJK or after a soft hyphen; with
    `dehyphenate`, a word broken by a hyphen at the line end is glued back when the
    next line starts in lowercase. Soft hyphens are dropped.
    """
    if isinstance(lines, list) and len(lines) == 1:  # most PDF paragraphs and cells
        return " ".join(lines[0].split()).replace(_SOFT_HYPHEN, "")
    parts: list[str] = []
    previous = ""
    for raw in lines:
        line = " ".join(raw.split())
        if not line:
            continue
        if previous and previous[-1] != _SOFT_HYPHEN:
            if (
                dehyphenate
                and line[0].islower()
                and _HYPHENATED_END.fullmatch(previous[-2:])
            ):
                parts[-1] = parts[-1][:-1]
            elif not (is_cjk(previous[-1]) or is_cjk(line[0])):
                parts.append(" ")
        parts.append(line)
        previous = line
    return "".join(parts).replace(_SOFT_HYPHEN, "")


def clean_text(text: str) -> str:
    """Unix line ends, a form feed as a paragraph break, no control characters."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\f", "\n\n")
    return remove_control_chars(text)


def iter_paragraphs(text: str) -> Iterator[str]:
    """Split on blank lines; join the lines of each paragraph."""
    for chunk in _BLANK_LINE.split(text):
        paragraph = join_lines(chunk.split("\n"))
        if paragraph:
            yield paragraph


def paragraphs(text: str) -> list[str]:
    return list(iter_paragraphs(text))
