"""One round of requests to the worker's parsers (`ParseSandbox._run`): which
parsers still owe their reply, what they said so far, the deadlines, and the
answers or the first shard's failure at the end."""

from __future__ import annotations

import contextlib
import logging
import math
import time
from collections.abc import Callable
from multiprocessing.connection import wait

from ..blocks import Block, ParseError
from . import wire
from .channel import Channel, MessageTooLarge
from .processes import ParserServer
from .slots import ParserSlot, out_of_memory
from .wire import ReplyRejected

logger = logging.getLogger(__name__)

ERROR_GRACE = 0.5  # seconds the other shards get to answer after one failed
STOP_GRACE = 30.0  # seconds to finish a page when stopped, without an OCR page limit


class ParseTimeout(ParseError):
    """The parse ran past its wall-clock limit and was killed."""


class StopAfterPage(Exception):
    """Raised by a callback of the parse to end it early but cleanly (the task's
    turn is over): the busy parsers finish the page they are reading, what they
    read by OCR still reaches `ocr_read`, and they stay warm for the next task."""


class ParserProcessError(Exception):
    """Chunking or embedding failed in a parser process, or a request could not be
    read there: a fault of ours, not of the file (the worker's `internal_error`)."""


class Exchange:
    """The state of one `ParseSandbox._run`: which parsers still owe their reply,
    the replies in, the pages read and the deadline requests for time push back,
    the chunks embedded and the deadline of each parser that embeds."""

    def __init__(
        self,
        server: ParserServer,
        parsers: list[ParserSlot],
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
        # The longest a parser takes to finish the page it reads when told to stop.
        self.stop_grace = (first.limits.ocr_page_seconds or STOP_GRACE) + 1.0
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

    def wind_down(self, poll_seconds: float) -> None:
        """After StopAfterPage: ask the busy parsers to stop after their page and
        take what they still send, for at most `stop_grace`; the caller then
        stops those that have not answered. Nothing here may stop the stop."""
        self.progress, self.embedded, self.ocr_page = (
            _unstoppable(self.progress),
            _unstoppable(self.embedded),
            _unstoppable(self.ocr_page),
        )
        for conn in list(self.busy):
            try:
                conn.send(wire.STOP)
            except OSError:  # it is gone: stopped with the others left
                continue
        deadline = time.monotonic() + self.stop_grace
        try:
            while self.busy and time.monotonic() < deadline:
                for conn in wait(list(self.busy), timeout=poll_seconds):
                    self.receive(conn)
        except Exception as error:  # crashed or misbehaved meanwhile
            logger.info("parsers stopped while winding down (%s)", type(error).__name__)

    def stop_busy_parsers(self) -> None:
        for index in self.busy.values():
            self.parsers[index].stop()


def _unstoppable(report: Callable) -> Callable:
    """`report`, heard while winding down: it may not stop the stop again."""

    def call(*args) -> None:
        with contextlib.suppress(StopAfterPage):
            report(*args)

    return call


def results(
    replies: list[wire.Reply | None],
    parsers: list[ParserSlot],
    memory_bytes: int | None,
) -> list:
    """The parsers' answers in request order, or the first shard's failure."""
    results = []
    for index, reply in enumerate(replies):
        if reply is None:
            continue
        if reply.kind == "memory":
            parsers[index].stop()
            raise out_of_memory(memory_bytes)
        if reply.kind == "failed":
            raise ParserProcessError(f"{reply.value} in the parser process")
        if reply.kind == "error":
            raise reply.value
        results.append(reply.value)
    return results
