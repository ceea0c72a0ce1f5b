"""The worker's handle on its parser server and the parsers forked from it.

The server is started with an environment built from an allow-list, so that no
secret of the worker's (SECRET_KEY, DATABASE_URL, storage and provider keys) is in
any parser's environment, from exec on (`/proc/<pid>/environ` included): clearing
`os.environ` inside a process would leave the secrets in its initial environment.
It starts in `/`, not in the worker's directory, and is told which user to become
(`privileges.py`); the worker hides itself from it first.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass

from .channel import Channel
from .privileges import SandboxError, hide_process, parser_account
from .server import BOOTSTRAP

# What a parser may need of the worker's environment: the program path, locale and
# time zone, where temporary files and caches go, and thread counts.
PASSED_VARIABLES = frozenset({"PATH", "LANG", "LANGUAGE", "TZ", "TMPDIR", "HOME"})
PASSED_PREFIXES = ("LC_",)
# The embedder's numpy needs no BLAS threads in a parser, and each one (one per
# core) would map a stack and buffers into an address space capped by RLIMIT_AS
# (docs/operations.md has the sizes).
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
# Set for every parser whatever the worker has: ONNX Runtime (OCR) would write a
# device id under HOME and send usage events from the parser (since 1.29).
FIXED_VARIABLES = {"ORT_DISABLE_TELEMETRY": "1"}
# Imported by the parser server before it forks; a module's `warm_up()`, if it has
# one, runs there too, so that every parser starts with it done.
PRELOAD = ("ingestion.formats", "retrieval.embeddings", "retrieval.terms")
# Imported too before the server changes user, with every codec: modules of the
# standard library the parsing libraries import only when they run (as found by
# parsing the corpus, OCR and E5 included), and an interpreter may lie where the
# parser user cannot read (/root/.pyenv): ImportError, OCR "unavailable", then.
STDLIB_PRELOAD = (
    "difflib",
    "glob",
    "hmac",
    "http.cookiejar",
    "http.cookies",
    "importlib.readers",
    "importlib.resources.readers",
    "stringprep",
)
START_METHOD = "fork" if hasattr(os, "fork") else "exec"
_REPLY_SECONDS = 60.0  # the server imports the parsing libraries before it answers


@dataclass(frozen=True)
class SandboxOptions:
    # Run the parsers as this user; empty: curator-parser or nobody whenever the
    # worker can switch users (privileges.parser_account).
    user: str = ""
    passed_variables: tuple[str, ...] = ()  # more environment variables to pass
    reply_max_bytes: int = 256 * 1024 * 1024  # a larger reply is refused unread


def parser_environment(options: SandboxOptions, home: str | None = None) -> dict:
    for variable in THREAD_VARIABLES:
        os.environ.setdefault(variable, "1")
    passed = PASSED_VARIABLES | set(options.passed_variables) | set(THREAD_VARIABLES)
    environment = {
        name: value
        for name, value in os.environ.items()
        if name in passed or name.startswith(PASSED_PREFIXES)
    }
    if home is not None:
        environment["HOME"] = home
    return environment | FIXED_VARIABLES


def memory_limit_problem(memory_bytes: int | None) -> str | None:
    """Why RLIMIT_AS of `memory_bytes` cannot be applied to a parser, or None."""
    if not memory_bytes:
        return None
    try:
        import resource
    except ImportError:
        return "this platform has no RLIMIT_AS"
    if sys.platform == "darwin":
        return "macOS does not enforce RLIMIT_AS"
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY and hard < memory_bytes:
        return f"the hard limit on address space is {hard // 2**20} MiB, below it"
    return None


_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_seconds(pid: int) -> float | None:
    """CPU time of process `pid` and its reaped children (OCR threads included),
    from /proc; None where there is no /proc or the process is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    # utime, stime, cutime, cstime: fields 14-17 of proc(5), after pid and comm.
    return sum(int(value) for value in fields[11:15]) / _CLOCK_TICKS


class ParserProcess:
    """A parser, as the worker sees it: the server forked it and reports its exit."""

    def __init__(self, server: ParserServer, pid: int) -> None:
        self.server = server
        self.pid = pid

    def cpu_seconds(self) -> float | None:
        return cpu_seconds(self.pid)

    @property
    def exitcode(self) -> int | None:
        return self.server.exitcode(self.pid)

    def is_alive(self) -> bool:
        return self.exitcode is None

    def kill(self) -> None:
        if self.is_alive():
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)

    def join(self, timeout: float | None = None) -> None:
        self.server.wait_for_exit(self.pid, timeout)


