"""The openai-compatible client against hostile providers: real HTTP servers on
127.0.0.1, the client in this process and in a running Curator server.

A provider (or whoever answers in its place) must not be able to send the API key
elsewhere with a redirect, nor make Curator read an answer without end.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from documents.models import Role
from retrieval.errors import ProviderUnavailable
from retrieval.openai_client import OpenAICompatibleClient, sends_key_in_clear
from tests.conftest import REPO
from tests.live import http
from tests.security.raw_http import login

SECRET = "sk-never-leaves-its-host"
EMBEDDING = {"data": [{"index": 0, "embedding": [1.0] * 32}]}


class Recorder(ThreadingHTTPServer):
    """Answers any request with one embedding; keeps the headers it was sent."""

    daemon_threads = True

    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, str]]] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                recorder.seen.append((self.command, dict(self.headers)))
                body = json.dumps(EMBEDDING).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = answer

        super().__init__(("127.0.0.1", 0), Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def authorizations(self) -> list[str]:
        return [headers.get("Authorization", "") for _, headers in self.seen]


class Redirector(ThreadingHTTPServer):
    """Answers every POST with a redirect to `target`."""

    daemon_threads = True

    def __init__(self, target: str, code: int) -> None:
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.send_response(code)
                self.send_header("Location", f"{target}/embeddings")
                self.send_header("Content-Length", "0")
                self.end_headers()

        super().__init__(("127.0.0.1", 0), Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class Flood(ThreadingHTTPServer):
    """Answers 200 with `size` bytes of JSON-looking text, without Content-Length
    (or with `declared` as one), counting what it could send before the client
    hung up."""

    daemon_threads = True

    def __init__(self, size: int, declared: int | None = None) -> None:
        self.sent = 0
        self.done = threading.Event()
        flood = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"  # the body ends when the server closes

            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                if declared is not None:
                    self.send_header("Content-Length", str(declared))
                self.end_headers()
                block = b"[0," * (64 * 1024 // 3)
                try:
                    while flood.sent < size:
                        self.wfile.write(block)
                        flood.sent += len(block)
                except OSError:
                    pass  # the client stopped reading and hung up
                finally:
                    flood.done.set()

        super().__init__(("127.0.0.1", 0), Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


@pytest.fixture
def serve() -> Iterator:
    """`serve(server)`: run it in a thread until the test ends."""
    started: list[ThreadingHTTPServer] = []

    def start(server: ThreadingHTTPServer):
        started.append(server)
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
        return server

    yield start
    for server in started:
        server.shutdown()
        server.server_close()


@pytest.fixture
def recorder(serve) -> Recorder:
    return serve(Recorder())


@pytest.fixture
def redirector(serve, recorder):
    """`redirector(code)`: a provider that redirects to `recorder`, another port."""
    return lambda code=302: serve(Redirector(recorder.url, code))


@pytest.fixture
def flood(serve):
    return lambda size, declared=None: serve(Flood(size, declared))


def client(url: str, **kwargs) -> OpenAICompatibleClient:
    return OpenAICompatibleClient(base_url=url, api_key=SECRET, timeout=5, **kwargs)


def embed(url: str, **kwargs):
    return client(url, **kwargs).post("embeddings", {"model": "m", "input": ["x"]})


class TestRedirects:
    def test_the_recorder_sees_a_direct_call(self, recorder):
        # The control: without a redirect, the key does reach its own host.
        assert embed(recorder.url) == EMBEDDING
        assert recorder.authorizations() == [f"Bearer {SECRET}"]

    @pytest.mark.parametrize("code", [301, 302, 303, 307, 308])
    def test_a_redirect_is_refused_and_the_key_stays_home(
        self, redirector, recorder, code
    ):
        provider = redirector(code)

        with pytest.raises(ProviderUnavailable, match="redirect") as raised:
            embed(provider.url)

        assert raised.value.error_code == "provider_unavailable"
        assert recorder.seen == []
        assert SECRET not in str(raised.value)


class TestResponseSize:
    CAP = 1024 * 1024

    def test_an_endless_answer_is_cut_at_the_cap(self, flood):
        provider = flood(size=128 * 1024 * 1024)

        with pytest.raises(ProviderUnavailable, match="OPENAI_MAX_RESPONSE_BYTES"):
            embed(provider.url, max_response_bytes=self.CAP)

        assert provider.done.wait(10)
        # What was sent beyond the cap sat in the sockets' buffers, unread.
        assert provider.sent < 32 * 1024 * 1024

    def test_a_declared_huge_answer_is_refused_unread(self, flood):
        provider = flood(size=8 * 1024 * 1024, declared=10 * 1024**3)

        with pytest.raises(ProviderUnavailable, match="OPENAI_MAX_RESPONSE_BYTES"):
            embed(provider.url, max_response_bytes=self.CAP)

    def test_a_deeply_nested_answer_is_not_json_to_us(self, flood):
        # "[0,[0,[0,..." a third of a megabyte deep: the decoder's recursion limit.
        provider = flood(size=300 * 1024)

        with pytest.raises(ProviderUnavailable, match="not JSON"):
            embed(provider.url, max_response_bytes=self.CAP)

    def test_an_answer_under_the_cap_is_read(self, recorder):
        assert embed(recorder.url, max_response_bytes=1024) == EMBEDDING

    def test_the_cap_comes_from_settings(self, settings):
        settings.OPENAI_MAX_RESPONSE_BYTES = 12345
        assert client("https://llm.example.com/v1").max_response_bytes == 12345
        settings.OPENAI_BASE_URL = "https://llm.example.com/v1"
        assert OpenAICompatibleClient.from_settings().max_response_bytes == 12345


@pytest.mark.parametrize(
    ("url", "in_clear"),
    [
        ("http://llm.example.com/v1", True),
        ("http://10.0.0.7:8000/v1", True),
        ("http://[2001:db8::1]/v1", True),
        ("https://llm.example.com/v1", False),
        ("http://127.0.0.1:8001/v1", False),
        ("http://127.3.2.1/v1", False),
        ("http://localhost:11434/v1", False),
        ("http://[::1]:8000/v1", False),
        ("", False),
    ],
)
def test_which_base_urls_send_the_key_in_clear(url, in_clear):
    assert sends_key_in_clear(url) is in_clear


def test_building_a_client_for_plain_http_elsewhere_logs_a_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="retrieval.openai_client"):
        client("http://user:pw@plain.example.com:8000/v1")
        client("http://127.0.0.1:8000/v1")

    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1
    assert "plain.example.com:8000" in warnings[0]
    assert "pw" not in warnings[0]


@pytest.mark.parametrize(
    ("url", "warned"),
    [("http://llm.example.com/v1", True), ("https://llm.example.com/v1", False)],
)
def test_start_up_checks_warn_about_plain_http(process_env, url, warned):
    check = subprocess.run(
        [sys.executable, str(REPO / "manage.py"), "check"],
        cwd=REPO,
        env={**process_env, "OPENAI_BASE_URL": url},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert check.returncode == 0, check.stderr
    assert ("retrieval.W001" in check.stdout + check.stderr) is warned


# --- Through a running Curator server ---------------------------------------


def remote_embeddings(url: str, **extra: str) -> dict[str, str]:
    return {
        "EMBEDDING_PROVIDER": "openai-compatible",
        "OPENAI_BASE_URL": url,
        "OPENAI_API_KEY": SECRET,
        "OPENAI_EMBEDDING_MODEL": "m",
        "OPENAI_EMBEDDING_DIMENSION": "32",
        "OPENAI_TIMEOUT_SECONDS": "5",
        **extra,
    }


def search(server, token: str):
    return http(
        "POST",
        server.url("/api/search"),
        token=token,
        body=json.dumps({"question": "annual leave"}).encode(),
        headers={"Content-Type": "application/json"},
    )


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_server_searching_through_a_redirecting_provider_keeps_its_key(
    start_server, member, redirector, recorder
):
    vera = member(Role.VIEWER, username="vera")
    server = start_server(**remote_embeddings(redirector(302).url))

    status, body = search(server, login(server, vera))

    assert (status, body["error_code"]) == (503, "provider_unavailable")
    assert recorder.seen == []
    assert SECRET not in server.process.stderr


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_server_stops_reading_an_endless_provider_answer(start_server, member, flood):
    vera = member(Role.VIEWER, username="vera")
    provider = flood(size=256 * 1024 * 1024)
    server = start_server(
        **remote_embeddings(provider.url, OPENAI_MAX_RESPONSE_BYTES="1048576")
    )

    status, body = search(server, login(server, vera))

    assert (status, body["error_code"]) == (503, "provider_unavailable")
    assert provider.done.wait(10)
    assert provider.sent < 32 * 1024 * 1024
