"""Request bodies are refused before they are read, or read only up to the limit of
the view they are sent to (`core/middleware.py`, `core/body_limits.py`).

Each request's body is a `Body`: it would be as large as the test says (a GiB),
is made only as it is read, and counts what the server read of it.
"""

from __future__ import annotations

import json
import tracemalloc

import pytest
from django.core.handlers.wsgi import LimitedStream
from django.test import Client
from rest_framework.test import APIClient

from documents.models import Document, Role

pytestmark = pytest.mark.django_db

GIB = 1024**3
DEFAULT_LIMIT = 64 * 1024
JSON = "application/json"
FORM = "application/x-www-form-urlencoded"
BOUNDARY = "limits-boundary"
MULTIPART = f"multipart/form-data; boundary={BOUNDARY}"


class Body:
    """`content`, then spaces up to `size` bytes (JSON stays JSON), made on demand."""

    def __init__(self, content: bytes, size: int | None = None) -> None:
        self.content = content
        self.size = len(content) if size is None else size
        self.read_bytes = 0

    def read(self, size: int = -1) -> bytes:
        left = self.size - self.read_bytes
        size = left if size is None or size < 0 else min(size, left)
        # Reading a large body at once is the bug these tests are about.
        assert size <= 16 * 1024 * 1024, f"read {size} bytes at once"
        start, self.read_bytes = self.read_bytes, self.read_bytes + size
        head = self.content[start : start + size]
        return head + b" " * (size - len(head))

    def readline(self, size: int = -1) -> bytes:
        return self.read(size)


def send(
    client,
    path: str,
    body: Body,
    content_type: str = JSON,
    *,
    chunked: bool = False,
    decoded: bool = True,
):
    """POST `body` with its length declared, or chunked (the server decoding it
    for the application, as gunicorn does, unless `decoded` is false)."""
    if chunked:
        environ = {
            "HTTP_TRANSFER_ENCODING": "chunked",
            "wsgi.input_terminated": decoded,
        }
    else:
        environ = {"CONTENT_LENGTH": str(body.size)}
    return client.generic(
        "POST", path, content_type=content_type, **environ, **{"wsgi.input": body}
    )


def multipart_field(name: str, value: bytes) -> bytes:
    return (
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'
    ).encode() + value


def upload_body(content: bytes, filename: str = "notes.md") -> bytes:
    return (
        multipart_field("knowledge_base_id", b"kb-company")
        + (
            f'\r\n--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; '
            f'filename="{filename}"\r\nContent-Type: text/markdown\r\n\r\n'
        ).encode()
        + content
        + f"\r\n--{BOUNDARY}--\r\n".encode()
    )


def assert_refused(response, status: int, error_code: str) -> None:
    assert response.status_code == status, response.content[:300]
    if response.wsgi_request.path.startswith("/api/"):
        assert response.json()["error_code"] == error_code
        assert response.json()["detail"]
    else:
        assert response["Content-Type"].startswith("text/plain")
        assert b"Traceback" not in response.content


@pytest.fixture
def client_as(client_for, member):
    """An API client for a role in `kb-company` (anonymous for None)."""

    def make(role: str | None):
        if role is None:
            return APIClient()
        return client_for(member(role, username=f"user-{role}"))

    return make


# Every kind of route: the API without and with an account, the admin's login with
# a made-up CSRF cookie, a page, a path that does not exist, and the upload.
ROUTES = [
    pytest.param("/api/auth/token", None, JSON, id="api-anonymous-json"),
    pytest.param("/api/auth/token", None, MULTIPART, id="api-anonymous-multipart"),
    pytest.param("/api/search", Role.VIEWER, MULTIPART, id="api-search"),
    pytest.param("/api/chat", Role.VIEWER, JSON, id="api-chat"),
    pytest.param("/admin/login/", None, MULTIPART, id="admin-login"),
    pytest.param("/login/", None, FORM, id="page-sign-in"),
    pytest.param("/no/such/page/", None, FORM, id="no-such-page"),
]


