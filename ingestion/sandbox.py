"""Parsing in a child process, so a pathological file cannot hang or exhaust a worker.

Each worker process keeps one warm parser process and talks to it over a pipe:

    worker: send (kind, data, limits) -> wait for the reply, up to the time limit,
            calling `interrupt()` every POLL_SECONDS (it may raise to give up)
    parser: parse_document(kind, data, limits) -> reply blocks or the ParseError

The parser is started with "spawn" (no inherited threads, locks or database
connections), caps its own address space (RLIMIT_AS), ignores SIGTERM/SIGINT (the
worker decides when it stops) and exits when the worker is gone. A timeout, a memory
error, a crash or an interruption kills it; the next parse starts a fresh one.
This module does not touch Django, so the parser process stays small.
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
from multiprocessing.connection import Connection

from .parsers import Block, FileTooLarge, ParseError, ParseLimits, parse_document

POLL_SECONDS = 0.1


class ParseTimeout(ParseError):
    """The parse ran past its wall-clock limit and was killed."""


class ParseSandbox:
    def __init__(self) -> None:
        self._process: multiprocessing.process.BaseProcess | None = None
        self._conn: Connection | None = None
        self._memory_bytes: int | None = None

    def start(self, *, memory_bytes: int | None) -> Connection:
        """Start the parser now (if needed), so the first parse finds it warm."""
        if (
            self._conn is not None
            and self._process is not None
            and self._process.is_alive()
            and self._memory_bytes == memory_bytes
        ):
            return self._conn
        self.stop()
        context = multiprocessing.get_context("spawn")
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
        self._process, self._conn = process, parent_end
        self._memory_bytes = memory_bytes
        return parent_end

    def stop(self) -> None:
        if self._conn is not None:
            self._conn.close()
        if self._process is not None:
            if self._process.is_alive():
                self._process.kill()
            self._process.join(timeout=5)
        self._process = self._conn = None

    def parse(
        self,
        kind: str,
        data: bytes,
        *,
        limits: ParseLimits,
        timeout: float,
        memory_bytes: int | None,
        interrupt: Callable[[], None] = lambda: None,
    ) -> list[Block]:
        """Blocks of the document, or ParseError (ParseTimeout, FileTooLarge, ...)."""
        conn = self.start(memory_bytes=memory_bytes)
        deadline = time.monotonic() + timeout
        try:
            conn.send((kind, data, limits))
            while not conn.poll(POLL_SECONDS):
                interrupt()
                if time.monotonic() >= deadline:
                    raise ParseTimeout(
                        f"parsing took longer than {timeout:g} s, the limit"
                    )
            outcome, value = conn.recv()
        except (EOFError, OSError):
            exitcode = self._exit_code()
            self.stop()
            if exitcode == -signal.SIGKILL:
                raise FileTooLarge(
                    "the parser was killed, most likely for using too much memory"
                ) from None
            raise ParseError(f"the parser stopped unexpectedly ({exitcode})") from None
        except BaseException:
            # Timed out or interrupted mid-parse: the parser is busy, start afresh.
            self.stop()
            raise
        if outcome == "ok":
            return value
        if outcome == "memory":
            self.stop()
            raise FileTooLarge(
                f"parsing needed more than the {memory_bytes // 2**20} MiB memory limit"
                if memory_bytes
                else "parsing ran out of memory"
            )
        raise value

    def _exit_code(self) -> int | None:
        if self._process is None:
            return None
        self._process.join(timeout=1)
        return self._process.exitcode


_shared = ParseSandbox()
atexit.register(_shared.stop)


def shared_sandbox() -> ParseSandbox:
    """This process's parser (one worker per process, so one parser)."""
    return _shared


# --- the parser process -------------------------------------------------------------


def _serve(
    conn: Connection, memory_bytes: int | None, parent_pid: int, pdfminer_level: int
) -> None:
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, signal.SIG_IGN)
    logging.getLogger("pdfminer").setLevel(pdfminer_level)
    threading.Thread(target=_exit_with_parent, args=(parent_pid,), daemon=True).start()
    if memory_bytes:
        _limit_address_space(memory_bytes)
    while True:
        try:
            kind, data, limits = conn.recv()
        except (EOFError, OSError):
            return
        except MemoryError:
            conn.send(("memory", None))
            continue
        try:
            reply = ("ok", parse_document(kind, data, limits))
        except MemoryError:
            reply = ("memory", None)
        except ParseError as error:
            reply = ("error", error)
        del data
        try:
            conn.send(reply)
        except MemoryError:
            conn.send(("memory", None))
        except (BrokenPipeError, OSError):
            return


def _limit_address_space(memory_bytes: int) -> None:
    with contextlib.suppress(ImportError, ValueError, OSError):
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))


def _exit_with_parent(parent_pid: int) -> None:
    # A worker killed with SIGKILL cannot stop us; do not outlive it.
    while os.getppid() == parent_pid:
        time.sleep(1)
    os._exit(0)
