"""What goes over a parser's pipe: plain data (msgpack), checked before it is used.

A parser process reads hostile files with large libraries; if one of them is made
to run code, what it sends back must not run code in the worker too. So the worker
never unpickles a reply: every message is msgpack of lists, strings, numbers and
bytes, one of a few known kinds, and is checked field by field before anything is
built from it. Anything else is a `ReplyRejected` (a parse error: the file is the
likeliest cause), and the parser that sent it is stopped.

    request   [operation, kind, data, limits, [index, count], embedder | nil,
               embed_batch, [[page, [block, ...]], ...]]
    replies   ["progress", done, total]       pages read so far
              ["page", number, [block, ...]]  a page just read by OCR
              ["time", seconds]               an OCR page starts: wait longer
              ["embedded", done, total]       chunks embedded so far (0 first)
              ["ok", [block, ...]]            operation "blocks"
              ["ok", [[chunk, ...], vectors | nil, text_length(, terms)]]
                                              operation "chunks"
              ["error", class name, reason]   a ParseError (by name, registry below)
              ["memory"]                      MemoryError
              ["failed", exception type name] a fault of ours in the parser

Vectors are little-endian float32 bytes, one row of the embedder's dimension per
chunk, made `embed_batch` chunks at a time; terms, sent with them, are one
`[terms, length, folds]` per chunk (`retrieval.terms`). The embedder travels the
other way pickled: the parser trusts its worker. The request's last field holds
the pages an earlier attempt read by OCR, used instead of reading them again; each
page read by OCR now comes back in a "page" message before its "progress", for
the worker to keep (`ingestion/checkpoints.py`).
"""

from __future__ import annotations

import math
import pickle
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

import msgpack
import numpy as np

from retrieval.terms import ChunkTerms, valid_terms

from ..blocks import (
    Block,
    ParseError,
    ParseLimits,
    WireError,
    wire_int,
    wire_list,
    wire_str,
)
from ..chunking import Chunk

if TYPE_CHECKING:
    from retrieval.embeddings import Embedder

OPERATIONS = ("blocks", "chunks")
_MAX_NAME = 100
_MAX_REASON = 1000


class ReplyRejected(ParseError):
    """A parser sent something the protocol does not allow; it was not used."""


@dataclass(frozen=True)
class Request:
    operation: str
    kind: str
    data: bytes
    limits: ParseLimits
    shard: tuple[int, int]
    embedder: Embedder | None = None
    embed_batch: int = 32  # chunks per embed() call and per "embedded" report
    known_ocr: dict[int, list[Block]] = field(default_factory=dict)


@dataclass(frozen=True)
class ExtractedPart:
    """One parser's share: chunks, vectors and the length of its `full_text`."""

    chunks: list[Chunk]
    vectors: np.ndarray | None
    text_length: int
    terms: list[ChunkTerms] | None = None


def pack(message: list) -> bytes:
    return msgpack.packb(message, use_bin_type=True)


def _unpack(data: bytes) -> object:
    return msgpack.unpackb(data, raw=False, strict_map_key=True, ext_hook=_no_ext)


def _no_ext(code: int, data: bytes) -> object:
    raise WireError("extension types are not part of the protocol")


# --- worker -> parser ------------------------------------------------------------


def encode_request(request: Request) -> bytes:
    limits = asdict(request.limits)
    limits["ocr_languages"] = list(request.limits.ocr_languages)
    embedder = None if request.embedder is None else pickle.dumps(request.embedder)
    return pack(
        [
            request.operation,
            request.kind,
            request.data,
            limits,
            list(request.shard),
            embedder,
            request.embed_batch,
            [
                [number, [block.to_wire() for block in blocks]]
                for number, blocks in request.known_ocr.items()
            ],
        ]
    )


def decode_request(data: bytes) -> Request:
    """In the parser: the worker's request (the embedder unpickled)."""
    operation, kind, body, limits, shard, embedder, embed_batch, known = _unpack(data)
    limits["ocr_languages"] = tuple(limits["ocr_languages"])
    return Request(
        operation=operation,
        kind=kind,
        data=body,
        limits=ParseLimits(**limits),
        shard=tuple(shard),
        embedder=None if embedder is None else pickle.loads(embedder),  # noqa: S301
        embed_batch=max(1, int(embed_batch)),
        known_ocr={
            number: [Block.from_wire(block) for block in blocks]
            for number, blocks in known
        },
    )


