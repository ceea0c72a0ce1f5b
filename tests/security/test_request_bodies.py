"""Nobody makes a real server read or store a body larger than its view takes:
`manage.py runserver` (`make run`) and gunicorn (`make serve`).

Each test sends what would be a GiB and measures, from the client, how many bytes
the server took: a body declared too large is answered from its headers alone,
before a byte of it is sent, and the server then closes the connection; a chunked
body is answered once the limit is passed. What the client gets to send after
that is what the sockets between the two hold (`SOCKET_BUFFERS`), not the body.
"""

from __future__ import annotations

import json
import select
import socket
import time

import pytest

from documents.models import Document, Role
from tests.security.raw_http import (
    Response,
    assert_no_error_logged,
    connect,
    login,
    read_response,
    request_head,
    send,
)

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

SERVERS = ["runserver", "gunicorn"]
GIB = 1024**3
LIMIT = 64 * 1024  # REQUEST_BODY_MAX_BYTES
# The client's send buffer (set to 64 KiB below) and the server's receive buffer;
# measured: 64-260 KiB sent after the answer, 180 KiB before a chunked one.
SOCKET_BUFFERS = 4 * 1024 * 1024
JSON = {"Content-Type": "application/json"}
FORM = {"Content-Type": "application/x-www-form-urlencoded"}
MULTIPART = {"Content-Type": "multipart/form-data; boundary=b"}
# The admin's login reads its form for the CSRF token whatever the cookie holds.
MADE_UP_CSRF = {"Cookie": "csrftoken=" + "a" * 32}


def open_socket(server) -> socket.socket:
    sock = connect(server, timeout=10)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 * 1024)
    return sock


def keep_sending(sock: socket.socket, size: int) -> int:
    """Send the body after the answer, as a client that ignores it would, until
    the server hangs up (or `size`, capped at 64 MiB, is sent): the bytes taken."""
    piece, taken = b"x" * 65536, 0
    deadline = time.monotonic() + 30
    try:
        while taken < min(size, 64 * 1024 * 1024) and time.monotonic() < deadline:
            sock.sendall(piece)
            taken += len(piece)
    except OSError:  # reset, broken pipe, or a server that stopped reading
        pass
    return taken


def declare(
    server, path: str, headers: dict, token: str | None = None, size: int = GIB
) -> tuple[Response, int]:
    """The headers of a request declaring `size` bytes, and no body yet: the
    answer, and how much of the body the server takes after it."""
    with open_socket(server) as sock:
        sock.sendall(
            request_head(
                "POST",
                path,
                {**headers, "Content-Length": str(size), "Connection": "keep-alive"},
                token,
            )
        )
        try:
            response = read_response(sock)
        except TimeoutError:
            pytest.fail(f"{path}: no answer to the headers alone in 10 s")
        return response, keep_sending(sock, size)


def send_chunks(server, path: str, headers: dict) -> tuple[Response, int]:
    """A chunked body of 16 KiB pieces, sent until the server answers (a GiB at
    most): the answer, and how much had been sent by then."""
    piece = b"x" * 16384
    frame = b"%x\r\n%s\r\n" % (len(piece), piece)
    with open_socket(server) as sock:
        sock.sendall(
            request_head(
                "POST",
                path,
                {**headers, "Transfer-Encoding": "chunked", "Connection": "keep-alive"},
            )
        )
        sent, deadline = 0, time.monotonic() + 30
        try:
            while sent < GIB and time.monotonic() < deadline:
                if select.select([sock], [], [], 0)[0]:
                    break
                sock.sendall(frame)
                sent += len(piece)
        except OSError:  # the server hung up; its answer is waiting
            pass
        return read_response(sock), sent


def assert_refused(response: Response, status: int, error_code: str | None) -> None:
    assert response.status == status, response.body[:300]
    if error_code is None:  # a page: plain text
        assert response.headers["content-type"].startswith("text/plain")
        assert b"Traceback" not in response.body
    else:
        assert response.json()["error_code"] == error_code


