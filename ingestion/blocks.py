"""What parsers produce and how they fail: blocks, limits and parse errors.

Kept apart from the `formats` package so that the worker process, which only
receives blocks (or chunks and vectors) and errors from its parser processes, never
imports pdfminer, python-docx or lxml.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

HEADING = "heading"
PARAGRAPH = "paragraph"
TABLE_ROW = "table_row"
LIST_ITEM = "list_item"
BLOCK_KINDS = (HEADING, PARAGRAPH, TABLE_ROW, LIST_ITEM)

_MAX_REASON = 200
CELL_SEPARATOR = " | "


@contextmanager
def gc_paused() -> Iterator[None]:
    """Run without the cyclic garbage collector. Parsing and chunking make a block
    or a chunk per few bytes of a dense file, all kept to the end, which every
    collection would scan again (docs/security/parsing.md); they make no cycles
    worth collecting meanwhile."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def table_row_text(cells: list[str]) -> str:
    """A table row as one line: cells joined by " | ", empty cells kept so that each
    value stays under its header cell; "" for a row without any text."""
    return CELL_SEPARATOR.join(cells) if any(cells) else ""


@dataclass(frozen=True)
class Block:
    text: str
    heading_path: tuple[str, ...] = ()
    page: int | None = None  # a PDF's page, a presentation's slide (1-based)
    kind: str = PARAGRAPH
    # A table row's header row, where the parser knows it: repeated at the top of a
    # chunk that starts below the header, so that the row's values keep their names.
    table_header: str = ""
    # The mean confidence (0..1) of the OCR that read the block's page; None for
    # text the file itself holds.
    ocr_confidence: float | None = None

    def to_wire(self) -> list:
        """Plain data for the parser-to-worker pipe (`ingestion/sandbox/wire.py`)."""
        return [
            self.text,
            list(self.heading_path),
            self.page,
            self.kind,
            self.table_header,
            self.ocr_confidence,
        ]

    @classmethod
    def from_wire(cls, value: object) -> Block:
        """A block from `to_wire` data sent by a parser process; WireError if the
        data is not exactly that shape."""
        fields = wire_list(value, 6)
        text, heading_path, page, kind, table_header, ocr_confidence = fields
        if kind not in BLOCK_KINDS:
            raise WireError("unknown block kind")
        return cls(
            text=wire_str(text),
            heading_path=wire_strings(heading_path),
            page=wire_page(page),
            kind=kind,
            table_header=wire_str(table_header),
            ocr_confidence=wire_confidence(ocr_confidence),
        )


class WireError(ValueError):
    """Data from a parser process that is not what the protocol allows."""


def wire_list(value: object, length: int) -> list:
    if type(value) is not list or len(value) != length:
        raise WireError(f"expected a list of {length}")
    return value


def wire_str(value: object) -> str:
    if type(value) is not str:
        raise WireError("expected a string")
    return value


def wire_int(value: object, *, minimum: int = 0) -> int:
    if type(value) is not int or value < minimum:
        raise WireError(f"expected an integer of at least {minimum}")
    return value


def wire_strings(value: object) -> tuple[str, ...]:
    if type(value) is not list:
        raise WireError("expected a list of strings")
    return tuple(wire_str(item) for item in value)


def wire_page(value: object) -> int | None:
    return None if value is None else wire_int(value, minimum=1)


def wire_confidence(value: object) -> float | None:
    if value is None:
        return None
    if type(value) is not float or not (0.0 <= value <= 1.0):
        raise WireError("expected a confidence between 0 and 1")
    return value


class ParseError(Exception):
    """The document cannot be read; `reason` is short and safe to show to users."""

    def __init__(self, reason: str) -> None:
        self.reason = " ".join(reason.split())[:_MAX_REASON]
        super().__init__(self.reason)


class FileTooLarge(ParseError):
    """Beyond a size limit (uncompressed OOXML size, compression ratio, a member
    inflating past its declared size, worksheet cells, memory)."""


class TooManyPages(ParseError):
    """A PDF with more pages, or a presentation with more slides, than allowed."""


class TextTooLarge(ParseError):
    """The document's text is longer than `max_text_chars`."""


class TooManyChunks(ParseError):
    """The document cuts into more than `max_chunks` chunks."""


class TooManyBlocks(TooManyChunks):
    """A text, Markdown or HTML file splits into more than `max_blocks` passages,
    counted as it is read: each one costs the parser time and memory, so a file
    of a passage every few bytes stops early instead of at the time limit."""


class PasswordProtected(ParseError):
    """The file is encrypted and opens only with a password we do not have."""


class OcrUnavailable(ParseError):
    """Pages need OCR, but the OCR engine is not installed or switched off."""


class OcrTimeout(ParseError):
    """One page took longer than the per-page OCR time limit."""


@dataclass(frozen=True)
class ParseLimits:
    """Bounds checked before parsing; `None` switches one off."""

    max_pdf_pages: int | None = 2000
    max_docx_uncompressed_bytes: int | None = 256 * 1024 * 1024
    # Only members above 1 MiB (formats/ooxml.py): small, very regular parts are normal.
    max_docx_compression_ratio: float | None = 100.0
    max_slides: int | None = 2000
    # Rows x columns of one worksheet, as read (not as its dimension claims).
    max_sheet_cells: int | None = 2_000_000
    # OCR of scanned PDF pages and images (ingestion/ocr, docs/ocr.md).
    ocr_enabled: bool = True
    ocr_languages: tuple[str, ...] = ("chi_sim", "chi_tra", "eng")
    ocr_page_seconds: float | None = 60.0
    max_ocr_pages: int | None = 200
    # What one document may produce: characters of text and chunks (settings
    # INGESTION_MAX_TEXT_CHARS, INGESTION_MAX_CHUNKS_PER_DOCUMENT).
    max_text_chars: int | None = 20_000_000
    max_chunks: int | None = 10_000
    # Passages of a text, Markdown or HTML file (INGESTION_MAX_BLOCKS_PER_DOCUMENT).
    max_blocks: int | None = 200_000


def check_text_length(length: int, limit: int | None) -> None:
    """TextTooLarge when `length` characters of text exceed `limit`."""
    if limit is not None and length > limit:
        raise TextTooLarge(
            f"the document holds more than {limit:,} characters of text, the limit"
        )


def check_block_count(count: int, limit: int | None) -> None:
    """TooManyBlocks when `count` passages exceed `limit`."""
    if limit is not None and count > limit:
        raise TooManyBlocks(
            f"the document splits into more than {limit:,} passages, the limit"
        )


def check_chunk_count(count: int, limit: int | None) -> None:
    """TooManyChunks when `count` chunks exceed `limit`."""
    if limit is not None and count > limit:
        raise TooManyChunks(
            f"the document cuts into more than {limit:,} chunks, the limit"
        )
