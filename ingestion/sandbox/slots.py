"""The worker's handle on one parser: its process and the worker's end of its pipe,
started again when it is gone, replaced when its memory limit changes, and the
error its crash stands for."""

from __future__ import annotations

import logging
import os
import signal
from multiprocessing.connection import wait

from ..blocks import FileTooLarge, ParseError
from .channel import Channel
from .processes import ParserProcess, ParserServer
from .server import OUT_OF_MEMORY_EXIT


class ParserSlot:
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
            return out_of_memory(self.memory_bytes)
        return ParseError(f"the parser stopped unexpectedly ({exitcode})")


def out_of_memory(memory_bytes: int | None) -> FileTooLarge:
    return FileTooLarge(
        f"parsing needed more than the {memory_bytes // 2**20} MiB memory limit"
        if memory_bytes
        else "parsing ran out of memory"
    )
