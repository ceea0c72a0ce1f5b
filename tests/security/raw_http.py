"""Talking to a `start_server` process the way a hostile client would: raw bytes on
a socket, headers no well-behaved library sends, bodies sent only in part.
"""

from __future__ import annotations

import json
import socket
from urllib.parse import urlsplit

from django.contrib.auth.hashers import PBKDF2PasswordHasher

from tests.live import http

PASSWORD = "secret-pass-1"


def with_server_password(user) -> None:
    """Give `user` a password the server process can check: the test settings hash
    with MD5, which the server's own settings do not accept. Few iterations keep it
    fast; the server re-hashes it on the first login."""
    user.password = PBKDF2PasswordHasher().encode(PASSWORD, "edges-salt", 1000)
    user.save(update_fields=["password"])


def login(server, user) -> str:
    """An API token for `user`, asked of the server like any client would."""
    with_server_password(user)
    status, body = http(
        "POST",
        server.url("/api/auth/token"),
        body=json.dumps({"username": user.username, "password": PASSWORD}).encode(),
        headers={"Content-Type": "application/json"},
    )
    assert status == 200, body
    return body["token"]


class Response:
    def __init__(self, raw: bytes) -> None:
        head, _, self.body = raw.partition(b"\r\n\r\n")
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        self.status = int(status_line.split()[1])
        self.headers = {
            name.strip().lower(): value.strip()
            for name, _, value in (line.partition(":") for line in header_lines)
        }

    def json(self):
        return json.loads(self.body)


def connect(server, timeout: float = 10) -> socket.socket:
    parts = urlsplit(server.base)
    return socket.create_connection((parts.hostname, parts.port), timeout=timeout)


def request_head(
    method: str, path: str, headers: dict[str, str], token: str | None = None
) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", "Connection: close"]
    if token:
        lines.append(f"Authorization: Bearer {token}")
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def read_response(sock: socket.socket) -> Response:
    """One response, complete once its Content-Length is in: a server that refused
    early may go on reading the rest of the body before it closes."""
    raw = b""
    while True:
        _, separator, body = raw.partition(b"\r\n\r\n")
        if separator:
            length = Response(raw).headers.get("content-length")
            if length is not None and len(body) >= int(length):
                return Response(raw)
        chunk = sock.recv(65536)
        if not chunk:
            return Response(raw)
        raw += chunk


def send(
    server,
    method: str,
    path: str,
    headers: dict[str, str],
    body: bytes = b"",
    token: str | None = None,
) -> Response:
    with connect(server) as sock:
        sock.sendall(request_head(method, path, headers, token) + body)
        return read_response(sock)
