"""Stand-ins for a parsing library made to run code by a hostile file.

Each is an embedder (pickled to the parser process and called there, after the
parse) that takes over the parser's pipe to the worker. Importable in a parser: no
Django, no pytest.
"""

from __future__ import annotations

import errno
import json
import os
import pathlib
import pickle
import sys

import msgpack


class _Touch:
    """Unpickling this creates the file: the proof that a reply ran code."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (pathlib.Path.touch, (pathlib.Path(self.path),))


def _parser_pipe():
    """The parser's own end of its pipe to the worker, found in the caller frames."""
    frame = sys._getframe(1)
    while frame is not None:
        conn = frame.f_locals.get("conn")
        if conn is not None and hasattr(conn, "fileno"):
            return conn
        frame = frame.f_back
    raise RuntimeError("no pipe to the worker")


def send_raw(payload: bytes) -> None:
    """Send `payload` as one message, whatever the framing of the pipe is."""
    conn = _parser_pipe()
    send = getattr(conn, "send_bytes", None) or conn.send  # old Connection, Channel
    send(payload)


class _Hijacker:
    name = "hijacker"
    dimension = 8
    portable = True

    def embed(self, texts):
        self.hijack()
        os._exit(0)  # its one answer was sent; the worker sees it and then EOF

    def hijack(self) -> None:
        raise NotImplementedError


class PickleSender(_Hijacker):
    """Answers the worker with a pickle that would create `marker` if unpickled."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def hijack(self) -> None:
        send_raw(pickle.dumps(("ok", _Touch(self.marker))))


class RawSender(_Hijacker):
    """Answers the worker with `payload` as one message."""

    def __init__(self, payload: bytes) -> None:
        self.payload = payload

    def hijack(self) -> None:
        send_raw(self.payload)


class HugeAnnouncer(_Hijacker):
    """Announces a message of a terabyte (the header only)."""

    def hijack(self) -> None:
        _parser_pipe()._sock.sendall((2**40).to_bytes(8, "big"))


class OpenProbe(_Hijacker):
    """What a parser taken over could open of its worker: the worker's environment
    and memory, its parser server's environment, and the paths CURATOR_TEST_PROBE
    names (JSON, label -> path). Answers with a ParseError whose reason is
    "probe " and JSON: label -> "opened" or the errno name; its uid and its working
    directory."""

    name = "open-probe"

    @classmethod
    def from_settings(cls) -> OpenProbe:
        return cls()

    def hijack(self) -> None:
        server = os.getppid()
        with open(f"/proc/{server}/stat") as stat:
            worker = int(stat.read().rsplit(")", 1)[1].split()[1])
        targets = {
            "environ": f"/proc/{worker}/environ",
            "mem": f"/proc/{worker}/mem",
            "server-environ": f"/proc/{server}/environ",
            **json.loads(os.environ.get("CURATOR_TEST_PROBE", "{}")),
        }
        found: dict = {"worker": worker, "uid": os.getuid(), "cwd": os.getcwd()}
        for label, path in targets.items():
            try:
                os.close(os.open(path, os.O_RDONLY))
                found[label] = "opened"
            except OSError as error:
                found[label] = errno.errorcode.get(error.errno, str(error.errno))
        reason = "probe " + json.dumps(found, separators=(",", ":"))
        send_raw(msgpack.packb(["error", "ingestion.blocks.ParseError", reason]))
