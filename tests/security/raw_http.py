"""Talking to a `start_server` process the way a hostile client would: raw bytes on
a socket, headers no well-behaved library sends, bodies sent only in part.
"""

from __future__ import annotations

import json
import re
import socket
import uuid
from urllib.parse import urlsplit

from django.contrib.auth.hashers import PBKDF2PasswordHasher

from tests.ingestion.processes import wait_until
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
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1"]
    if "Connection" not in headers:
        lines.append("Connection: close")
    if token:
        lines.append(f"Authorization: Bearer {token}")
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def read_response(sock: socket.socket) -> Response:
    """One response, complete once its Content-Length is in (a server that refused
    early may go on reading the rest of the body before it closes), or once the
    server closes the connection (without a length, or with the body unread)."""
    raw = b""
    while True:
        _, separator, body = raw.partition(b"\r\n\r\n")
        if separator:
            length = Response(raw).headers.get("content-length")
            if length is not None and len(body) >= int(length):
                return Response(raw)
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            chunk = b""
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


def assert_no_error_logged(server) -> None:
    """No ERROR record, no traceback and no 500 in the logs (the access log is on
    stderr for runserver, stdout for gunicorn)."""
    # The log lines of the last request may still be on their way through the pipe:
    # a request of our own (a 404, logged at WARNING), logged after them, ends them.
    marker = f"/log-flush-{uuid.uuid4().hex}"
    send(server, "GET", marker, {})
    line = f'"GET {marker} HTTP/1.1" 404'
    wait_until(lambda: line in server.process.stderr + server.process.stdout)
    stderr, logs = server.process.stderr, server.process.stderr + server.process.stdout
    assert " ERROR " not in stderr, stderr
    assert "[ERROR]" not in stderr, stderr
    assert "Traceback" not in stderr, stderr
    assert not re.search(r'" 5\d\d ', logs), logs
