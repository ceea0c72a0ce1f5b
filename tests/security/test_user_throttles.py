"""Per-user limits over HTTP: request rates on search, chat, stream and upload
(`429 throttled` with `Retry-After`), and a cap on a user's open chat streams."""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

import pytest

from core.throttling import SlotHeldStream, Slots
from documents.models import Role
from documents.services import document_publish
from ingestion.services import document_submit
from ingestion.worker import Worker
from tests.conftest import REPO
from tests.factories import DocumentFactory, api_token_for
from tests.ingestion.processes import wait_until
from tests.live import multipart
from tests.retrieval.stub_provider import StubProvider, quote_first_source

pytestmark = pytest.mark.django_db(transaction=True)

JSON = {"Content-Type": "application/json"}


def token_for(user) -> str:
    # Test users' passwords use the test settings' MD5 hasher, which the server
    # does not accept: their tokens are made here instead.
    return api_token_for(user)


def call(server, method: str, path: str, token: str, body=None, headers=None):
    """(status, headers, JSON body) of one request."""
    if isinstance(body, dict):
        body, headers = json.dumps(body).encode(), JSON
    request = urllib.request.Request(
        server.url(path),
        method=method,
        data=body,
        headers={**(headers or {}), "Authorization": f"Bearer {token}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.headers, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, error.headers, json.loads(error.read() or b"null")


def assert_throttled(status, headers, body) -> None:
    assert status == 429, body
    assert body["error_code"] == "throttled"
    assert 1 <= int(headers["Retry-After"]) <= 60


@pytest.fixture
def viewers(member):
    return token_for(member(Role.VIEWER, username="vera")), token_for(
        member(Role.VIEWER, username="val")
    )


@pytest.mark.slow
def test_the_fourth_search_is_throttled_and_another_user_is_not(start_server, viewers):
    server = start_server(THROTTLE_SEARCH="3/min")
    vera, val = viewers
    search = {"question": "annual leave"}

    statuses = [call(server, "POST", "/api/search", vera, search)[0] for _ in range(3)]
    fourth = call(server, "POST", "/api/search", vera, search)

    assert statuses == [200, 200, 200]
    assert_throttled(*fourth)
    assert call(server, "POST", "/api/search", val, search)[0] == 200


@pytest.mark.slow
def test_retrieval_debug_spends_the_same_search_budget(start_server, member):
    reviewer = token_for(member(Role.REVIEWER, username="rita", is_staff=True))
    server = start_server(THROTTLE_SEARCH="2/min")
    search = {"question": "annual leave"}

    assert call(server, "POST", "/api/search", reviewer, search)[0] == 200
    assert call(server, "POST", "/api/retrieval/debug", reviewer, search)[0] == 200
    assert_throttled(*call(server, "POST", "/api/retrieval/debug", reviewer, search))
    assert_throttled(*call(server, "POST", "/api/search", reviewer, search))


@pytest.mark.slow
def test_chat_and_stream_share_the_chat_budget(start_server, viewers):
    server = start_server(THROTTLE_CHAT="2/min")
    vera, val = viewers
    question = {"question": "How many days of annual leave?"}

    assert call(server, "POST", "/api/chat", vera, question)[0] == 200
    with open_stream(server, vera, question["question"]) as stream:
        assert stream.status == 200
    assert_throttled(*call(server, "POST", "/api/chat", vera, question))
    with open_stream(server, vera, question["question"]) as stream:
        assert stream.status == 429
        assert stream.body["error_code"] == "throttled"
        assert int(stream.headers["Retry-After"]) >= 1
    assert call(server, "POST", "/api/chat", val, question)[0] == 200


@pytest.mark.slow
def test_the_third_upload_is_throttled(start_server, member):
    eddie = token_for(member(Role.EDITOR, username="eddie"))
    erin = token_for(member(Role.EDITOR, username="erin"))
    server = start_server(THROTTLE_UPLOAD="2/min")

    def upload(token: str, number: int):
        payload, headers = multipart(
            {"knowledge_base_id": "kb-company"},
            f"note-{number}.md",
            f"# Note {number}\n\nSome text.\n".encode(),
        )
        return call(server, "POST", "/api/documents", token, payload, headers)

    assert [upload(eddie, n)[0] for n in range(2)] == [201, 201]
    assert_throttled(*upload(eddie, 3))
    assert upload(erin, 4)[0] == 201
    # Listing is not an upload.
    assert call(server, "GET", "/api/documents", eddie)[0] == 200


# What the cache reads comes back half a second late: the window in which a
# read-decide-write throttle lets requests arriving together through (DRF's own
# then lets all 30 searches through; without it 14 to 25, and exactly 10 now
# and then).
SLOW_CACHE = {"DJANGO_SETTINGS_MODULE": "tests.security.slow_cache_settings"}


def all_at_once(count: int, send) -> list:
    """`send(n)` for n in range(count), each from its own thread, released together."""
    barrier = threading.Barrier(count)

    def released(n: int):
        barrier.wait(timeout=30)
        return send(n)

    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(released, range(count)))


@pytest.mark.slow
def test_concurrent_searches_on_three_servers_pass_exactly_the_rate(
    start_server, viewers
):
    # Three processes, ten connections each: runserver's listen backlog is ten.
    servers = [start_server(THROTTLE_SEARCH="10/min", **SLOW_CACHE) for _ in range(3)]
    vera, val = viewers
    search = {"question": "annual leave"}

    answers = all_at_once(
        30, lambda n: call(servers[n % 3], "POST", "/api/search", vera, search)
    )

    statuses = [status for status, _, _ in answers]
    assert statuses.count(200) == 10, statuses
    assert statuses.count(429) == 20, statuses
    for answer in answers:
        if answer[0] == 429:
            assert_throttled(*answer)
    assert call(servers[0], "POST", "/api/search", val, search)[0] == 200


@pytest.mark.slow
def test_concurrent_uploads_pass_exactly_the_rate(start_server, member):
    eddie = token_for(member(Role.EDITOR, username="eddie"))
    server = start_server(THROTTLE_UPLOAD="4/hour", **SLOW_CACHE)

    def upload(number: int):
        payload, headers = multipart(
            {"knowledge_base_id": "kb-company"},
            f"note-{number}.md",
            f"# Note {number}\n\nSome text.\n".encode(),
        )
        return call(server, "POST", "/api/documents", eddie, payload, headers)

    statuses = [status for status, _, _ in all_at_once(12, upload)]

    assert sorted(statuses) == [201] * 4 + [429] * 8


@pytest.mark.slow
def test_an_empty_rate_means_no_limit(start_server, viewers):
    server = start_server(THROTTLE_SEARCH="")
    search = {"question": "annual leave"}

    statuses = {
        call(server, "POST", "/api/search", viewers[0], search)[0] for _ in range(5)
    }

    assert statuses == {200}


def test_a_rate_that_is_not_one_stops_the_process_at_start_up(process_env):
    checked = subprocess.run(
        [sys.executable, str(REPO / "manage.py"), "check"],
        cwd=REPO,
        env={**process_env, "THROTTLE_SEARCH": "120/week"},
        capture_output=True,
        text=True,
        check=False,
    )

    assert checked.returncode != 0
    assert "THROTTLE_SEARCH='120/week' is not a rate" in checked.stderr


# --- Concurrent streams --------------------------------------------------------


class GatedProvider:
    """A real OpenAI-compatible server whose chat answers wait for their gate, so a
    test decides when each stream ends. A question names its gate (`gate-a`)."""

    def __init__(self) -> None:
        self.stub = StubProvider()
        self.stub.chat_reply = self._reply
        self._gates: dict[str, threading.Event] = {}
        self._lock = threading.Lock()

    def gate(self, name: str) -> threading.Event:
        with self._lock:
            return self._gates.setdefault(name, threading.Event())

    def _reply(self, body: dict) -> str:
        prompt = body["messages"][-1]["content"]
        name = next(word for word in prompt.split() if word.startswith("gate-"))
        self.gate(name.strip("?.,")).wait(timeout=60)
        return quote_first_source(body)

    def open_all(self) -> None:
        with self._lock:
            for gate in self._gates.values():
                gate.set()


class Stream:
    """POST /api/chat/stream, held open after its first event (`run.started`);
    a refusal's JSON is in `body`."""

    def __init__(self, server, token: str, question: str) -> None:
        address = urlsplit(server.url("/"))
        self.connection = http.client.HTTPConnection(
            address.hostname, address.port, timeout=30
        )
        self.connection.request(
            "POST",
            "/api/chat/stream",
            json.dumps({"question": question}),
            {**JSON, "Accept": "text/event-stream", "Authorization": f"Bearer {token}"},
        )
        self.response = self.connection.getresponse()
        self.status = self.response.status
        self.headers = self.response.headers
        self.body = None
        if self.status != 200:
            self.body = json.loads(self.response.read())
            return
        assert self.response.readline() == b"id: 1\n"
        assert self.response.readline() == b"event: run.started\n"

    def read_to_end(self) -> bytes:
        """The rest of the stream; the server frees the slot before it hangs up."""
        return self.response.read()

    def close(self) -> None:
        """Hang up, as a closed browser tab does (whether or not the answer came)."""
        if self.connection.sock is not None:
            self.connection.sock.shutdown(socket.SHUT_RDWR)
        self.response.close()
        self.connection.close()


@contextlib.contextmanager
def open_stream(server, token: str, question: str) -> Iterator[Stream]:
    stream = Stream(server, token, question)
    try:
        yield stream
    finally:
        stream.close()


@pytest.fixture
def provider() -> Iterator[GatedProvider]:
    provider = GatedProvider()
    provider.stub.start()
    yield provider
    provider.open_all()
    provider.stub.stop()


@pytest.fixture
def published(knowledge_base, member):
    """A published document the questions below find, so that each answer reaches
    the provider (and waits at its gate)."""
    editor = member(Role.EDITOR, username="eddie")
    reviewer = member(Role.REVIEWER, username="rita")
    document = DocumentFactory(
        knowledge_base=knowledge_base,
        created_by=editor,
        content=b"# Leave\n\nEvery employee receives 25 days of paid annual leave.\n",
    )
    task = document_submit(user=editor, document_id=document.pk)
    Worker(worker_id="test", write=lambda line: None).run(task.pk)
    document.refresh_from_db()
    return document_publish(
        user=reviewer,
        document_id=document.pk,
        expected_lock_version=document.lock_version,
    )


def stream_server(start_server, provider: GatedProvider, **env: str):
    return start_server(
        CHAT_PROVIDER="openai-compatible",
        OPENAI_BASE_URL=provider.stub.url,
        OPENAI_CHAT_MODEL="stub-chat",
        OPENAI_TIMEOUT_SECONDS="60",
        THROTTLE_CHAT="",
        **env,
    )


def ask(gate: str) -> str:
    return f"How many days of annual leave {gate}?"


@pytest.mark.slow
def test_a_third_stream_is_refused_until_one_ends(
    start_server, provider, published, viewers
):
    server = stream_server(
        start_server, provider, CHAT_MAX_CONCURRENT_STREAMS_PER_USER="2"
    )
    vera, val = viewers

    with (
        open_stream(server, vera, ask("gate-a")) as first,
        open_stream(server, vera, ask("gate-b")) as second,
    ):
        assert (first.status, second.status) == (200, 200)
        with open_stream(server, vera, ask("gate-c")) as third:
            assert third.status == 429
            assert third.body["error_code"] == "too_many_streams"
            assert int(third.headers["Retry-After"]) >= 1
        with open_stream(server, val, ask("gate-v")) as others:
            assert others.status == 200  # another user's streams are their own

        provider.gate("gate-a").set()
        assert b"event: run.completed" in first.read_to_end()
        with open_stream(server, vera, ask("gate-d")) as fourth:
            assert fourth.status == 200
        provider.open_all()


def accepted(server, token: str, question: str) -> bool:
    with open_stream(server, token, question) as stream:
        return stream.status == 200


@pytest.mark.slow
def test_an_aborted_stream_frees_its_slot(start_server, provider, published, viewers):
    server = stream_server(
        start_server, provider, CHAT_MAX_CONCURRENT_STREAMS_PER_USER="1"
    )
    vera = viewers[0]

    # The client hangs up while its answer is being made...
    assert accepted(server, vera, ask("gate-a"))
    assert not accepted(server, vera, ask("gate-b"))
    # ...and the slot is free as soon as the server notices, at its next write.
    provider.gate("gate-a").set()
    wait_until(lambda: accepted(server, vera, ask("gate-b")), timeout=20, step=0.2)


@pytest.mark.slow
def test_failed_streams_free_their_slot(start_server, provider, published, viewers):
    server = stream_server(
        start_server, provider, CHAT_MAX_CONCURRENT_STREAMS_PER_USER="1"
    )
    provider.stub.mode = "error"

    # With a cap of one, each would be refused if the one before had kept its slot.
    for _ in range(3):
        with open_stream(server, viewers[0], ask("gate-a")) as failing:
            assert failing.status == 200, failing.body
            assert b"event: run.failed" in failing.read_to_end()


@pytest.mark.slow
def test_a_killed_server_frees_its_slots_after_the_ttl(
    start_server, provider, published, viewers, tmp_path
):
    shared = {
        "DJANGO_SETTINGS_MODULE": "tests.security.shared_cache_settings",
        "CURATOR_TEST_CACHE_DIR": str(tmp_path),
        "CHAT_MAX_CONCURRENT_STREAMS_PER_USER": "1",
        "CHAT_STREAM_SLOT_TTL_SECONDS": "4",
    }
    doomed = stream_server(start_server, provider, **shared)
    survivor = stream_server(start_server, provider, **shared)
    vera = viewers[0]

    held = Stream(doomed, vera, ask("gate-a"))
    assert held.status == 200
    doomed.process.popen.kill()
    doomed.process.popen.wait()
    killed_at = time.monotonic()

    # The slot outlives its process (the cache is shared)...
    assert not accepted(survivor, vera, ask("gate-b"))
    # ...until its TTL runs out.
    wait_until(lambda: accepted(survivor, vera, ask("gate-b")), timeout=15, step=0.3)
    assert time.monotonic() - killed_at < 4 + 2
    held.close()


# --- The slots themselves, in this process ----------------------------------------


def test_slots_are_per_owner_and_come_back_when_released():
    slots = Slots("test", limit=2, ttl_seconds=60)

    first, second = slots.acquire("vera"), slots.acquire("vera")

    assert first is not None
    assert second is not None
    assert slots.acquire("vera") is None
    assert slots.acquire("val") is not None
    second.release()
    second.release()  # twice is harmless: it frees one slot, not two
    assert slots.acquire("vera") is not None
    assert slots.acquire("vera") is None


def test_a_slot_expires_after_its_ttl():
    slots = Slots("test", limit=1, ttl_seconds=1)
    assert slots.acquire("vera") is not None

    wait_until(lambda: slots.acquire("vera"), timeout=5, step=0.1)


def test_a_stream_closed_before_its_first_chunk_frees_its_slot():
    slots = Slots("test", limit=1, ttl_seconds=60)
    started = []

    def chunks():
        started.append(True)
        yield b"never sent"

    SlotHeldStream(chunks(), slots.acquire("vera")).close()

    assert started == []
    assert slots.acquire("vera") is not None


def test_a_stream_read_to_the_end_frees_its_slot():
    slots = Slots("test", limit=1, ttl_seconds=60)

    assert list(SlotHeldStream(iter([b"a", b"b"]), slots.acquire("vera"))) == [
        b"a",
        b"b",
    ]
    assert slots.acquire("vera") is not None
