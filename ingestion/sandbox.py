"""Parsing in child processes, so a pathological file cannot hang or exhaust a worker.

Each worker process keeps warm parser processes (one per parallel shard) and talks
to them over pipes:

    worker: send (operation, kind, data, limits, shard[, embedder]) to each parser
            it uses -> wait for the replies, up to the time limit, calling
            `interrupt()` every POLL_SECONDS (it may raise to give up)
    parser: parse_document(kind, data, limits, shard), then for "chunks" chunk the
            blocks and embed them -> reply, or ParseError

A PDF is read by all of them at once, each taking every n-th page (pdfminer spends
its time page by page, and interleaving spreads heavy pages evenly); the blocks come
back merged in page order and are chunked here, since a section runs across pages.
A large DOCX is cut into runs that start at headings, one per parser; each parser
chunks its run and, with an embedder that can run anywhere (the local hashing one),
embeds it, so parsing, chunking and embedding all use every core. Other kinds go to
the first parser alone, which chunks and embeds them too.

A parser is forked from a small server process that the worker starts once and that
has imported the parsing libraries ("forkserver", where the platform has it, else
"spawn"): a clean process (no inherited threads, locks or database connections),
ready in milliseconds instead of the third of a second an import takes, which counts
at a cron-started worker's start and after a parser was killed. It caps its own
address space (RLIMIT_AS), ignores SIGTERM/SIGINT (the worker decides when it stops)
and exits when the worker is gone. A timeout, a memory
error, a crash or an interruption kills the parsers still busy; the next parse starts
fresh ones. This module does not touch Django, so the parser processes stay small.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from itertools import chain
from multiprocessing.connection import Connection, wait
from typing import TYPE_CHECKING

from .blocks import Block, FileTooLarge, ParseError, ParseLimits
from .chunking import Chunk, chunk_blocks, full_text, join_chunk_runs

if TYPE_CHECKING:
    import numpy as np

    from retrieval.embeddings import Embedder

POLL_SECONDS = 0.1
OUT_OF_MEMORY_EXIT = 75  # a parser that could not even read its request
ERROR_GRACE = 0.5  # seconds the other shards get to answer after one failed
PAGE_SHARDED_KINDS = frozenset({"pdf"})
HEADING_SHARDED_KINDS = frozenset({"docx"})
# Each part re-reads the whole XML (a third of a parse): below this size (about
# 3 MB of XML) a second process saves less than it costs.
HEADING_SHARD_MIN_BYTES = 256 * 1024


def _context() -> multiprocessing.context.BaseContext:
    # The embedder's numpy needs no BLAS threads in a parser, and each one would map
    # a stack and buffers (20 MB here, a gigabyte on a 64-core host) into an address
    # space capped by RLIMIT_AS. Read by the fork server or spawned parser at start.
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(variable, "1")
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    # Read when the server starts (once per worker); later calls change nothing.
    context.set_forkserver_preload(["ingestion.formats", "retrieval.embeddings"])
    return context


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


@dataclass(frozen=True)
class _ExtractedPart:
    """One parser's share: chunks, vectors and the length of its `full_text`."""

    chunks: list[Chunk]
    vectors: np.ndarray | None
    text_length: int


class _Parser:
    """One parser process and the worker's end of its pipe."""

    def __init__(self) -> None:
        self.process: multiprocessing.process.BaseProcess | None = None
        self.conn: Connection | None = None
        self.memory_bytes: int | None = None

    def start(self, *, memory_bytes: int | None) -> Connection:
        if (
            self.conn is not None
            and self.process is not None
            and self.process.is_alive()
            and self.memory_bytes == memory_bytes
        ):
            return self.conn
        self.stop()
        context = _context()
        parent_end, child_end = context.Pipe()
        # Django's logging settings are not loaded there: carry pdfminer's level over.
        pdfminer_level = logging.getLogger("pdfminer").getEffectiveLevel()
        process = context.Process(
            target=_serve,
            args=(child_end, memory_bytes, os.getpid(), pdfminer_level),
            name="curator-parser",
            daemon=True,
        )
        process.start()
        child_end.close()
        self.process, self.conn = process, parent_end
        self.memory_bytes = memory_bytes
        return parent_end

    def stop(self) -> None:
        if self.conn is not None:
            self.conn.close()
        if self.process is not None:
            if self.process.is_alive():
                self.process.kill()
            self.process.join(timeout=5)
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
            return FileTooLarge(
                f"parsing needed more than the {self.memory_bytes // 2**20} MiB "
                "memory limit"
                if self.memory_bytes
                else "parsing ran out of memory"
            )
        return ParseError(f"the parser stopped unexpectedly ({exitcode})")