@pytest.mark.parametrize("kind", SERVERS)
def test_a_gib_declared_is_refused_from_its_headers(start_server, member, kind):
    vera = member(Role.VIEWER, username="vera")
    eddie = member(Role.EDITOR, username="eddie")
    server = start_server(server=kind)
    viewer, editor = login(server, vera), login(server, eddie)
    cases = [
        # The probe's `curl -F f=@big.bin /api/auth/token`: no account needed.
        ("/api/auth/token", MULTIPART, None, "request_too_large"),
        ("/admin/login/", {**MULTIPART, **MADE_UP_CSRF}, None, None),
        ("/api/search", MULTIPART, viewer, "request_too_large"),
        ("/api/chat", JSON, viewer, "request_too_large"),
        ("/login/", FORM, None, None),
        ("/api/documents", MULTIPART, None, "file_too_large"),
        ("/api/documents", MULTIPART, editor, "file_too_large"),
    ]

    for path, headers, token, error_code in cases:
        response, taken = declare(server, path, headers, token)

        assert_refused(response, 413, error_code)
        assert taken < SOCKET_BUFFERS, (path, taken)
    assert not Document.objects.exists()
    assert_no_error_logged(server)


@pytest.mark.parametrize("kind", SERVERS)
def test_an_upload_refused_by_role_is_not_read_after_the_answer(
    start_server, member, kind
):
    # Under MAX_UPLOAD_BYTES: the account refuses it, before the body, and the
    # server does not read the rest after its answer either.
    vera = member(Role.VIEWER, username="vera")
    server = start_server(server=kind)
    viewer = login(server, vera)
    size = 40 * 1024 * 1024

    for token, status, error_code in [
        (None, 401, "not_authenticated"),
        (viewer, 403, "permission_denied"),
    ]:
        response, taken = declare(server, "/api/documents", MULTIPART, token, size)

        assert_refused(response, status, error_code)
        assert taken < SOCKET_BUFFERS, (token, taken)
    assert_no_error_logged(server)


def test_gunicorn_reads_a_chunked_body_only_up_to_the_limit(start_server):
    server = start_server(server="gunicorn")
    cases = [
        ("/api/auth/token", JSON, "request_too_large"),
        ("/api/auth/token", MULTIPART, "request_too_large"),
        ("/admin/login/", {**FORM, **MADE_UP_CSRF}, None),
    ]

    for path, headers, error_code in cases:
        response, sent = send_chunks(server, path, headers)

        assert_refused(response, 413, error_code)
        assert LIMIT < sent < LIMIT + SOCKET_BUFFERS, (path, sent)
    assert_no_error_logged(server)


def test_gunicorn_reads_a_chunked_body_within_the_limit_whole(start_server):
    server = start_server(server="gunicorn")
    login_body = json.dumps({"username": "nobody", "password": "wrong"}).encode()
    chunked = {**JSON, "Transfer-Encoding": "chunked"}

    response = send(
        server,
        "POST",
        "/api/auth/token",
        chunked,
        b"%x\r\n%s\r\n0\r\n\r\n" % (len(login_body), login_body),
    )
    # An empty body would be 422 (no username): this one was read, and is wrong.
    assert_refused(response, 401, "authentication_failed")
    assert_no_error_logged(server)


@pytest.mark.parametrize(
    ("kind", "path", "headers"),
    [
        # Its size must be known before it is read, whatever the server.
        ("gunicorn", "/api/documents", MULTIPART),
        # The development server does not decode chunked bodies.
        ("runserver", "/api/auth/token", JSON),
        ("runserver", "/api/documents", MULTIPART),
    ],
)
def test_a_chunked_body_that_cannot_be_measured_first_needs_a_length(
    start_server, kind, path, headers
):
    server = start_server(server=kind)

    response, sent = send_chunks(server, path, headers)

    assert_refused(response, 411, "length_required")
    assert sent < SOCKET_BUFFERS
    assert_no_error_logged(server)
