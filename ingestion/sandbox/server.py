"""The parser server and its parser processes, each in a clean interpreter.

The worker starts the server once (`processes.ParserServer`) with an allow-listed
environment, only its control socket open, and (when asked) as another user. The
server imports the parsing libraries and waits; for each parser the worker sends it
one end of a fresh socket pair, and the server forks a parser on it (or, where there
is no fork, starts a fresh interpreter) and tells the worker its pid, later its exit
code. A parser keeps only its socket (as fd 3) besides stdin (/dev/null), stdout
(/dev/null) and stderr, caps its own address space, ignores SIGTERM/SIGINT (the
worker decides when it stops) and exits when the worker is gone.

Control messages, one JSON object a line: worker -> server `{"memory_bytes",
"worker_pid", "pdfminer_level"}` with the socket attached; server -> worker
`{"started": pid}`, `{"refused": exception type}`, `{"exited": pid, "code": code}`.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import logging
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable

import numpy as np

from retrieval.terms import chunk_terms

from ..blocks import ParseError
from ..chunking import chunk_blocks, full_text
from . import privileges, wire
from .channel import Channel

try:  # imported here, not when a parser needs it: it may be another user by then
    import resource
except ImportError:  # no RLIMIT_AS on this platform (memory_limit_problem says so)
    resource = None

OUT_OF_MEMORY_EXIT = 75  # a parser that could not even read its request
PARSER_FD = 3
POLL_SECONDS = 0.1

# Run with `python -I -c`: no environment-driven start-up, sys.path as the worker's.
BOOTSTRAP = (
    "import json, sys; sys.path[:] = json.loads(sys.argv[1])['path']; "
    "from ingestion.sandbox.server import {entry}; {entry}(json.loads(sys.argv[1]))"
)


def main(config: dict) -> None:
    """The server: `config` holds `path`, `control` (fd), `preload`, `start`,
    `account` ([name, uid, gid] to become, or None) and `stdlib`."""
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, signal.SIG_IGN)
    # Parsers are forked from us: hidden from them, and they from each other.
    privileges.hide_process()
    privileges.forbid_new_privileges()
    control = socket.socket(fileno=config["control"])
    os.set_inheritable(control.fileno(), False)
    if config["start"] == "fork":
        for name in config["preload"]:
            module = importlib.import_module(name)
            if hasattr(module, "warm_up"):
                module.warm_up()
    if config["account"]:
        _preload_standard_library(config["stdlib"])
        _become(*config["account"])
    _Server(control, config).run()


def _preload_standard_library(names: list[str]) -> None:
    """Import what the parsing libraries take from the standard library only when
    they run (codecs above all), while the interpreter's files are readable: they
    may not be once the server is another user."""
    import encodings
    import pkgutil

    codecs = [
        f"encodings.{module.name}"
        for module in pkgutil.iter_modules(encodings.__path__)
    ]
    for name in [*names, *codecs]:
        with contextlib.suppress(ImportError):  # encodings.mbcs and the like
            importlib.import_module(name)


def _become(name: str, uid: int, gid: int) -> None:
    # After the imports (the interpreter may be where that user cannot read) and
    # before any parser exists or any request is read.
    try:
        privileges.drop_privileges(uid, gid)
    except OSError as error:
        print(
            f"curator parser server: cannot run as {name} ({error}); no parser "
            "is started",
            file=sys.stderr,
        )
        os._exit(1)


class _Server:
    def __init__(self, control: socket.socket, config: dict) -> None:
        self.control = control
        self.config = config
        self.children: set[int] = set()

    def run(self) -> None:
        wake_r, wake_w = os.pipe()
        for fd in (wake_r, wake_w):
            os.set_blocking(fd, False)
        signal.set_wakeup_fd(wake_w)
        signal.signal(signal.SIGCHLD, lambda signum, frame: None)
        self.wake = (wake_r, wake_w)
        while True:
            ready, _, _ = select.select([self.control, wake_r], [], [])
            if wake_r in ready:
                with contextlib.suppress(BlockingIOError):
                    while os.read(wake_r, 512):
                        pass
            self._reap()
            if self.control in ready:
                message, fds, _, _ = socket.recv_fds(self.control, 4096, 1)
                if not message:  # the worker is gone
                    self._kill_children()
                    os._exit(0)
                self._start_parser(json.loads(message), fds)

    def _reap(self) -> None:
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if not pid:
                return
            self.children.discard(pid)
            self._say({"exited": pid, "code": os.waitstatus_to_exitcode(status)})

    def _start_parser(self, request: dict, fds: list[int]) -> None:
        if len(fds) != 1:
            for fd in fds:
                os.close(fd)
            self._say({"refused": "ValueError"})
            return
        try:
            if self.config["start"] == "fork":
                pid = self._fork(fds[0], request)
            else:
                pid = self._exec(fds[0], request)
        except OSError as error:  # no memory or no processes left
            self._say({"refused": type(error).__name__})
            return
        finally:
            os.close(fds[0])
        self.children.add(pid)
        self._say({"started": pid})

    def _fork(self, fd: int, request: dict) -> int:
        pid = os.fork()
        if pid:
            return pid
        code = 1
        try:
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            self.control.detach()  # its fd is closed below, never by this object
            _keep_only(fd)
            parser(request)
            code = 0
        finally:
            os._exit(code)

    def _exec(self, fd: int, request: dict) -> int:
        config = {**request, "path": sys.path, "fd": fd}
        process = subprocess.Popen(  # noqa: S603 - our own interpreter and code
            [
                sys.executable,
                "-I",
                "-c",
                BOOTSTRAP.format(entry="exec_parser"),
                json.dumps(config),
            ],
            pass_fds=(fd,),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
        )
        process.returncode = 0  # reaped by _reap, not by this object
        return process.pid

    def _say(self, message: dict) -> None:
        try:
            self.control.sendall(json.dumps(message).encode() + b"\n")
        except OSError:
            self._kill_children()
            os._exit(0)

    def _kill_children(self) -> None:
        for pid in self.children:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def _keep_only(fd: int) -> None:
    """Leave stdin, stdout, stderr and `fd` (as PARSER_FD) open, nothing else."""
    if fd != PARSER_FD:
        os.dup2(fd, PARSER_FD)
    os.closerange(PARSER_FD + 1, os.sysconf("SC_OPEN_MAX"))
    null = os.open(os.devnull, os.O_RDWR)
    for standard in (0, 1):
        os.dup2(null, standard)
    os.close(null)


def exec_parser(config: dict) -> None:
    """A parser in a fresh interpreter (where there is no fork)."""
    privileges.hide_process()  # exec made it dumpable again
    _keep_only(config["fd"])
    parser(config)


# --- a parser process ---------------------------------------------------------------


def parser(request: dict) -> None:
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, signal.SIG_IGN)
    logging.getLogger("pdfminer").setLevel(request["pdfminer_level"])
    threading.Thread(
        target=_exit_with_worker, args=(request["worker_pid"],), daemon=True
    ).start()
    if request["memory_bytes"]:
        _limit_address_space(request["memory_bytes"])
    serve(Channel(socket.socket(fileno=PARSER_FD)))


def serve(conn: Channel) -> None:
    while True:
        try:
            data = conn.recv()
        except (EOFError, OSError):
            return
        except MemoryError:
            # Part of the request is still in the pipe, and the worker may still be
            # writing it: answering would deadlock both. Exit; it reads the code.
            os._exit(OUT_OF_MEMORY_EXIT)
        if data == wire.STOP:  # for a parse already answered: nothing to stop
            continue
        try:
            request = wire.decode_request(data)
        except MemoryError:
            conn.send(wire.MEMORY)
            continue
        except Exception as error:  # read whole, but not understood here
            conn.send(wire.encode_failed(error))
            continue
        del data
        # What the answer was built from is freed after it is sent (a large
        # document's tree takes tens of milliseconds), while the worker reads it.
        retained: list = []
        reply = _reply_to(conn, request, retained)
        del request
        if not _send_reply(conn, reply, retained):
            return
        del reply, retained


def _reply_to(conn: Channel, request: wire.Request, retained: list) -> bytes:
    """The encoded answer to `request`, or the error that stopped it."""
    try:
        progress, more_time, embedded = _reporters(conn)
        result = _answer(
            request,
            retain=retained,
            progress=progress,
            more_time=more_time,
            embedded=embedded,
            ocr_read=lambda number, blocks: conn.send(wire.encode_page(number, blocks)),
        )
        reply = wire.encode_result(request.operation, result)
        del result
    except MemoryError:
        reply = wire.MEMORY
    except StopRequested:
        reply = wire.STOPPED
    except ParseError as error:
        reply = wire.encode_error(error)
    except Exception as error:  # chunking or embedding: not the file's fault
        reply = wire.encode_failed(error)
    return reply


def _send_reply(conn: Channel, reply: bytes, retained: list) -> bool:
    """Send `reply`, freeing `retained` to find the memory if need be; False when
    the worker is gone."""
    try:
        try:
            conn.send(reply)
        except MemoryError:
            retained.clear()  # the tree kept for later goes now, and once more
            conn.send(reply)
    except MemoryError:
        conn.send(wire.MEMORY)
    except (BrokenPipeError, OSError):
        return False
    return True


# Embedders kept for the life of the parser: a warm feature cache, a loaded model.
_embedders: dict = {}


def _answer(
    request: wire.Request,
    *,
    retain: list,
    progress: Callable[[int, int], None],
    more_time: Callable[[float], None],
    embedded: Callable[[int, int], None],
    ocr_read: Callable[[int, list], None],
):
    from ..formats import parse_document  # here only: the worker never needs it

    blocks = parse_document(
        request.kind,
        request.data,
        request.limits,
        shard=request.shard,
        retain=retain,
        progress=progress,
        more_time=more_time,
        known_ocr=request.known_ocr,
        ocr_read=ocr_read,
    )
    if request.operation == "blocks":
        return blocks
    chunks = chunk_blocks(blocks, max_chunks=request.limits.max_chunks)
    vectors = terms = None
    embedder = request.embedder
    if embedder is not None and chunks:
        terms = [chunk_terms(chunk.text, chunk.heading_path) for chunk in chunks]

        embedder = _embedders.setdefault((type(embedder), embedder.name), embedder)
        texts = [chunk.text for chunk in chunks]
        batch = request.embed_batch
        embedded(0, len(texts))
        parts = []
        for start in range(0, len(texts), batch):
            parts.append(embedder.embed(texts[start : start + batch]))
            embedded(min(start + batch, len(texts)), len(texts))
        vectors = np.concatenate(parts)
    return wire.ExtractedPart(chunks, vectors, len(full_text(blocks)), terms)


def _reporters(
    conn: Channel,
) -> tuple[
    Callable[[int, int], None], Callable[[float], None], Callable[[int, int], None]
]:
    """`progress` sends the pages read so far, `embedded` the chunks embedded so
    far, each at most every POLL_SECONDS besides its first and last; `more_time`
    asks the worker to wait that much longer (before an OCR page)."""

    def throttled(
        encode: Callable[[int, int], bytes], *, start: bool
    ) -> Callable[[int, int], None]:
        last = 0.0

        def send(done: int, total: int) -> None:
            nonlocal last
            now = time.monotonic()
            if done == total or (start and not done) or now - last >= POLL_SECONDS:
                last = now
                conn.send(encode(done, total))

        return send

    def more_time(seconds: float) -> None:
        conn.send(wire.encode_time(seconds))

    send_progress = throttled(wire.encode_progress, start=False)

    def progress(done: int, total: int) -> None:
        if 0 < done < total and stop_asked(conn):
            conn.send(wire.encode_progress(done, total))  # where it stopped
            raise StopRequested
        send_progress(done, total)

    return progress, more_time, throttled(wire.encode_embedded, start=True)


class StopRequested(Exception):
    """The worker asked this parse to stop after its page (`wire.STOP`)."""


def stop_asked(conn: Channel) -> bool:
    """Between two pages: whether the worker sent STOP. The pages read by OCR so
    far were sent as they were read; the worker keeps them."""
    ready, _, _ = select.select([conn], [], [], 0)
    return bool(ready) and conn.recv() == wire.STOP


def _limit_address_space(memory_bytes: int) -> None:
    # The worker has said at start-up whether this can work (memory_limit_problem).
    try:
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    except (AttributeError, ValueError, OSError) as error:
        print(
            f"curator parser: memory limit not applied ({type(error).__name__})",
            file=sys.stderr,
        )


def _exit_with_worker(worker_pid: int) -> None:
    # A worker killed with SIGKILL cannot stop us; do not outlive it. Our parent is
    # the server, which exits with the worker: either way we are orphaned when the
    # worker is gone.
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