class ParseSandbox:
    def __init__(self) -> None:
        self._parsers: list[_Parser] = []

    def start(self, *, memory_bytes: int | None, processes: int = 1) -> None:
        """Start the parsers now (if needed), so the first parse finds them warm."""
        self._parsers_for(processes, memory_bytes)

    def prepare(self, *, memory_bytes: int | None, processes: int = 1) -> None:
        """Get ready without waiting: start the fork server (it imports the parsers
        beside the worker's own start-up; parsers are forked from it when first
        needed), or, without one, the parsers themselves."""
        if _context().get_start_method() == "forkserver":
            from multiprocessing import forkserver

            forkserver.ensure_running()
        else:
            self.start(memory_bytes=memory_bytes, processes=processes)

    def stop(self) -> None:
        for parser in self._parsers:
            parser.stop()

    @staticmethod
    def _send(parser: _Parser, request: tuple, busy: dict[Connection, int]) -> None:
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
            self._parsers.append(_Parser())
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
    ) -> list[Block]:
        """Blocks of the document, or ParseError (ParseTimeout, FileTooLarge, ...)."""
        shards = _shard_count(kind, data, processes)
        requests = [("blocks", kind, data, limits, (i, shards)) for i in range(shards)]
        parts = self._run(
            requests,
            timeout=timeout,
            memory_bytes=memory_bytes,
            interrupt=interrupt,
            progress=progress,
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
        progress: Callable[[int, int], None] = lambda done, total: None,
    ) -> Extracted:
        """Chunks of the document, and their vectors when `embedder` is given.

        Chunking needs whole sections: PDF pages come back from their parsers as
        blocks and are chunked here; a DOCX is cut at headings, so each parser
        chunks (and embeds) its own part. `embedder` must be picklable and run
        anywhere (`portable`); the time and memory limits cover its work too.
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
            )
            return Extracted(chunk_blocks(blocks, max_chunks=limits.max_chunks), None)
        shards = _shard_count(kind, data, processes)
        requests = [
            ("chunks", kind, data, limits, (i, shards), embedder) for i in range(shards)
        ]
        parts: list[_ExtractedPart] = self._run(
            requests,
            timeout=timeout,
            memory_bytes=memory_bytes,
            interrupt=interrupt,
            progress=progress,
        )
        chunks = join_chunk_runs((part.chunks, part.text_length) for part in parts)
        if embedder is None or not chunks:
            return Extracted(chunks, None)
        import numpy as np

        vectors = [part.vectors for part in parts if part.chunks]
        return Extracted(chunks, np.concatenate(vectors))

    def _run(
        self,
        requests: list[tuple],
        *,
        timeout: float,
        memory_bytes: int | None,
        interrupt: Callable[[], None],
        progress: Callable[[int, int], None],
    ) -> list:
        """One request per parser, all at once; their answers in request order.

        `progress(done, total)` hears the pages read by all of them together."""
        shards = len(requests)
        parsers = self._parsers_for(shards, memory_bytes)
        deadline = time.monotonic() + timeout
        # A parser is "busy" from before its request is sent until its whole reply
        # is read: whatever interrupts that leaves a half-written request or an
        # unread reply in its pipe, so it is stopped rather than reused.
        busy: dict[Connection, int] = {}
        replies: list[tuple[str, object] | None] = [None] * shards
        pages: dict[int, tuple[int, int]] = {}  # per shard: (read, of)
        try:
            for index, (parser, request) in enumerate(
                zip(parsers, requests, strict=True)
            ):
                busy[parser.conn] = index
                self._send(parser, request, busy)
            while busy:
                for conn in wait(list(busy), timeout=POLL_SECONDS):
                    index = busy[conn]
                    try:
                        reply = conn.recv()
                    except (EOFError, OSError):
                        del busy[conn]
                        raise parsers[index].crash_error() from None
                    if reply[0] == "time":  # bounded by the OCR page limits
                        deadline += reply[1]
                        continue
                    if reply[0] == "progress":
                        pages[index] = reply[1]
                        if len(pages) == shards:  # each has said how many it reads
                            progress(*map(sum, zip(*pages.values(), strict=True)))
                        continue
                    replies[index] = reply
                    del busy[conn]
                    if replies[index][0] != "ok":
                        # Errors such as a password or too many pages come from
                        # every shard at once: a moment for the others to answer
                        # keeps them warm; past it they are stopped.
                        deadline = min(deadline, time.monotonic() + ERROR_GRACE)
                if busy:
                    if any(r is not None and r[0] != "ok" for r in replies):
                        if time.monotonic() >= deadline:
                            break
                        continue
                    interrupt()
                    if time.monotonic() >= deadline:
                        raise ParseTimeout(
                            f"parsing took longer than {timeout:g} s, the limit"
                        )
        except BaseException:
            # Timed out, crashed or interrupted: the parsers still busy start afresh.
            for index in busy.values():
                parsers[index].stop()
            raise
        for index in busy.values():
            parsers[index].stop()  # a shard failed; the others' work is moot
        results = []
        for index, reply in enumerate(replies):
            if reply is None:
                continue
            outcome, value = reply
            if outcome == "memory":
                parsers[index].stop()
                raise FileTooLarge(
                    f"parsing needed more than the {memory_bytes // 2**20} MiB "
                    "memory limit"
                    if memory_bytes
                    else "parsing ran out of memory"
                )
            if outcome == "failed":
                raise ParserProcessError(f"{value} in the parser process")
            if outcome != "ok":
                raise value
            results.append(value)
        return results


def _shard_count(kind: str, data: bytes, processes: int) -> int:
    if kind in PAGE_SHARDED_KINDS or (
        kind in HEADING_SHARDED_KINDS and len(data) >= HEADING_SHARD_MIN_BYTES
    ):
        return max(1, processes)
    return 1


_shared = ParseSandbox()
atexit.register(_shared.stop)


def shared_sandbox() -> ParseSandbox:
    """This process's parsers (one worker per process, so one sandbox)."""
    return _shared


