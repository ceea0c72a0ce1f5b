"""Malformed and oversized requests against a running server: each gets a 4xx with
the usual error body, and the server logs no ERROR line and no traceback.

The requests are written byte by byte on a socket, since no HTTP library sends a
`Content-Length: abc` or stops half-way through a body on purpose.
"""

from __future__ import annotations

import json
import re

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

JSON = {"Content-Type": "application/json"}
FORM = {"Content-Type": "application/x-www-form-urlencoded"}
BOUNDARY = "edges-boundary"
MULTIPART = {"Content-Type": f"multipart/form-data; boundary={BOUNDARY}"}


def nested(depth: int) -> bytes:
    return b'{"question": ' + b"[" * depth + b"]" * depth + b"}"


def with_length(headers: dict[str, str], body: bytes) -> dict[str, str]:
    return {**headers, "Content-Length": str(len(body))}


def post(server, path: str, headers: dict, body: bytes, token: str | None = None):
    return send(server, "POST", path, with_length(headers, body), body, token)


def assert_refused(response: Response, status: int, error_code: str) -> None:
    assert response.status == status, response.body[:500]
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["error_code"] == error_code
    assert body["detail"]
    assert "Traceback" not in body["detail"]


def form_part(name: str, value: bytes) -> bytes:
    return (
        (
            f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'
        ).encode()
        + value
        + b"\r\n"
    )


def file_part_head(filename: str = "notes.md") -> bytes:
    return (
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; '
        f'filename="{filename}"\r\nContent-Type: text/markdown\r\n\r\n'
    ).encode()


def upload_body(knowledge_base_id: str, content: bytes) -> bytes:
    return (
        form_part("knowledge_base_id", knowledge_base_id.encode())
        + file_part_head()
        + content
        + f"\r\n--{BOUNDARY}--\r\n".encode()
    )


def csrf_cookie(server) -> str:
    response = send(server, "GET", "/admin/login/", {})
    match = re.search(r"csrftoken=([A-Za-z0-9]+)", response.headers["set-cookie"])
    assert match, response.headers
    return match.group(1)


@pytest.mark.parametrize(
    ("headers", "body", "status", "error_code"),
    [
        pytest.param(JSON, nested(10_000), 400, "malformed_request", id="deep-json"),
        pytest.param(
            JSON,
            b'{"username": "\xff\xfe", "password": "x"}',
            400,
            "malformed_request",
            id="invalid-utf8",
        ),
        pytest.param(
            JSON,
            json.dumps({"username": "x" * 200_000, "password": "x"}).encode(),
            413,
            "request_too_large",
            id="json-over-limit",
        ),
        pytest.param(
            FORM,
            b"username=" + b"x" * 200_000 + b"&password=x",
            413,
            "request_too_large",
            id="form-over-limit",
        ),
    ],
)
def test_an_anonymous_bad_body_is_refused(
    start_server, headers, body, status, error_code
):
    # Deep enough for the decoder, far under the limit; the others over it.
    server = start_server(DATA_UPLOAD_MAX_MEMORY_SIZE="100000")

    response = post(server, "/api/auth/token", headers, body)

    assert_refused(response, status, error_code)
    assert_no_error_logged(server)


class TestDeeplyNestedJson:
    def test_nesting_past_the_setting_is_malformed(self, start_server, member):
        vera = member(Role.VIEWER, username="vera")
        server = start_server(API_MAX_JSON_DEPTH="8")
        token = login(server, vera)

        too_deep = nested(8)  # the object around it makes nine
        response = post(server, "/api/search", JSON, too_deep, token)
        assert_refused(response, 400, "malformed_request")
        assert "8" in response.json()["detail"]

        deep_enough = b'{"question": "leave", "knowledge_base_ids": ["kb-company"]}'
        response = post(server, "/api/search", JSON, deep_enough, token)
        assert response.status == 200, response.body
        assert_no_error_logged(server)