@pytest.mark.parametrize(("path", "role", "content_type"), ROUTES)
def test_a_body_declared_over_the_limit_is_refused_unread(
    client_as, path, role, content_type
):
    client = client_as(role)
    client.cookies["csrftoken"] = "a" * 32
    body = Body(b"", GIB)

    response = send(client, path, body, content_type)

    assert_refused(response, 413, "request_too_large")
    assert body.read_bytes == 0


@pytest.mark.parametrize(("path", "role", "content_type"), ROUTES)
def test_a_chunked_body_is_read_only_up_to_the_limit(
    client_as, path, role, content_type
):
    client = client_as(role)
    body = Body(b"", GIB)

    response = send(client, path, body, content_type, chunked=True)

    assert_refused(response, 413, "request_too_large")
    assert DEFAULT_LIMIT < body.read_bytes <= DEFAULT_LIMIT + 1


@pytest.mark.parametrize("role", [None, Role.VIEWER, Role.EDITOR])
def test_an_upload_declared_over_the_limit_is_refused_unread(client_as, settings, role):
    # Anonymous or not: the size is known before anything, the account after.
    settings.MAX_UPLOAD_BYTES = 1024 * 1024
    body = Body(upload_body(b"# Notes\n"), GIB)

    response = send(client_as(role), "/api/documents", body, MULTIPART)

    assert_refused(response, 413, "file_too_large")
    assert body.read_bytes == 0
    assert not Document.objects.exists()


def test_an_upload_of_the_largest_size_is_taken(client_as, settings):
    settings.MAX_UPLOAD_BYTES = 200_000
    content = b"# Notes\n\n" + b"x" * (200_000 - 9)
    body = Body(upload_body(content))

    response = send(client_as(Role.EDITOR), "/api/documents", body, MULTIPART)

    assert response.status_code == 201, response.json()
    assert response.json()["size_bytes"] == 200_000


@pytest.mark.parametrize(
    ("role", "status", "error_code"),
    [
        (None, 401, "not_authenticated"),
        (Role.VIEWER, 403, "permission_denied"),
    ],
)
def test_an_upload_under_the_limit_is_refused_by_role_before_its_body(
    client_as, role, status, error_code
):
    body = Body(upload_body(b"# Notes\n"), 40 * 1024 * 1024)

    response = send(client_as(role), "/api/documents", body, MULTIPART)

    assert_refused(response, status, error_code)
    assert body.read_bytes == 0


@pytest.mark.parametrize("role", [None, Role.EDITOR])
def test_a_chunked_upload_needs_a_length(client_as, role):
    body = Body(upload_body(b"# Notes\n"), GIB)

    response = send(client_as(role), "/api/documents", body, MULTIPART, chunked=True)

    assert_refused(response, 411, "length_required")
    assert body.read_bytes == 0


def test_a_chunked_body_within_the_limit_is_read_whole(api_client):
    # An empty body would be 422 (no username); this one is read, and is wrong.
    login = json.dumps({"username": "nobody", "password": "wrong"}).encode()
    body = Body(login, DEFAULT_LIMIT)

    response = send(api_client, "/api/auth/token", body, chunked=True)

    assert_refused(response, 401, "authentication_failed")
    assert body.read_bytes == DEFAULT_LIMIT


def test_a_chunked_body_the_server_does_not_decode_needs_a_length(api_client):
    # Django's development server passes chunked bodies on undecoded, as nothing.
    body = Body(b'{"username": "nobody", "password": "wrong"}')

    response = send(api_client, "/api/auth/token", body, chunked=True, decoded=False)

    assert_refused(response, 411, "length_required")
    assert body.read_bytes == 0


def test_a_chunk_the_server_cannot_decode_is_malformed(api_client):
    class Broken(Body):
        def read(self, size: int = -1) -> bytes:
            raise ValueError("Invalid chunk size")

    response = send(api_client, "/api/auth/token", Broken(b""), chunked=True)

    assert_refused(response, 400, "malformed_request")