# --- the parser process -------------------------------------------------------------


def _serve(
    conn: Connection, memory_bytes: int | None, worker_pid: int, pdfminer_level: int
) -> None:
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, signal.SIG_IGN)
    logging.getLogger("pdfminer").setLevel(pdfminer_level)
    threading.Thread(target=_exit_with_worker, args=(worker_pid,), daemon=True).start()
    if memory_bytes:
        _limit_address_space(memory_bytes)
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        except MemoryError:
            # Part of the request is still in the pipe, and the worker may still be
            # writing it: answering would deadlock both. Exit; it reads the code.
            os._exit(OUT_OF_MEMORY_EXIT)
        except Exception as error:  # read whole, but it does not unpickle here
            conn.send(("failed", type(error).__name__))
            continue
        # What the answer was built from is freed after it is sent (a large
        # document's tree takes tens of milliseconds), while the worker reads it.
        retained: list = []
        try:
            progress, more_time = _reporters(conn)
            reply = (
                "ok",
                _answer(
                    *request, retain=retained, progress=progress, more_time=more_time
                ),
            )
        except MemoryError:
            reply = ("memory", None)
        except ParseError as error:
            reply = ("error", error)
        except Exception as error:  # chunking or embedding: not the file's fault
            reply = ("failed", type(error).__name__)
        del request
        try:
            try:
                conn.send(reply)
            except MemoryError:
                retained.clear()  # the tree kept for later goes now, and once more
                conn.send(reply)
        except MemoryError:
            conn.send(("memory", None))
        except (BrokenPipeError, OSError):
            return
        del reply, retained


# Embedders kept for the life of the parser: a warm feature cache.
_embedders: dict[tuple[type, str], Embedder] = {}
_EMBED_SLICE = 256  # texts per embed() call, to bound its temporary arrays


def _answer(
    operation: str,
    kind: str,
    data: bytes,
    limits: ParseLimits,
    shard: tuple[int, int],
    embedder: Embedder | None = None,
    *,
    retain: list,
    progress: Callable[[int, int], None],
    more_time: Callable[[float], None],
) -> list[Block] | _ExtractedPart:
    from .formats import parse_document  # here only: the worker never needs it

    blocks = parse_document(
        kind,
        data,
        limits,
        shard=shard,
        retain=retain,
        progress=progress,
        more_time=more_time,
    )
    if operation == "blocks":
        return blocks
    chunks = chunk_blocks(blocks, max_chunks=limits.max_chunks)
    vectors = None
    if embedder is not None and chunks:
        import numpy as np

        embedder = _embedders.setdefault((type(embedder), embedder.name), embedder)
        texts = [chunk.text for chunk in chunks]
        vectors = np.concatenate(
            [
                embedder.embed(texts[start : start + _EMBED_SLICE])
                for start in range(0, len(texts), _EMBED_SLICE)
            ]
        )
    return _ExtractedPart(chunks, vectors, len(full_text(blocks)))


def _reporters(
    conn: Connection,
) -> tuple[Callable[[int, int], None], Callable[[float], None]]:
    """`progress` sends the pages read so far, at most every POLL_SECONDS;
    `more_time` asks the worker to wait that much longer (before an OCR page)."""
    last = 0.0

    def progress(done: int, total: int) -> None:
        nonlocal last
        now = time.monotonic()
        if done == total or now - last >= POLL_SECONDS:
            last = now
            conn.send(("progress", (done, total)))

    def more_time(seconds: float) -> None:
        conn.send(("time", float(seconds)))

    return progress, more_time


def _limit_address_space(memory_bytes: int) -> None:
    with contextlib.suppress(ImportError, ValueError, OSError):
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))


def _exit_with_worker(worker_pid: int) -> None:
    # A worker killed with SIGKILL cannot stop us; do not outlive it. Our parent is
    # the worker or its fork server, which exits with the worker: either way we are
    # orphaned when the worker is gone.
    parent = os.getppid()
    while os.getppid() == parent and _running(worker_pid):
        time.sleep(1)
    os._exit(0)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