class ParserServer:
    def __init__(self, *, start_method: str = START_METHOD) -> None:
        self.start_method = start_method
        self.options = SandboxOptions()
        self._popen: subprocess.Popen | None = None
        self._control: socket.socket | None = None
        self._buffer = b""
        self._exits: dict[int, int] = {}
        self._started: list[dict] = []
        self._answered = False  # it has said something: its imports are done

    def configure(self, options: SandboxOptions) -> None:
        """Use `options` from the next start on (now, if the server runs)."""
        if options != self.options:
            self.options = options
            self.stop()

    def running(self) -> bool:
        return self._popen is not None and self._popen.poll() is None

    def ensure_running(self) -> None:
        if self.running():
            return
        self.stop()
        # Without fork (no users to switch to there), each parser is a new
        # interpreter: it stays the worker's user.
        account = (
            parser_account(self.options.user) if self.start_method == "fork" else None
        )
        hide_process()  # before any parser exists
        worker_end, server_end = socket.socketpair()
        config = {
            # Absolute: the server starts in "/", and "" would mean there.
            "path": [os.path.abspath(entry) for entry in sys.path],
            "control": server_end.fileno(),
            "preload": list(PRELOAD),
            "start": self.start_method,
            "account": account and [account.name, account.uid, account.gid],
            "stdlib": list(STDLIB_PRELOAD),
        }
        try:
            self._popen = subprocess.Popen(  # noqa: S603 - our own interpreter and code
                [
                    sys.executable,
                    "-I",
                    "-c",
                    BOOTSTRAP.format(entry="main"),
                    json.dumps(config),
                ],
                env=parser_environment(
                    self.options, home=account.home if account else None
                ),
                close_fds=True,
                pass_fds=(server_end.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                # Not the worker's directory (the database and media may be below).
                cwd=os.sep,
            )
        except PermissionError as error:
            raise SandboxError(f"cannot start the parser server: {error}") from None
        finally:
            server_end.close()
        self._control = worker_end

    def start_parser(
        self, *, memory_bytes: int | None, worker_pid: int, pdfminer_level: int
    ) -> tuple[ParserProcess, Channel]:
        for attempt in range(2):
            self.ensure_running()
            worker_end, parser_end = socket.socketpair()
            request = {
                "memory_bytes": memory_bytes,
                "worker_pid": worker_pid,
                "pdfminer_level": pdfminer_level,
            }
            try:
                socket.send_fds(
                    self._control, [json.dumps(request).encode()], [parser_end.fileno()]
                )
                started = self._next_started()
            except (EOFError, OSError):
                worker_end.close()
                if attempt:
                    raise
                self.stop()  # it died; start it again once
                continue
            finally:
                parser_end.close()
            if "refused" in started:
                worker_end.close()
                raise OSError(
                    f"the parser server could not fork ({started['refused']})"
                )
            return ParserProcess(self, started["started"]), Channel(worker_end)
        raise AssertionError("unreachable")

    def _next_started(self) -> dict:
        deadline = time.monotonic() + _REPLY_SECONDS
        while not self._started:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise EOFError("the parser server did not answer")
            self._read(remaining)
        return self._started.pop(0)

    def _read(self, timeout: float) -> None:
        """Read what the server said within `timeout` seconds."""
        control = self._control
        if control is None:
            raise EOFError("the parser server is not running")
        control.settimeout(timeout)
        try:
            data = control.recv(65536)
        except (TimeoutError, BlockingIOError):
            return
        if not data:
            raise EOFError("the parser server exited")
        self._answered = True
        self._buffer += data
        *lines, self._buffer = self._buffer.split(b"\n")
        for line in lines:
            message = json.loads(line)
            if "exited" in message:
                self._exits[message["exited"]] = message["code"]
            else:
                self._started.append(message)

    def exitcode(self, pid: int) -> int | None:
        if pid not in self._exits and self._control is not None:
            try:
                self._read(0)
            except (EOFError, OSError):
                self.stop()
        if pid not in self._exits and self._control is None:
            return -signal.SIGKILL  # the server and its parsers are gone
        return self._exits.get(pid)

    def wait_for_exit(self, pid: int, timeout: float | None) -> None:
        deadline = None if timeout is None else time.monotonic() + timeout
        while pid not in self._exits and self._control is not None:
            remaining = 1.0 if deadline is None else deadline - time.monotonic()
            if remaining <= 0:
                return
            try:
                self._read(remaining)
            except (EOFError, OSError):
                self.stop()

    def stop(self) -> None:
        """Stop the server; it kills the parsers it started."""
        if self._control is not None:
            self._control.close()
            self._control = None
        if self._popen is not None:
            # Its select loop sees the socket close and kills its parsers; one
            # still importing the parsing libraries (none forked yet) goes at once.
            try:
                self._popen.wait(timeout=1 if self._answered else 0)
            except subprocess.TimeoutExpired:
                self._popen.kill()
                self._popen.wait()
            self._popen = None
            self._answered = False
        self._buffer = b""
        self._started.clear()