@pytest.mark.parametrize(
    ("path", "role"),
    [("/api/auth/token", None), ("/api/search", Role.VIEWER)],
)
def test_only_the_upload_takes_multipart(client_as, path, role):
    body = Body(
        multipart_field("username", b"nobody")
        + b"\r\n"
        + multipart_field("question", b"leave")
        + f"\r\n--{BOUNDARY}--\r\n".encode()
    )

    response = send(client_as(role), path, body, MULTIPART)

    assert_refused(response, 415, "unsupported_media_type")
    assert body.read_bytes == 0


class TestEachViewHasItsOwnLimit:
    def feedback(self, size: int) -> Body:
        content = {"question": "How long is leave?", "answer": "25 days.", "helpful": 1}
        return Body(json.dumps(content).encode(), size)

    def test_feedback_takes_more_than_the_default(self, client_as):
        body = self.feedback(1024 * 1024)

        response = send(client_as(Role.VIEWER), "/api/chat/feedback", body)

        assert response.status_code == 201, response.json()

    def test_feedback_past_its_own_limit_is_refused(self, client_as):
        body = self.feedback(2 * 1024 * 1024 + 1)

        response = send(client_as(Role.VIEWER), "/api/chat/feedback", body)

        assert_refused(response, 413, "request_too_large")
        assert body.read_bytes == 0

    def test_the_default_follows_its_setting(self, client_as, settings):
        client = client_as(Role.VIEWER)
        question = json.dumps({"question": "leave"})

        refused = send(client, "/api/search", Body(question.encode(), 100_000))
        settings.REQUEST_BODY_MAX_BYTES = 100_000
        taken = send(client, "/api/search", Body(question.encode(), 100_000))

        assert_refused(refused, 413, "request_too_large")
        assert taken.status_code == 200, taken.json()

    def test_djangos_memory_cap_refuses_from_the_header_too(self, settings):
        # Below the view's limit, Django would read it and refuse it with an ERROR.
        settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
        body = Body(b"username=" + b"x" * 2000)

        response = send(Client(), "/admin/login/", body, FORM)

        assert_refused(response, 413, "request_too_large")
        assert body.read_bytes == 0


class TestTheDevelopmentServer:
    """It hands the application its own `LimitedStream` and, after the response,
    reads what is left of a declared body at once: not any more."""

    def test_a_refused_body_is_left_unread_and_the_connection_closed(self, api_client):
        body = Body(b"", GIB)
        stream = LimitedStream(body, GIB)

        response = api_client.generic(
            "POST",
            "/api/auth/token",
            content_type=JSON,
            CONTENT_LENGTH=str(GIB),
            **{"wsgi.input": stream},
        )

        assert_refused(response, 413, "request_too_large")
        assert stream.read() == b""
        assert body.read_bytes == 0
        # Without a length the server closes the connection after the answer.
        assert not response.has_header("Content-Length")

    def test_an_upload_refused_by_role_is_left_unread(self, api_client):
        size = 40 * 1024 * 1024
        body = Body(upload_body(b"# Notes\n"), size)
        stream = LimitedStream(body, size)

        response = api_client.generic(
            "POST",
            "/api/documents",
            content_type=MULTIPART,
            CONTENT_LENGTH=str(size),
            **{"wsgi.input": stream},
        )

        assert_refused(response, 401, "not_authenticated")
        assert stream.read() == b""
        assert body.read_bytes == 0
        assert not response.has_header("Content-Length")


def test_an_upload_is_not_held_in_memory(client_as, tmp_path):
    """A 4 MiB file goes through the parser, the checks and storage in pieces."""
    content = b"# Notes\n\n" + b"Annual leave is 25 days. " * 170_000
    path = tmp_path / "body"
    path.write_bytes(upload_body(content))
    client = client_as(Role.EDITOR)

    with path.open("rb") as stream:
        tracemalloc.start()
        try:
            response = client.generic(
                "POST",
                "/api/documents",
                content_type=MULTIPART,
                CONTENT_LENGTH=str(path.stat().st_size),
                **{"wsgi.input": stream},
            )
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()

    assert response.status_code == 201, response.json()
    assert response.json()["size_bytes"] == len(content) > 4 * 1024 * 1024
    assert peak < 1024 * 1024, f"{peak} bytes allocated at the peak"
