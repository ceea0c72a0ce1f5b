"""Stand-ins for a parsing library made to run code by a hostile file.

Each is an embedder (pickled to the parser process and called there, after the
parse) that takes over the parser's pipe to the worker. Importable in a parser: no
Django, no pytest.
"""

from __future__ import annotations

import os
import pathlib
import pickle
import sys


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
