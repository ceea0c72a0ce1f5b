"""What every format parser is given and must return."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from ..blocks import Block, ParseLimits


def _no_progress(done: int, total: int) -> None:
    return None


def _no_time(seconds: float) -> None:
    return None


def _no_page(number: int, blocks: list[Block]) -> None:
    return None


@dataclass(frozen=True)
class ParseRequest:
    """How to read one document, besides its bytes.

    `shard` = (index, count) asks for the index-th of `count` shares of the file
    (formats that cannot share a file read it whole); `retain` collects objects that
    are costly to free, for the caller to drop when it suits it; `progress(done,
    total)` is told of each page read by a format that reads page by page (its
    share of the pages, when sharded); `more_time(seconds)`, called before every
    page read by OCR (the worker counts OCR pages by it), asks for the time limit
    to be extended, which the page's own limit bounds (0 without one); `known_ocr`
    holds the pages a previous attempt read by OCR (number -> blocks), used instead
    of reading them again, and `ocr_read(number, blocks)` is told of each page read
    by OCR now, for the next attempt to find. A new need becomes a field with a
    default, so that parsers that do not use it stay as they are.
    """

    limits: ParseLimits = field(default_factory=ParseLimits)
    shard: tuple[int, int] = (0, 1)
    retain: list | None = None
    progress: Callable[[int, int], None] = _no_progress
    more_time: Callable[[float], None] = _no_time
    known_ocr: Mapping[int, list[Block]] = field(default_factory=dict)
    ocr_read: Callable[[int, list[Block]], None] = _no_page


# Each format module's `parse`: blocks in reading order; bad input raises ParseError.
Parser = Callable[[bytes, ParseRequest], list[Block]]
