"""Parsing in child processes, so a pathological file cannot hang or exhaust a worker,
and a parsing library made to run code by a hostile file cannot reach the worker.

Each worker process keeps warm parser processes (one per parallel shard) and talks
to them over sockets, in plain checked data (`wire.py`: never a pickle from a parser):

    worker: send (operation, kind, data, limits, shard[, embedder]) to each parser
            it uses -> wait for the replies, up to the time limit, calling
            `interrupt()` every POLL_SECONDS (it may raise to give up)
    parser: parse_document(kind, data, limits, shard), then for "chunks" chunk the
            blocks and embed them a batch at a time, saying how many are done
            -> reply, or ParseError

A PDF is read by all of them at once, each taking every n-th page (pdfminer spends
its time page by page, and interleaving spreads heavy pages evenly); the blocks come
back merged in page order and are chunked here, since a section runs across pages.
A large DOCX is cut into runs that start at headings, one per parser; each parser
chunks its run and, with an embedder that can run anywhere (the local ones: E5,
hashing), embeds it, so parsing, chunking and embedding all use every core. Other
kinds go to the first parser alone, which chunks and embeds them too.

A parser is forked from a small server process (`server.py`) that the worker starts
once, exec'd with an allow-listed environment and no inherited descriptors, in `/`,
and that has imported the parsing libraries (`processes.py`): a clean process (no
secrets, no threads, locks or database connections) that does not import the
libraries again for each file. The worker is hidden from it (not dumpable), and
when the worker can switch users the server becomes another, unprivileged one
before it forks any parser (`privileges.py`). A parser caps its own address space
(RLIMIT_AS), ignores SIGTERM/SIGINT (the worker decides when it stops) and exits
when the worker is gone.
A timeout, a memory error, a crash, a reply that breaks the protocol or an
interruption kills the parsers still busy; the next parse starts fresh ones. A
parse ended by `StopAfterPage` (a task's turn over) asks them to stop after their
page instead (`wire.STOP`): they stay warm, their OCR engine loaded. This
package does not touch Django, so the parser processes stay small.
"""

from __future__ import annotations

import atexit
from collections.abc import Callable
from dataclasses import dataclass
from itertools import chain
from multiprocessing.connection import wait
from typing import TYPE_CHECKING

import numpy as np

from documents.kinds import FILE_KINDS

from ..blocks import Block, ParseLimits
from ..chunking import Chunk, chunk_blocks, join_chunk_runs
from . import wire
from .channel import Channel
from .exchange import (
    ERROR_GRACE,
    Exchange,
    ParserProcessError,
    ParseTimeout,
    StopAfterPage,
    results,
)
from .privileges import SandboxError, parser_account
from .processes import ParserServer, SandboxOptions, memory_limit_problem
from .server import OUT_OF_MEMORY_EXIT, POLL_SECONDS
from .slots import ParserSlot
from .wire import ReplyRejected

if TYPE_CHECKING:
    import numpy as np

    from retrieval.embeddings import Embedder
    from retrieval.terms import ChunkTerms

PAGE_SHARDED_KINDS = frozenset(k.name for k in FILE_KINDS if k.split == "pages")
HEADING_SHARDED_KINDS = frozenset(k.name for k in FILE_KINDS if k.split == "headings")
# Each part re-reads the whole XML: below this size a second process saves less
# than it costs (docs/benchmarks.md, Summary, "DOCX on both cores").
HEADING_SHARD_MIN_BYTES = 256 * 1024

__all__ = [
    "ERROR_GRACE",
    "HEADING_SHARDED_KINDS",
    "HEADING_SHARD_MIN_BYTES",
    "OUT_OF_MEMORY_EXIT",
    "PAGE_SHARDED_KINDS",
    "POLL_SECONDS",
    "Extracted",
    "ParseSandbox",
    "ParseTimeout",
    "ParserProcessError",
    "ReplyRejected",
    "SandboxError",
    "SandboxOptions",
    "StopAfterPage",
    "configure",
    "memory_limit_problem",
    "parser_account",
    "shared_sandbox",
]


@dataclass(frozen=True)
class Extracted:
    """A document's chunks and, when the parsers embedded them, their vectors."""

    chunks: list[Chunk]
    vectors: np.ndarray | None
    terms: list[ChunkTerms] | None = None  # made beside the vectors


_server = ParserServer()


def configure(options: SandboxOptions) -> None:
    """How this process's parsers start (user, passed variables) and what the
    worker reads of them."""
    _server.configure(options)


