"""Document formats: bytes in, a flat list of text blocks out.

One module per format, each with a `parse(data, request)` (see `base.Parser`),
named after its `FileKind` (`documents/kinds.py`, which declares every format
once): `PARSERS` maps each declared kind to its module's `parse`, as Django's
`get_hasher()` maps a name to a hasher. Adding a format is a module here and a
line in `FILE_KINDS` (docs/architecture.md, "A new file format").

Every parser returns blocks in reading order. A heading is emitted as a `heading`
block and also becomes part of the `heading_path` of every block below it, until a
heading of the same or a higher level replaces it. PDF blocks carry their 1-based
page number, PPTX blocks their slide's.

Whatever is wrong with the input surfaces as `ParseError`, whose `reason` is short and
safe to show to users or store on a task row: no paths, no tracebacks. Inputs beyond
`ParseLimits` raise its subclasses `FileTooLarge` and `TooManyPages`, checked before
the expensive work starts (a DOCX, PPTX or XLSX is measured from its zip directory,
and its members inflated in bounded chunks that may not pass their declared size),
and `TextTooLarge` for more text than one document may produce.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from importlib import import_module

from documents.kinds import FILE_KINDS, FileKind

from ..blocks import Block, ParseError, ParseLimits, check_text_length, gc_paused
from .base import Parser, ParseRequest


def _parser(kind: FileKind) -> Parser:
    """The `parse` of the module named after `kind`, e.g. `formats/pdf.py`."""
    return import_module(f"{__name__}.{kind.name}").parse


PARSERS: dict[FileKind, Parser] = {kind: _parser(kind) for kind in FILE_KINDS}


def parse_document(
    kind: str,
    data: bytes,
    limits: ParseLimits | None = None,
    *,
    shard: tuple[int, int] = (0, 1),
    retain: list | None = None,
    progress: Callable[[int, int], None] | None = None,
    more_time: Callable[[float], None] | None = None,
    known_ocr: Mapping[int, list[Block]] | None = None,
    ocr_read: Callable[[int, list[Block]], None] | None = None,
) -> list[Block]:
    """Parse `data` as the kind named `kind` (`FILE_KINDS`); only ParseError
    escapes.

    `shard` = (index, count) lets `count` processes share one file: the PDF pages
    whose 0-based number is `index` modulo `count`, or the index-th run of a DOCX
    body, cut at headings. Other kinds are read whole. A DOCX's XML tree is
    appended to `retain`, if given, for the caller to free when it suits it.
    `progress(done, total)` hears of each page of this shard read (PDF, images);
    `more_time(seconds)` of a slow page about to be read (OCR); `known_ocr` and
    `ocr_read` carry OCR'd pages between attempts (`ParseRequest`). Text beyond
    `max_text_chars` raises TextTooLarge here, before it is chunked.
    """
    try:
        parser = PARSERS[FILE_KINDS.named(kind)]
    except ValueError:
        raise ParseError(f"unsupported document kind: {kind[:40]}") from None
    request = ParseRequest(limits=limits or ParseLimits(), shard=shard, retain=retain)
    if progress is not None:
        request = replace(request, progress=progress)
    if more_time is not None:
        request = replace(request, more_time=more_time)
    if known_ocr:
        request = replace(request, known_ocr=known_ocr)
    if ocr_read is not None:
        request = replace(request, ocr_read=ocr_read)
    try:
        with gc_paused():
            blocks = parser(data, request)
    except (ParseError, MemoryError):
        raise
    except Exception as exc:
        raise ParseError(f"unreadable {kind} document: {type(exc).__name__}") from exc
    kept = [block for block in blocks if block.text.strip()]
    check_text_length(
        sum(len(block.text) for block in kept), request.limits.max_text_chars
    )
    return kept


__all__ = ["PARSERS", "ParseRequest", "Parser", "parse_document"]
