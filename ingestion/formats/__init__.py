"""Document formats: bytes in, a flat list of text blocks out.

One module per format, each with a `parse(data, request)` (see `base.Parser`);
`PARSERS` maps a document kind to its parser, as Django's `get_hasher()` maps a name
to a hasher. Adding a format is a module and a line here.

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

from ..blocks import Block, ParseError, ParseLimits, check_text_length, gc_paused
from . import docx, html, image, markdown, pdf, pptx, text, xlsx
from .base import Parser, ParseRequest

PARSERS: dict[str, Parser] = {
    "pdf": pdf.parse,
    "docx": docx.parse,
    "pptx": pptx.parse,
    "xlsx": xlsx.parse,
    "markdown": markdown.parse,
    "html": html.parse,
    "text": text.parse,
    "image": image.parse,
}


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
    """Parse `data` as `kind` (one of DOCUMENT_KINDS); only ParseError escapes.

    `shard` = (index, count) lets `count` processes share one file: the PDF pages
    whose 0-based number is `index` modulo `count`, or the index-th run of a DOCX
    body, cut at headings. Other kinds are read whole. A DOCX's XML tree is
    appended to `retain`, if given, for the caller to free when it suits it.
    `progress(done, total)` hears of each page of this shard read (PDF, images);
    `more_time(seconds)` of a slow page about to be read (OCR); `known_ocr` and
    `ocr_read` carry OCR'd pages between attempts (`ParseRequest`). Text beyond
    `max_text_chars` raises TextTooLarge here, before it is chunked.
    """
    parser = PARSERS.get(kind)
    if parser is None:
        raise ParseError(f"unsupported document kind: {kind[:40]}")
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