class ParseSandbox:
    def __init__(self, server: ParserServer | None = None) -> None:
        self.server = server or _server
        self._parsers: list[ParserSlot] = []

    def start(self, *, memory_bytes: int | None, processes: int = 1) -> None:
        """Start the parsers now (if needed), so the first parse finds them warm."""
        self._parsers_for(processes, memory_bytes)

    def prepare(self, *, memory_bytes: int | None, processes: int = 1) -> None:
        """Get ready without waiting: start the parser server (it imports the
        parsers beside the worker's own start-up; parsers are forked from it when
        first needed), or, without fork, the parsers themselves."""
        if self.server.start_method == "fork":
            self.server.ensure_running()
        else:
            self.start(memory_bytes=memory_bytes, processes=processes)

    def stop(self) -> None:
        for parser in self._parsers:
            parser.stop()

    def cpu_seconds(self) -> float:
        """CPU time these parsers have used, ever: a task's is the difference."""
        return sum(parser.cpu_seconds() for parser in self._parsers)

    @staticmethod
    def _send(parser: ParserSlot, request: bytes, busy: dict[Channel, int]) -> None:
        """Send `request`; a parser found dead (it died idle) is restarted once."""
        for attempt in range(2):
            try:
                parser.conn.send(request)
                return
            except (EOFError, OSError):
                index = busy.pop(parser.conn)
                if attempt:
                    raise parser.crash_error() from None
                parser.stop()
                parser.start(memory_bytes=parser.memory_bytes)
                busy[parser.conn] = index

    def _parsers_for(self, count: int, memory_bytes: int | None) -> list[ParserSlot]:
        while len(self._parsers) < count:
            self._parsers.append(ParserSlot(self.server))
        for parser in self._parsers[:count]:
            parser.start(memory_bytes=memory_bytes)
        return self._parsers[:count]

    def parse(
        self,
        kind: str,
        data: bytes,
        *,
        limits: ParseLimits,
        timeout: float,
        memory_bytes: int | None,
        interrupt: Callable[[], None] = lambda: None,
        processes: int = 1,
        progress: Callable[[int, int], None] = lambda done, total: None,
        known_ocr: dict[int, list[Block]] | None = None,
        ocr_read: Callable[[int, list[Block]], None] = lambda number, blocks: None,
        ocr_page: Callable[[], None] = lambda: None,
    ) -> list[Block]:
        """Blocks of the document, or ParseError (ParseTimeout, FileTooLarge, ...).

        `known_ocr` (page number -> blocks) are pages an earlier attempt read by
        OCR, not read again; `ocr_read(number, blocks)` hears each page read by
        OCR now; `ocr_page()` hears of each page about to be read by OCR (it may
        raise to stop the parse before that page is read)."""
        shards = _shard_count(kind, data, processes)
        known_ocr = known_ocr or {}
        requests = [
            wire.Request(
                "blocks",
                kind,
                data,
                limits,
                (i, shards),
                known_ocr={
                    number: blocks
                    for number, blocks in known_ocr.items()
                    if (number - 1) % shards == i  # the pages of shard i
                },
            )
            for i in range(shards)
        ]
        parts = self._run(
            requests,
            timeout=timeout,
            memory_bytes=memory_bytes,
            interrupt=interrupt,
            progress=progress,
            ocr_read=ocr_read,
            ocr_page=ocr_page,
        )
        if kind in PAGE_SHARDED_KINDS and shards > 1:
            # Each page comes from one shard, in order: a stable sort restores the file.
            return sorted(chain.from_iterable(parts), key=lambda block: block.page or 0)
        return list(chain.from_iterable(parts))

    def extract(
        self,
        kind: str,
        data: bytes,
        *,
        limits: ParseLimits,
        timeout: float,
        memory_bytes: int | None,
        interrupt: Callable[[], None] = lambda: None,
        processes: int = 1,
        embedder: Embedder | None = None,
        embed_batch: int = 32,
        embed_timeout: float = 120.0,
        progress: Callable[[int, int], None] = lambda done, total: None,
        embedded: Callable[[int, int], None] = lambda done, total: None,
        known_ocr: dict[int, list[Block]] | None = None,
        ocr_read: Callable[[int, list[Block]], None] = lambda number, blocks: None,
        ocr_page: Callable[[], None] = lambda: None,
    ) -> Extracted:
        """Chunks of the document, and their vectors when `embedder` is given.

        Chunking needs whole sections: PDF pages come back from their parsers as
        blocks and are chunked here; a DOCX is cut at headings, so each parser
        chunks (and embeds) its own part. `embedder` must be picklable and run
        anywhere (`portable`); the memory limit covers its work too. Each parser
        embeds `embed_batch` chunks at a time and `embedded(done, total)` hears
        the chunks embedded by all of them. The time limit is the parse's: a
        parser that has started embedding is held instead to `embed_timeout`
        seconds per batch (a semantic model embeds a few chunks a second, and a
        document's chunks are bounded by `limits.max_chunks`). `known_ocr` and
        `ocr_read` carry a PDF's OCR'd pages between attempts (`parse`).
        """
        if kind in PAGE_SHARDED_KINDS:
            blocks = self.parse(
                kind,
                data,
                limits=limits,
                timeout=timeout,
                memory_bytes=memory_bytes,
                interrupt=interrupt,
                processes=processes,
                progress=progress,
                known_ocr=known_ocr,
                ocr_read=ocr_read,
                ocr_page=ocr_page,
            )
            return Extracted(chunk_blocks(blocks, max_chunks=limits.max_chunks), None)
        shards = _shard_count(kind, data, processes)
        requests = [
            wire.Request(
                "chunks", kind, data, limits, (i, shards), embedder, embed_batch
            )
            for i in range(shards)
        ]
        parts: list[wire.ExtractedPart] = self._run(
            requests,
            timeout=timeout,
            memory_bytes=memory_bytes,
            interrupt=interrupt,
            progress=progress,
            embedded=embedded,
            embed_timeout=embed_timeout,
            ocr_page=ocr_page,
        )
        chunks = join_chunk_runs((part.chunks, part.text_length) for part in parts)
        if embedder is None or not chunks:
            return Extracted(chunks, None)
        vectors = [part.vectors for part in parts if part.chunks]
        terms = [terms for part in parts if part.chunks for terms in part.terms or ()]
        return Extracted(
            chunks,
            np.concatenate(vectors),
            terms if len(terms) == len(chunks) else None,
        )

    def _run(
        self,
        requests: list[wire.Request],
        *,
        timeout: float,
        memory_bytes: int | None,
        interrupt: Callable[[], None],
        progress: Callable[[int, int], None],
        embedded: Callable[[int, int], None] = lambda done, total: None,
        embed_timeout: float = 0.0,
        ocr_read: Callable[[int, list[Block]], None] = lambda number, blocks: None,
        ocr_page: Callable[[], None] = lambda: None,
    ) -> list:
        """One request per parser, all at once; their answers in request order.

        `progress(done, total)` hears the pages read by all of them together,
        `embedded(done, total)` the chunks they embedded."""
        parsers = self._parsers_for(len(requests), memory_bytes)
        exchange = Exchange(
            self.server,
            parsers,
            requests,
            timeout=timeout,
            progress=progress,
            embedded=embedded,
            embed_timeout=embed_timeout,
            ocr_read=ocr_read,
            ocr_page=ocr_page,
        )
        try:
            for index, (parser, request) in enumerate(
                zip(parsers, requests, strict=True)
            ):
                exchange.busy[parser.conn] = index
                self._send(parser, wire.encode_request(request), exchange.busy)
            while exchange.busy:
                for conn in wait(list(exchange.busy), timeout=POLL_SECONDS):
                    exchange.receive(conn)
                if exchange.busy and not exchange.keep_waiting(interrupt):
                    break
        except StopAfterPage:
            exchange.wind_down(POLL_SECONDS)
            exchange.stop_busy_parsers()
            raise
        except BaseException:
            # Timed out, crashed, misbehaved or interrupted: the parsers still busy
            # start afresh.
            exchange.stop_busy_parsers()
            raise
        exchange.stop_busy_parsers()  # a shard failed; the others' work is moot
        return results(exchange.replies, parsers, memory_bytes)


def _shard_count(kind: str, data: bytes, processes: int) -> int:
    if kind in PAGE_SHARDED_KINDS or (
        kind in HEADING_SHARDED_KINDS and len(data) >= HEADING_SHARD_MIN_BYTES
    ):
        return max(1, processes)
    return 1


_shared = ParseSandbox()


@atexit.register
def _stop_everything() -> None:
    _shared.stop()
    _server.stop()


def shared_sandbox() -> ParseSandbox:
    """This process's parsers (one worker per process, so one sandbox)."""
    return _shared
