"""Pages that share their content: read once, and counted before the rest is read.

Many pages of a PDF may point at one content stream with the same resources,
boxes and annotations: they look the same, so the first one's blocks (its OCR
included) serve the others. A small file built that way can multiply one page's
text by thousands of pages; before any other page is read, each shared page is
read once and its text, times its pages, must fit the document's limits on text
and chunks (`TextTooLarge`, `TooManyChunks`), so such a file is refused in about
the time of reading one page instead of all of them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from dataclasses import replace

from pdfminer.pdfpage import PDFPage
from pdfminer.pdftypes import PDFObjRef, PDFStream
from pdfminer.psparser import PSLiteral

from ..blocks import HEADING, Block, ParseLimits, check_chunk_count, check_text_length
from ..chunking import SEPARATOR, text_units

# Chunk units at most in one chunk (`chunking.chunk_blocks`' default budget): a
# document of N units cuts into at least N / CHUNK_UNITS chunks.
CHUNK_UNITS = 500
# Nodes of a page's resources looked at to compare them; past it, the page is
# taken as unlike any other.
_MAX_FINGERPRINT_NODES = 500


class _TooComplex(Exception):
    pass


class SharedPages:
    """Which pages look the same as an earlier one, and the blocks of each such
    group's first page once read."""

    def __init__(self, pages: list[PDFPage]) -> None:
        self._first: dict[int, int] = {}  # page number -> first page like it
        self.counts: dict[int, int] = {}  # first page of a group -> pages in it
        firsts: dict[Hashable, int] = {}
        for number, page in enumerate(pages, start=1):
            first = firsts.setdefault(_page_key(page, number), number)
            self._first[number] = first
            self.counts[first] = self.counts.get(first, 0) + 1
        # By a group's first page: its text layer, read by `check_cost`, and
        # its final blocks, once one page of the group has been read whole.
        self._text: dict[int, list[Block]] = {}
        self._final: dict[int, list[Block]] = {}

    @classmethod
    def unshared(cls, count: int) -> SharedPages:
        """`count` pages each read as if alone (a short document, whose
        pdfminer pages are not made to compare them)."""
        shared = cls([])
        shared._first = {number: number for number in range(1, count + 1)}
        shared.counts = dict.fromkeys(range(1, count + 1), 1)
        return shared

    def shared_firsts(self) -> list[int]:
        return [first for first, count in self.counts.items() if count > 1]

    def check_cost(
        self, read_page: Callable[[int], list[Block]], limits: ParseLimits
    ) -> None:
        """Read the first page of each group once (text layer only) and refuse
        the document if those pages alone, times their copies, are too much."""
        chars = units = 0.0
        for first in self.shared_firsts():
            blocks = read_page(first)
            self._text[first] = blocks
            texts = [block.text for block in blocks if block.text.strip()]
            count = self.counts[first]
            chars += count * (sum(map(len, texts)) + len(SEPARATOR) * len(texts))
            units += count * sum(
                text_units(block.text)
                for block in blocks
                if block.text.strip() and block.kind != HEADING
            )
            check_text_length(int(chars), limits.max_text_chars)
            check_chunk_count(math.floor(units / CHUNK_UNITS), limits.max_chunks)

    def text_layer(self, number: int) -> list[Block] | None:
        """The page's text-layer blocks if `check_cost` read a page like it."""
        blocks = self._text.get(self._first[number])
        return None if blocks is None else _renumbered(blocks, number)

    def copy(self, number: int) -> list[Block] | None:
        """The page's final blocks (OCR included), copied from a page like it
        that was read before; None when the page must be read."""
        blocks = self._final.get(self._first[number])
        return None if blocks is None else _renumbered(blocks, number)

    def remember(self, number: int, blocks: list[Block]) -> None:
        """The final blocks of a page, for the pages like it."""
        first = self._first[number]
        if self.counts[first] > 1:
            self._final.setdefault(first, blocks)


def _renumbered(blocks: list[Block], number: int) -> list[Block]:
    return [replace(block, page=number) for block in blocks]


def _page_key(page: PDFPage, number: int) -> Hashable:
    """What decides how a page looks: equal keys, equal pages."""
    try:
        budget = [_MAX_FINGERPRINT_NODES]
        return (
            tuple(id(stream) for stream in page.contents),  # resolved once, cached
            _fingerprint(page.resources, budget),
            _fingerprint(page.annots, budget),
            tuple(page.mediabox),
            tuple(page.cropbox),
            page.rotate,
        )
    except (_TooComplex, TypeError):
        return ("alone", number)


def _fingerprint(value: object, budget: list[int]) -> Hashable:
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooComplex
    if isinstance(value, dict):
        return (
            "dict",
            *sorted(
                ((str(key), _fingerprint(item, budget)) for key, item in value.items()),
                key=lambda pair: pair[0],
            ),
        )
    if isinstance(value, list | tuple):
        return ("list", *(_fingerprint(item, budget) for item in value))
    if isinstance(value, PDFObjRef):
        return ("ref", value.objid)
    if isinstance(value, PSLiteral):
        return ("name", str(value.name))
    if value is None or isinstance(value, int | float | bool | str | bytes):
        return value
    if isinstance(value, PDFStream):
        return ("stream", id(value))
    raise _TooComplex