# --- parser -> worker ------------------------------------------------------------


def encode_result(operation: str, result: list[Block] | ExtractedPart) -> bytes:
    if operation == "blocks":
        return pack(["ok", [block.to_wire() for block in result]])
    vectors = None
    if result.vectors is not None:
        vectors = result.vectors.astype("<f4", copy=False).tobytes()
    terms = None
    if result.terms is not None:
        terms = [chunk_terms.to_wire() for chunk_terms in result.terms]
    return pack(
        [
            "ok",
            [
                [chunk.to_wire() for chunk in result.chunks],
                vectors,
                result.text_length,
                terms,
            ],
        ]
    )


def encode_error(error: ParseError) -> bytes:
    return pack(["error", error_name(type(error)), error.reason])


def error_name(cls: type[ParseError]) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def parse_error_classes() -> dict[str, type[ParseError]]:
    """The registry of errors a parser may name: ParseError and every subclass the
    worker has imported (those of `blocks`, `chunking` and this package)."""
    found: dict[str, type[ParseError]] = {}
    pending = [ParseError]
    while pending:
        cls = pending.pop()
        found[error_name(cls)] = cls
        pending.extend(cls.__subclasses__())
    found.pop(error_name(ReplyRejected))  # only the worker says that
    return found


@dataclass(frozen=True)
class Reply:
    """A checked message from a parser: `kind` and what it carries."""

    kind: str  # progress, page, time, embedded, ok, error, memory, failed, stopped
    value: object = None


def decode_reply(
    data: bytes, *, operation: str, dimension: int | None, limits: ParseLimits
) -> Reply:
    """Check one message of a parser working on `operation`; ReplyRejected if it
    is not one the protocol allows. `dimension` is the embedder's, if it embeds."""
    try:
        return _decode_reply(
            data, operation=operation, dimension=dimension, limits=limits
        )
    except (WireError, ValueError, TypeError, OverflowError) as error:
        raise ReplyRejected(
            f"the parser sent a reply that is not valid ({type(error).__name__})"
        ) from None


def _decode_reply(
    data: bytes, *, operation: str, dimension: int | None, limits: ParseLimits
) -> Reply:
    message = _unpack(data)
    if type(message) is not list or not message or type(message[0]) is not str:
        raise WireError("a message is a list that starts with its kind")
    read = _REPLY_READERS.get(message[0])
    if read is None:
        raise WireError("unknown message kind")
    return read(message, operation=operation, dimension=dimension, limits=limits)


# One reader per kind of reply: each takes `_decode_reply`'s arguments by keyword
# and uses those it needs.


def _read_progress(message: list, **_: object) -> Reply:
    _, done, total = wire_list(message, 3)
    if wire_int(done) > wire_int(total):
        raise WireError("more pages read than there are")
    return Reply("progress", (done, total))


def _read_page(message: list, *, limits: ParseLimits, **_: object) -> Reply:
    _, number, blocks_data = wire_list(message, 3)
    if wire_int(number, minimum=1) > (limits.max_pdf_pages or number):
        raise WireError("a page number out of range")
    if type(blocks_data) is not list or (
        limits.max_blocks is not None and len(blocks_data) > limits.max_blocks
    ):
        raise WireError("expected a list of blocks")
    blocks = [Block.from_wire(block) for block in blocks_data]
    if any(block.page != number for block in blocks):
        raise WireError("a block of another page")
    return Reply("page", (number, blocks))


def _read_embedded(message: list, *, limits: ParseLimits, **_: object) -> Reply:
    _, done, total = wire_list(message, 3)
    if wire_int(done) > wire_int(total):
        raise WireError("more chunks embedded than there are")
    if limits.max_chunks is not None and total > limits.max_chunks:
        raise WireError("more chunks than the limit")
    return Reply("embedded", (done, total))


def _read_time(message: list, *, limits: ParseLimits, **_: object) -> Reply:
    _, seconds = wire_list(message, 2)
    cap = limits.ocr_page_seconds or 0.0  # without a page limit: 0, no more time
    if type(seconds) is not float or not 0 <= seconds <= cap:
        raise WireError("more time than one OCR page may take")
    return Reply("time", seconds)