class TestBodyOverTheMemoryLimit:
    def test_a_huge_declared_json_body_is_refused_before_it_is_sent(self, start_server):
        server = start_server()
        headers = {**JSON, "Content-Length": str(200 * 1024 * 1024)}

        with connect(server, timeout=10) as sock:
            sock.sendall(request_head("POST", "/api/auth/token", headers))
            sock.sendall(b'{"username": "')
            response = read_response(sock)

        assert_refused(response, 413, "request_too_large")
        assert_no_error_logged(server)

    def test_a_multipart_field_over_the_limit_is_too_large(self, start_server, member):
        eddie = member(Role.EDITOR, username="eddie")
        server = start_server(DATA_UPLOAD_MAX_MEMORY_SIZE="1000")
        token = login(server, eddie)
        body = (
            form_part("knowledge_base_id", b"kb-company")
            + form_part("note", b"x" * 5000)
            + file_part_head()
            + b"# Notes\n\ntext\n\r\n"
            + f"--{BOUNDARY}--\r\n".encode()
        )

        response = post(server, "/api/documents", MULTIPART, body, token)

        assert_refused(response, 413, "file_too_large")
        assert not Document.objects.exists()
        assert_no_error_logged(server)

    def test_too_many_multipart_fields_are_malformed(self, start_server, member):
        eddie = member(Role.EDITOR, username="eddie")
        server = start_server()
        token = login(server, eddie)
        body = b"".join(form_part(f"f{i}", b"1") for i in range(1100))
        body += upload_body("kb-company", b"# Notes\n\ntext\n")

        response = post(server, "/api/documents", MULTIPART, body, token)

        assert_refused(response, 400, "malformed_request")
        assert_no_error_logged(server)

    def test_the_admin_refuses_a_huge_form_without_logging_an_error(self, start_server):
        server = start_server(DATA_UPLOAD_MAX_MEMORY_SIZE="1000")
        token = csrf_cookie(server)
        body = b"username=" + b"x" * 2000
        headers = {
            **FORM,
            "Cookie": f"csrftoken={token}",
            "X-CSRFToken": token,
        }

        response = post(server, "/admin/login/", headers, body)

        assert response.status == 413
        assert_no_error_logged(server)


class TestContentLength:
    @pytest.mark.parametrize("value", ["abc", "-1", "+12", "0x10", "1e3", "12, 12"])
    def test_a_malformed_length_is_malformed_request(self, start_server, member, value):
        eddie = member(Role.EDITOR, username="eddie")
        server = start_server()
        token = login(server, eddie)
        json_body, upload = b"{}", upload_body("kb-company", b"# Notes\n\ntext\n")

        anonymous = send(
            server,
            "POST",
            "/api/auth/token",
            {**JSON, "Content-Length": value},
            json_body,
        )
        uploading = send(
            server,
            "POST",
            "/api/documents",
            {**MULTIPART, "Content-Length": value},
            upload,
            token,
        )

        assert_refused(anonymous, 400, "malformed_request")
        assert_refused(uploading, 400, "malformed_request")
        assert not Document.objects.exists()
        assert_no_error_logged(server)

    def test_the_admin_answers_400_to_a_malformed_length(self, start_server):
        server = start_server()
        token = csrf_cookie(server)
        headers = {
            **FORM,
            "Content-Length": "abc",
            "Cookie": f"csrftoken={token}",
            "X-CSRFToken": token,
        }

        response = send(server, "POST", "/admin/login/", headers, b"username=a")

        assert response.status == 400
        assert_no_error_logged(server)

    def test_a_huge_declared_upload_is_refused_before_it_is_sent(
        self, start_server, member
    ):
        eddie = member(Role.EDITOR, username="eddie")
        server = start_server()
        token = login(server, eddie)
        headers = {**MULTIPART, "Content-Length": str(200 * 1024 * 1024)}

        with connect(server, timeout=10) as sock:
            sock.sendall(request_head("POST", "/api/documents", headers, token))
            sock.sendall(form_part("knowledge_base_id", b"kb-company"))
            response = read_response(sock)

        assert_refused(response, 413, "file_too_large")
        assert_no_error_logged(server)

    def test_a_chunked_body_is_not_an_error(self, start_server):
        # The development server does not decode chunked bodies and sees none;
        # production servers decode them. Either way the answer is a 4xx.
        server = start_server()
        chunk = b'{"username": "x", "password": "y"}'
        body = b"%x\r\n%s\r\n0\r\n\r\n" % (len(chunk), chunk)

        response = send(
            server,
            "POST",
            "/api/auth/token",
            {**JSON, "Transfer-Encoding": "chunked"},
            body,
        )

        assert 400 <= response.status < 500
        assert response.json()["error_code"]
        assert_no_error_logged(server)


