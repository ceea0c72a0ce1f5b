"""Split parsed blocks into chunks sized for retrieval.

Size is counted in units: one CJK character is one unit and one Latin word is
`max_cjk_chars / max_latin_words` units, so 500 Chinese characters and 300 English
words both fill a chunk, and mixed text lands in between.

- A heading starts a new section; a chunk never spans two heading paths. Heading
  blocks are not chunk text: they live on in `heading_path`. Only a heading with no
  content under it becomes text, so that its words are not lost.
- Inside a section whole blocks (paragraphs, list items, table rows) are packed
  greedily. A block too big for one chunk is cut at sentence ends, then at `;`, then
  at commas, then at whitespace; only CJK text (or a "word" of hundreds of characters,
  such as base64) is cut between characters. A Latin word is never cut.
- Each chunk after the first of a section starts with whole trailing sentences of the
  previous chunk, about `overlap_ratio` of the budget, so that a passage crossing the
  seam is still found whole. The overlap counts against the budget.
- A chunk that starts with a table row below its table's header row (the row's
  `table_header`) starts with a copy of the header row, so that its values keep
  their column names. The copy counts against the budget.

Offsets index `full_text(blocks)`, and `c.text` ends with
`full_text(blocks)[c.char_start:c.char_end]`; what comes before it, if anything, is
the copied header row and a blank line. With an overlap, `char_start` lies inside
the previous chunk.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import pairwise

from core.text import UNSPACED
from ingestion.blocks import (
    HEADING,
    Block,
    WireError,
    check_chunk_count,
    gc_paused,
    wire_confidence,
    wire_int,
    wire_list,
    wire_page,
    wire_str,
    wire_strings,
)

SEPARATOR = "\n\n"

_CJK_RE = re.compile(f"[{UNSPACED}]")
_WORD_RE = re.compile(rf"[^\s{UNSPACED}]+")
_HARD_TOKEN_RE = re.compile(rf"[{UNSPACED}]|[^{UNSPACED}]+")
# Longer "words" (URLs, hashes, base64) weigh as several, so they cannot bloat a chunk.
_MAX_WORD_CHARS = 25

# Closing quotes and brackets that stay with the sentence they end.
_CLOSERS = "\u201d\u2019\u300d\u300f\uff09)\\]\"'"
# Places a too-long text may be cut, strongest first.
_BREAKS = (
    # Sentence ends: CJK full stop, exclamation and question marks (also fullwidth),
    # a Latin full stop only before whitespace (not in 3.5 or example.com), newlines.
    # A run of full stops is tried from its first only, and never given back, so a
    # long run costs its length once.
    re.compile(
        rf"[\u3002\uff01\uff1f!?]+[{_CLOSERS}]*|(?<!\.)\.++[{_CLOSERS}]*+(?=\s)|\n+",
    ),
    re.compile("[\uff1b;]"),  # semicolons
    re.compile("[\uff0c,\u3001\uff1a:]"),  # commas, enumeration commas, colons
    re.compile(r"\s+"),
)


@dataclass(frozen=True)
class Chunk:
    ordinal: int
    text: str
    heading_path: tuple[str, ...]
    page: int | None
    char_start: int
    char_end: int
    # The OCR confidence of the page the chunk starts on; None if not from OCR.
    ocr_confidence: float | None = None

    def to_wire(self) -> list:
        """Plain data for the parser-to-worker pipe (`ingestion/sandbox/wire.py`)."""
        return [
            self.ordinal,
            self.text,
            list(self.heading_path),
            self.page,
            self.char_start,
            self.char_end,
            self.ocr_confidence,
        ]

    @classmethod
    def from_wire(cls, value: object) -> Chunk:
        """A chunk from `to_wire` data sent by a parser process; WireError if the
        data is not exactly that shape (offsets in order included)."""
        ordinal, text, heading_path, page, start, end, confidence = wire_list(value, 7)
        chunk = cls(
            ordinal=wire_int(ordinal),
            text=wire_str(text),
            heading_path=wire_strings(heading_path),
            page=wire_page(page),
            char_start=wire_int(start),
            char_end=wire_int(end),
            ocr_confidence=wire_confidence(confidence),
        )
        if chunk.char_end < chunk.char_start:
            raise WireError("chunk offsets out of order")
        return chunk


def full_text(blocks: Sequence[Block]) -> str:
    """The text chunk offsets refer to: non-empty block texts joined by a blank line."""
    return SEPARATOR.join(block.text for block in blocks if block.text.strip())


def text_units(
    text: str, *, max_cjk_chars: int = 500, max_latin_words: int = 300
) -> float:
    """Size of `text` in chunk units (see the module docstring)."""
    return _Measure(max_cjk_chars / max_latin_words)(text)


@gc_paused()
def chunk_blocks(
    blocks: Sequence[Block],
    *,
    max_cjk_chars: int = 500,
    max_latin_words: int = 300,
    overlap_ratio: float = 0.1,
    max_chunks: int | None = None,
) -> list[Chunk]:
    """The blocks' chunks; `TooManyChunks` as soon as there are more than
    `max_chunks` (a small file of many tiny sections can make thousands)."""
    if max_cjk_chars < 1 or max_latin_words < 1:
        raise ValueError("chunk budgets must be at least 1")
    if not 0 <= overlap_ratio < 1:
        raise ValueError("overlap_ratio must be in [0, 1)")
    kept = [block for block in blocks if block.text.strip()]
    packer = _Packer(
        SEPARATOR.join(block.text for block in kept),
        budget=max_cjk_chars,
        word_weight=max_cjk_chars / max_latin_words,
        overlap=overlap_ratio * max_cjk_chars,
    )
    chunks: list[Chunk] = []
    read_by_ocr = {
        block.page: block.ocr_confidence
        for block in kept
        if block.ocr_confidence is not None
    }
    for path, spans in _sections(kept):
        pieces = [
            piece
            for start, end, page, header in spans
            for piece in packer.pieces(start, end, page, header)
        ]
        for text, start, end, page in packer.pack(pieces):
            check_chunk_count(len(chunks) + 1, max_chunks)
            chunks.append(
                Chunk(
                    ordinal=len(chunks),
                    text=text,
                    heading_path=path,
                    page=page,
                    char_start=start,
                    char_end=end,
                    ocr_confidence=read_by_ocr.get(page),
                )
            )
    return chunks


def join_chunk_runs(runs: Iterable[tuple[Sequence[Chunk], int]]) -> list[Chunk]:
    """Chunks of consecutive runs of blocks, each run chunked alone, numbered and
    placed as if the blocks had been chunked at once.

    Each run comes with the length of its own `full_text`. The result equals
    `chunk_blocks` of all the blocks when every run after the first starts with a
    heading that follows content: no chunk or overlap reaches across a heading.
    """
    chunks: list[Chunk] = []
    offset = 0
    for run, text_length in runs:
        if not text_length:
            continue
        for chunk in run:
            chunks.append(
                replace(
                    chunk,
                    ordinal=len(chunks),
                    char_start=chunk.char_start + offset,
                    char_end=chunk.char_end + offset,
                )
            )
        offset += text_length + len(SEPARATOR)
    return chunks


_Span = tuple[int, int, int | None, str]  # start, end, page, table header


def _sections(blocks: list[Block]) -> Iterator[tuple[tuple[str, ...], list[_Span]]]:
    """Runs of content blocks sharing a heading path, with their stripped offsets."""
    path: tuple[str, ...] | None = None
    spans: list[_Span] = []
    offset = 0
    for index, block in enumerate(blocks):
        start = offset + len(block.text) - len(block.text.lstrip())
        end = offset + len(block.text.rstrip())
        offset += len(block.text) + len(SEPARATOR)
        if block.kind == HEADING:
            if spans and path is not None:
                yield path, spans
            path, spans = None, []
            if _is_empty_section(blocks, index):
                yield block.heading_path, [(start, end, block.page, "")]
            continue
        if block.heading_path != path:
            if spans and path is not None:
                yield path, spans
            path, spans = block.heading_path, []
        spans.append((start, end, block.page, block.table_header.strip()))
    if spans and path is not None:
        yield path, spans


def _is_empty_section(blocks: list[Block], index: int) -> bool:
    """A heading with nothing under it: the next block is not inside its section."""
    if index + 1 == len(blocks):
        return True
    heading, following = blocks[index], blocks[index + 1]
    depth = len(heading.heading_path)
    if following.heading_path[:depth] != heading.heading_path:
        return True
    return following.kind == HEADING and len(following.heading_path) <= depth


class _Measure:
    def __init__(self, word_weight: float) -> None:
        self.word_weight = word_weight

    def __call__(self, text: str) -> float:
        if text.isascii() or not _CJK_RE.search(text):
            words, cjk_chars = text.split(), 0  # without CJK, split() finds the words
        else:
            words, cjk_chars = _WORD_RE.findall(text), len(_CJK_RE.findall(text))
        count = len(words)
        if count and max(map(len, words)) > _MAX_WORD_CHARS:
            count = sum(math.ceil(len(word) / _MAX_WORD_CHARS) for word in words)
        return cjk_chars + count * self.word_weight


@dataclass(frozen=True, slots=True)
class _Piece:
    start: int
    end: int
    units: float
    page: int | None
    header: str = ""  # the table header row of the block it is cut from


class _Packer:
    def __init__(
        self, text: str, *, budget: float, word_weight: float, overlap: float
    ) -> None:
        self.text = text
        self.budget = budget
        self.overlap = overlap
        self.measure = _Measure(word_weight)
        # Characters of an unbroken Latin token that still fit in one chunk.
        self.max_token_chars = _MAX_WORD_CHARS * max(
            1, math.floor(budget / word_weight)
        )

    # -- cutting blocks into pieces no bigger than the budget

    def pieces(
        self, start: int, end: int, page: int | None, header: str = ""
    ) -> list[_Piece]:
        return [
            _Piece(s, e, units, page, header)
            for s, e, units in self._split(start, end, 0)
        ]

    def _split(
        self, start: int, end: int, level: int
    ) -> Iterator[tuple[int, int, float]]:
        units = self.measure(self.text[start:end])
        if units <= self.budget:
            yield start, end, units
            return
        if level == len(_BREAKS):
            yield from self._split_between_characters(start, end)
            return
        cuts = [m.end() for m in _BREAKS[level].finditer(self.text, start, end)]
        segments = [
            span
            for span in (self._strip(a, b) for a, b in pairwise([start, *cuts, end]))
            if span is not None
        ]
        if len(segments) <= 1:
            yield from self._split(start, end, level + 1)
            return
        for a, b in segments:
            yield from self._split(a, b, level + 1)

    def _strip(self, start: int, end: int) -> tuple[int, int] | None:
        segment = self.text[start:end]
        stripped = segment.strip()
        if not stripped:
            return None
        start += len(segment) - len(segment.lstrip())
        return start, start + len(stripped)

    def _split_between_characters(
        self, start: int, end: int
    ) -> Iterator[tuple[int, int, float]]:
        """Cut text without breaks: between CJK characters, never inside a word."""
        piece_start, used = start, 0.0
        for match in _HARD_TOKEN_RE.finditer(self.text, start, end):
            units = self.measure(match.group())
            if units > self.budget:
                # Not a word but a blob: cut it in fixed slices.
                if piece_start < match.start():
                    yield piece_start, match.start(), used
                for s in range(match.start(), match.end(), self.max_token_chars):
                    e = min(s + self.max_token_chars, match.end())
                    yield s, e, self.measure(self.text[s:e])
                piece_start, used = match.end(), 0.0
                continue
            if used + units > self.budget and piece_start < match.start():
                yield piece_start, match.start(), used
                piece_start, used = match.start(), 0.0
            used += units
        if piece_start < end:
            yield piece_start, end, used

    # -- packing pieces into chunks

    def pack(self, pieces: list[_Piece]) -> Iterator[tuple[str, int, int, int | None]]:
        """Yield (text, start, end, page) per chunk of one section."""
        current: list[_Piece] = []
        used = 0.0
        overlap_start: int | None = None
        prefix = ""
        tail: list[tuple[int, float]] = []
        for piece in pieces:
            if current and used + piece.units > self.budget:
                yield self._chunk(current, overlap_start, prefix)
                tail = self._tail(current[0].start, current[-1].end)
                current, used, overlap_start = [], 0.0, None
            if not current:
                header_units = self.measure(piece.header) if piece.header else 0.0
                if header_units + piece.units > self.budget:
                    header_units = 0.0  # no room: the row goes without its header
                used = header_units
                room = min(self.overlap, self.budget - piece.units - header_units)
                for start, units in tail:
                    if units <= room:
                        overlap_start, used = start, used + units
                        break
                tail = []
                prefix = piece.header + SEPARATOR if header_units else ""
                if (
                    prefix
                    and overlap_start is not None
                    and self.text.startswith(piece.header, overlap_start)
                ):
                    prefix, used = "", used - header_units  # the overlap holds it
            current.append(piece)
            used += piece.units
        if current:
            yield self._chunk(current, overlap_start, prefix)

    def _chunk(
        self, pieces: list[_Piece], overlap_start: int | None, prefix: str
    ) -> tuple[str, int, int, int | None]:
        start = pieces[0].start if overlap_start is None else overlap_start
        end = pieces[-1].end
        return prefix + self.text[start:end], start, end, pieces[0].page

    def _tail(self, start: int, end: int) -> list[tuple[int, float]]:
        """Starts of trailing whole sentences that fit the overlap, longest first."""
        breaks = [m.end() for m in _BREAKS[0].finditer(self.text, start, end)]
        tail: list[tuple[int, float]] = []
        previous = None
        # From the last sentence backwards, until one no longer fits.
        for break_end in reversed(breaks):
            span = self._strip(break_end, end)
            if span is None or span[0] <= start or span[0] == previous:
                continue
            previous = span[0]
            units = self.measure(self.text[span[0] : end])
            if units > self.overlap:
                break
            tail.append((span[0], units))
        tail.reverse()
        return tail