def _read_ok(
    message: list,
    *,
    operation: str,
    dimension: int | None,
    limits: ParseLimits,
) -> Reply:
    _, result = wire_list(message, 2)
    if operation == "blocks":
        if type(result) is not list:
            raise WireError("expected a list of blocks")
        return Reply("ok", [Block.from_wire(block) for block in result])
    return Reply("ok", _extracted_part(result, dimension, limits))


def _read_error(message: list, **_: object) -> Reply:
    _, name, reason = wire_list(message, 3)
    if len(wire_str(name)) > _MAX_NAME or len(wire_str(reason)) > _MAX_REASON:
        raise WireError("error name or reason too long")
    cls = parse_error_classes().get(name, ParseError)
    try:
        error = cls(reason)
    except Exception:  # a subclass with another signature: still a ParseError
        error = ParseError(reason)
    return Reply("error", error)


def _read_memory(message: list, **_: object) -> Reply:
    wire_list(message, 1)
    return Reply("memory")


def _read_stopped(message: list, **_: object) -> Reply:
    wire_list(message, 1)
    return Reply("stopped")


def _read_failed(message: list, **_: object) -> Reply:
    _, name = wire_list(message, 2)
    if len(wire_str(name)) > _MAX_NAME or not name.isidentifier():
        raise WireError("an exception type name")
    return Reply("failed", name)


_REPLY_READERS: dict[str, Callable[..., Reply]] = {
    "progress": _read_progress,
    "page": _read_page,
    "time": _read_time,
    "embedded": _read_embedded,
    "ok": _read_ok,
    "error": _read_error,
    "memory": _read_memory,
    "failed": _read_failed,
    "stopped": _read_stopped,
}


def _extracted_part(
    value: object, dimension: int | None, limits: ParseLimits
) -> ExtractedPart:
    # Terms are optional: without them the worker makes them.
    if type(value) is list and len(value) == 3:
        value = [*value, None]
    chunks_data, vectors_data, text_length, terms_data = wire_list(value, 4)
    if type(chunks_data) is not list:
        raise WireError("expected a list of chunks")
    if limits.max_chunks is not None and len(chunks_data) > limits.max_chunks:
        raise WireError("more chunks than the limit")
    chunks = [Chunk.from_wire(chunk) for chunk in chunks_data]
    text_length = wire_int(text_length)
    if any(chunk.char_end > text_length for chunk in chunks):
        raise WireError("a chunk ends past the text")
    if vectors_data is None or dimension is None:
        if vectors_data is not None or (dimension is not None and chunks):
            raise WireError("vectors where none were asked for, or none sent")
        if terms_data is not None:
            raise WireError("terms where none were asked for")
        return ExtractedPart(chunks, None, text_length)
    terms = None if terms_data is None else _chunk_terms(terms_data, len(chunks))
    if type(vectors_data) is not bytes or len(vectors_data) != (
        len(chunks) * dimension * 4
    ):
        raise WireError("vectors of the wrong size")
    import numpy as np

    vectors = np.frombuffer(vectors_data, dtype="<f4").reshape(len(chunks), dimension)
    if not np.isfinite(vectors).all():
        raise WireError("vectors that are not finite numbers")
    return ExtractedPart(chunks, vectors.astype(np.float32), text_length, terms)


def _chunk_terms(value: object, count: int) -> list[ChunkTerms]:
    if type(value) is not list or len(value) != count:
        raise WireError("expected terms for every chunk")
    terms = []
    for item in value:
        blob, length, folds = wire_list(item, 3)
        if not valid_terms(blob) or type(folds) is not bool:
            raise WireError("terms of the wrong shape")
        terms.append(ChunkTerms(blob, wire_int(length), folds))
    return terms


def encode_progress(done: int, total: int) -> bytes:
    return pack(["progress", int(done), int(total)])


def encode_page(number: int, blocks: list[Block]) -> bytes:
    return pack(["page", int(number), [block.to_wire() for block in blocks]])


def encode_embedded(done: int, total: int) -> bytes:
    return pack(["embedded", int(done), int(total)])


def encode_time(seconds: float) -> bytes:
    seconds = float(seconds)
    return pack(["time", seconds if math.isfinite(seconds) else 0.0])


MEMORY = pack(["memory"])
# Worker -> parser during a parse: stop after the page being read, and say so
# (STOPPED). A parser that gets it between requests, its reply already sent,
# ignores it.
STOP = pack(["stop"])
STOPPED = pack(["stopped"])


def encode_failed(error: BaseException) -> bytes:
    return pack(["failed", type(error).__name__])
