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
once, exec'd with an allow-listed environment and no inherited descriptors, and that
has imported the parsing libraries (`processes.py`): a clean process (no secrets, no
threads, locks or database connections) that does not import the libraries again
for each file. It caps its own address space (RLIMIT_AS), ignores
SIGTERM/SIGINT (the worker decides when it stops) and exits when the worker is gone.
A timeout, a memory error, a crash, a reply that breaks the protocol or an
interruption kills the parsers still busy; the next parse starts fresh ones. This
package does not touch Django, so the parser processes stay small.
"""

from __future__ import annotations

import atexit
import logging
import math
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from itertools import chain
from multiprocessing.connection import wait
from typing import TYPE_CHECKING

import numpy as np

from ..blocks import Block, FileTooLarge, ParseError, ParseLimits
from ..chunking import Chunk, chunk_blocks, join_chunk_runs
from . import wire
from .channel import Channel, MessageTooLarge
from .processes import (
    ParserProcess,
    ParserServer,
    SandboxError,
    SandboxOptions,
    memory_limit_problem,
    parser_account,
)
from .server import OUT_OF_MEMORY_EXIT, POLL_SECONDS
from .wire import ReplyRejected

if TYPE_CHECKING:
    import numpy as np

    from retrieval.embeddings import Embedder
    from retrieval.terms import ChunkTerms

logger = logging.getLogger(__name__)

ERROR_GRACE = 0.5  # seconds the other shards get to answer after one failed
PAGE_SHARDED_KINDS = frozenset({"pdf"})
HEADING_SHARDED_KINDS = frozenset({"docx"})
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
    "configure",
    "memory_limit_problem",
    "parser_account",
    "shared_sandbox",
]


class ParseTimeout(ParseError):
    """The parse ran past its wall-clock limit and was killed."""


class ParserProcessError(Exception):
    """Chunking or embedding failed in a parser process, or a request could not be
    read there: a fault of ours, not of the file (the worker's `internal_error`)."""


@dataclass(frozen=True)
class Extracted:
    """A document's chunks and, when the parsers embedded them, their vectors."""

    chunks: list[Chunk]
    vectors: np.ndarray | None
    terms: list[ChunkTerms] | None = None  # made beside the vectors


class _Parser:
    """One parser process and the worker's end of its pipe."""

    def __init__(self, server: ParserServer) -> None:
        self.server = server
        self.process: ParserProcess | None = None
        self.conn: Channel | None = None
        self.memory_bytes: int | None = None
        self._cpu_of_stopped = 0.0  # of the processes this parser was before
        self._cpu_seen = 0.0  # of the current one, when last read

    def cpu_seconds(self) -> float:
        """CPU time of every process this parser has been, as far as read:
        only ever grows, so a task's share is the difference."""
        if self.process is not None:
            seen = self.process.cpu_seconds()
            if seen is not None:
                self._cpu_seen = seen
        return self._cpu_of_stopped + self._cpu_seen

    def start(self, *, memory_bytes: int | None) -> Channel:
        if (
            self.conn is not None
            and self.process is not None
            and self.process.is_alive()
            and self.memory_bytes == memory_bytes
            # An idle parser has nothing to say: one that does (a second answer,
            # or EOF) is not reused.
            and not wait([self.conn], 0)
        ):
            return self.conn
        self.stop()
        # Django's logging settings are not loaded there: carry pdfminer's level over.
        self.process, self.conn = self.server.start_parser(
            memory_bytes=memory_bytes,
            worker_pid=os.getpid(),
            pdfminer_level=logging.getLogger("pdfminer").getEffectiveLevel(),
        )
        self.memory_bytes = memory_bytes
        return self.conn

    def stop(self) -> None:
        if self.conn is not None:
            self.conn.close()
        if self.process is not None:
            self.cpu_seconds()  # its last reading: the work it did still counts
            self.process.kill()
            self.process.join(timeout=5)
            self._cpu_of_stopped += self._cpu_seen
            self._cpu_seen = 0.0
        self.process = self.conn = None

    def crash_error(self) -> ParseError:
        """Why the parser's pipe closed; the parser is stopped."""
        exitcode = None
        if self.process is not None:
            self.process.join(timeout=1)
            exitcode = self.process.exitcode
        self.stop()
        if exitcode == -signal.SIGKILL:
            return FileTooLarge(
                "the parser was killed, most likely for using too much memory"
            )
        if exitcode == OUT_OF_MEMORY_EXIT:
            return _out_of_memory(self.memory_bytes)
        return ParseError(f"the parser stopped unexpectedly ({exitcode})")


def _out_of_memory(memory_bytes: int | None) -> FileTooLarge:
    return FileTooLarge(
        f"parsing needed more than the {memory_bytes // 2**20} MiB memory limit"
        if memory_bytes
        else "parsing ran out of memory"
    )


_server = ParserServer()


def configure(options: SandboxOptions) -> None:
    """How this process's parsers start (user, passed variables) and what the
    worker reads of them."""
    _server.configure(options)


class ParseSandbox:
    def __init__(self, server: ParserServer | None = None) -> None:
        self.server = server or _server
        self._parsers: list[_Parser] = []

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
    def _send(parser: _Parser, request: bytes, busy: dict[Channel, int]) -> None:
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

    def _parsers_for(self, count: int, memory_bytes: int | None) -> list[_Parser]:
        while len(self._parsers) < count:
            self._parsers.append(_Parser(self.server))
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
        exchange = _Exchange(
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
        except BaseException:
            # Timed out, crashed, misbehaved or interrupted: the parsers still busy
            # start afresh.
            exchange.stop_busy_parsers()
            raise
        exchange.stop_busy_parsers()  # a shard failed; the others' work is moot
        return _results(exchange.replies, parsers, memory_bytes)


class _Exchange:
    """The state of one `ParseSandbox._run`: which parsers still owe their reply,
    the replies in, the pages read and the deadline requests for time push back,
    the chunks embedded and the deadline of each parser that embeds."""

    def __init__(
        self,
        server: ParserServer,
        parsers: list[_Parser],
        requests: list[wire.Request],
        *,
        timeout: float,
        progress: Callable[[int, int], None],
        embedded: Callable[[int, int], None],
        embed_timeout: float,
        ocr_read: Callable[[int, list[Block]], None],
        ocr_page: Callable[[], None],
    ) -> None:
        first = requests[0]
        embedder = first.embedder
        self.shards = len(requests)
        self.server = server
        self.parsers = parsers
        self.timeout = timeout
        self.progress = progress
        self.ocr_read = ocr_read
        self.ocr_page = ocr_page
        self.read = {
            "operation": first.operation,
            "dimension": None if embedder is None else embedder.dimension,
            "limits": first.limits,
        }
        self.max_extensions = first.limits.max_ocr_pages
        self.deadline = time.monotonic() + timeout
        # A parser is "busy" from before its request is sent until its whole reply
        # is read: whatever interrupts that leaves a half-written request or an
        # unread reply in its pipe, so it is stopped rather than reused.
        self.busy: dict[Channel, int] = {}
        self.replies: list[wire.Reply | None] = [None] * self.shards
        self.pages: dict[int, tuple[int, int]] = {}  # per shard: (read, of)
        self.extensions = [0] * self.shards
        self.embedded = embedded
        self.embed_timeout = embed_timeout
        self.chunks: dict[int, tuple[int, int]] = {}  # per shard: (embedded, of)
        self.embed_deadlines: dict[int, float] = {}  # per shard that embeds

    def receive(self, conn: Channel) -> None:
        """Read and act on one message from the parser on `conn`."""
        index = self.busy[conn]
        try:
            reply = wire.decode_reply(
                conn.recv(self.server.options.reply_max_bytes), **self.read
            )
        except (EOFError, OSError):
            del self.busy[conn]
            raise self.parsers[index].crash_error() from None
        except (MessageTooLarge, ReplyRejected) as error:
            logger.warning(
                "parser reply refused, parser stopped (%s)", type(error).__name__
            )
            raise ReplyRejected("the parser sent a reply that is not valid") from None
        if reply.kind == "time":
            self.ocr_page()
            self._extend_deadline(index, reply.value)
        elif reply.kind == "progress":
            self._report_pages(index, reply.value)
        elif reply.kind == "page":
            self.ocr_read(*reply.value)
        elif reply.kind == "embedded":
            self._report_chunks(index, reply.value)
        else:
            self._finish(conn, index, reply)

    def _extend_deadline(self, index: int, seconds: float) -> None:
        # One OCR page about to be read; bounded by the OCR page limits.
        self.extensions[index] += 1
        if self.max_extensions is not None and (
            self.extensions[index] > self.max_extensions
        ):
            raise ReplyRejected(
                "the parser asked for more time than its OCR pages allow"
            )
        self.deadline += seconds

    def _report_pages(self, index: int, pages: tuple[int, int]) -> None:
        self.pages[index] = pages
        if len(self.pages) == self.shards:  # each has said how many it reads
            self.progress(*map(sum, zip(*self.pages.values(), strict=True)))

    def _report_chunks(self, index: int, chunks: tuple[int, int]) -> None:
        # A parser that embeds is done parsing: the parse limit no longer holds
        # it, each of its batches must come within embed_timeout of the last.
        self.embed_deadlines[index] = time.monotonic() + self.embed_timeout
        self.chunks[index] = chunks
        self.embedded(*map(sum, zip(*self.chunks.values(), strict=True)))

    def _finish(self, conn: Channel, index: int, reply: wire.Reply) -> None:
        self.replies[index] = reply
        del self.busy[conn]
        if reply.kind != "ok":
            # Errors such as a password or too many pages come from every shard
            # at once: a moment for the others to answer keeps them warm; past it
            # they are stopped.
            self.deadline = min(self.deadline, time.monotonic() + ERROR_GRACE)

    def keep_waiting(self, interrupt: Callable[[], None]) -> bool:
        """Whether to wait for the busy parsers once more: not past the grace
        after a shard failed; `interrupt()` may raise, and so does the deadline."""
        if any(r is not None and r.kind != "ok" for r in self.replies):
            return time.monotonic() < self.deadline
        interrupt()
        now = time.monotonic()
        for index in self.busy.values():
            if now >= self.embed_deadlines.get(index, math.inf):
                raise ParseTimeout(
                    f"embedding a batch of chunks took longer than "
                    f"{self.embed_timeout:g} s, the limit"
                )
            if index not in self.embed_deadlines and now >= self.deadline:
                raise ParseTimeout(
                    f"parsing took longer than {self.timeout:g} s, the limit"
                )
        return True

    def stop_busy_parsers(self) -> None:
        for index in self.busy.values():
            self.parsers[index].stop()


def _results(
    replies: list[wire.Reply | None],
    parsers: list[_Parser],
    memory_bytes: int | None,
) -> list:
    """The parsers' answers in request order, or the first shard's failure."""
    results = []
    for index, reply in enumerate(replies):
        if reply is None:
            continue
        if reply.kind == "memory":
            parsers[index].stop()
            raise _out_of_memory(memory_bytes)
        if reply.kind == "failed":
            raise ParserProcessError(f"{reply.value} in the parser process")
        if reply.kind == "error":
            raise reply.value
        results.append(reply.value)
    return results


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
