"""A message pipe over a Unix socket: length-prefixed bytes, bounded on receipt."""

from __future__ import annotations

import socket
import struct

_HEADER = struct.Struct("!Q")
_SMALL = 64 * 1024


class MessageTooLarge(Exception):
    """The other side announced a message above the receiver's limit."""


class Channel:
    """One end of a parser's pipe; `fileno()` makes it usable with `wait()`."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def fileno(self) -> int:
        return self._sock.fileno()

    def send(self, data: bytes) -> None:
        header = _HEADER.pack(len(data))
        if len(data) < _SMALL:
            self._sock.sendall(header + data)
        else:  # no copy of a large message just to prefix it
            self._sock.sendall(header)
            self._sock.sendall(data)

    def recv(self, max_bytes: int | None = None) -> bytearray:
        """The next message; EOFError when the other end is closed, MessageTooLarge
        (nothing of the body read) above `max_bytes`."""
        (size,) = _HEADER.unpack(self._read(_HEADER.size))
        if max_bytes is not None and size > max_bytes:
            raise MessageTooLarge(f"{size} bytes")
        return self._read(size)

    def _read(self, size: int) -> bytearray:
        buffer = bytearray(size)
        view = memoryview(buffer)
        got = 0
        while got < size:
            count = self._sock.recv_into(view[got:])
            if not count:
                raise EOFError("the other end closed the pipe")
            got += count
        return buffer

    def close(self) -> None:
        self._sock.close()