class TestUploadRoleBeforeTheBody:
    """A client that may not upload is refused from its headers alone: the server
    answers while most of the declared body was never sent."""

    DECLARED = 40 * 1024 * 1024  # under MAX_UPLOAD_BYTES: only the role refuses
    SENT = 64 * 1024

    def answer_to_a_partial_upload(
        self, server, token: str | None, path: str = "/api/documents"
    ) -> Response:
        """Headers and the first 64 KiB, then nothing: what does the server say?"""
        with connect(server, timeout=10) as sock:
            head = request_head(
                "POST", path, {**MULTIPART, "Content-Length": str(self.DECLARED)}, token
            )
            first = form_part("knowledge_base_id", b"kb-company") + file_part_head()
            sock.sendall(head + first + b"x" * (self.SENT - len(first)))
            return read_response(sock)

    def test_anonymous_is_refused_before_the_body(self, start_server):
        server = start_server()

        response = self.answer_to_a_partial_upload(server, None)

        assert_refused(response, 401, "not_authenticated")

    def test_a_viewer_is_refused_before_the_body(self, start_server, member):
        vera = member(Role.VIEWER, username="vera")
        server = start_server()
        token = login(server, vera)

        response = self.answer_to_a_partial_upload(server, token)

        assert_refused(response, 403, "permission_denied")

    def test_a_viewer_naming_the_knowledge_base_is_refused_before_the_body(
        self, start_server, member, other_knowledge_base
    ):
        # An editor elsewhere must name the knowledge base in the query string
        # to be refused this early; the form field alone is checked after.
        vera = member(Role.VIEWER, username="vera")
        member(Role.EDITOR, kb=other_knowledge_base, username="vera")
        server = start_server()
        token = login(server, vera)

        path = "/api/documents?knowledge_base_id=kb-company"
        response = self.answer_to_a_partial_upload(server, token, path)

        assert_refused(response, 403, "permission_denied")

    def test_a_non_member_naming_the_knowledge_base_is_not_told_it_exists(
        self, start_server, member, other_knowledge_base
    ):
        outsider = member(Role.EDITOR, kb=other_knowledge_base, username="otto")
        server = start_server()
        token = login(server, outsider)

        path = "/api/documents?knowledge_base_id=kb-company"
        response = self.answer_to_a_partial_upload(server, token, path)

        assert_refused(response, 404, "not_found")

    def test_an_editor_is_waited_for_and_then_uploads(self, start_server, member):
        # The control: the same partial request from an editor gets no answer
        # until the whole body has arrived.
        eddie = member(Role.EDITOR, username="eddie")
        server = start_server()
        token = login(server, eddie)
        body = upload_body("kb-company", b"# Notes\n\n" + b"text " * 100_000)
        head = request_head(
            "POST",
            "/api/documents?knowledge_base_id=kb-company",
            with_length(MULTIPART, body),
            token,
        )

        with connect(server, timeout=1.5) as sock:
            sock.sendall(head + body[: self.SENT])
            with pytest.raises(TimeoutError):
                sock.recv(1)
            sock.settimeout(10)
            sock.sendall(body[self.SENT :])
            response = read_response(sock)

        assert response.status == 201, response.body
        assert response.json()["knowledge_base_id"] == "kb-company"
