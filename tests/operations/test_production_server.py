"""The production web server: gunicorn with DEBUG off, as `make serve` runs it."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import NamedTuple

import pytest

from documents import services as document_services
from documents.models import Role
from ingestion import services as ingestion_services
from ingestion.worker import Worker
from retrieval.models import Chunk
from tests.conftest import REPO
from tests.factories import DocumentFactory
from tests.ingestion.processes import wait_until
from tests.live import free_port

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

GUNICORN = str(Path(sys.executable).parent / "gunicorn")


def fetch(url: str) -> tuple[int, str, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.headers["Content-Type"], response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers["Content-Type"], error.read()


class Served(NamedTuple):
    server: subprocess.Popen
    base: str
    log: list[str]  # the master's and workers' stderr, read while they run


def read_into(stream, lines: list[str]) -> threading.Thread:
    reader = threading.Thread(target=lambda: lines.extend(stream), daemon=True)
    reader.start()
    return reader


@pytest.fixture
def gunicorn(process_env, tmp_path):
    """A gunicorn master with two workers on a free port, static files collected."""
    env = {**process_env, "STATIC_ROOT": str(tmp_path / "static")}
    subprocess.run(
        [sys.executable, str(REPO / "manage.py"), "collectstatic", "--noinput"],
        cwd=REPO,
        env=env,
        check=True,
        capture_output=True,
    )
    port = free_port()
    server = subprocess.Popen(
        [GUNICORN, "-c", "config/gunicorn.conf.py"],
        cwd=REPO,
        env={**env, "WEB_BIND": f"127.0.0.1:{port}", "WEB_WORKERS": "2"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    log: list[str] = []
    reader = read_into(server.stderr, log)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if fetch(f"{base}/api/health/live")[0] == 200:
                break
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                reader.join(timeout=5)
                raise AssertionError("".join(log)) from None
            time.sleep(0.1)
    yield Served(server, base, log)
    server.terminate()
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()
    reader.join(timeout=5)


def workers_of(server: subprocess.Popen) -> set[int]:
    """The process ids of a gunicorn master's workers (its child processes)."""
    children = Path(f"/proc/{server.pid}/task/{server.pid}/children")
    return {int(pid) for pid in children.read_text().split()}


def test_the_admin_loads_its_css_and_the_api_answers_with_debug_off(gunicorn):
    base = gunicorn.base

    status, _, page = fetch(f"{base}/admin/login/")
    assert status == 200
    assert b"/static/admin/css/base.css" in page
    status, content_type, css = fetch(f"{base}/static/admin/css/base.css")
    assert (status, content_type.split(";")[0]) == (200, "text/css")
    assert b"body" in css
    status, content_type, body = fetch(f"{base}/api/health")
    assert (status, content_type) == (200, "application/json")
    assert b'"database"' in body


def test_it_says_at_start_what_check_deploy_warns_of(gunicorn):
    """The fixture's settings are plain HTTP with DEBUG off: each is named."""
    said = "".join(gunicorn.log)

    assert "DEBUG is off and `manage.py check --deploy` warns of" in said
    for check in ("W004", "W008", "W012", "W016"):
        assert f"deploy check: (security.{check})" in said


def test_a_graceful_restart_drops_no_request(gunicorn):
    server, base, _ = gunicorn
    results: list[int | str] = []
    stop = threading.Event()

    def keep_asking() -> None:
        while not stop.is_set():
            try:
                results.append(fetch(f"{base}/api/health")[0])
            except OSError as error:
                results.append(repr(error))

    clients = [threading.Thread(target=keep_asking) for _ in range(4)]
    for client in clients:
        client.start()
    try:
        wait_until(lambda: len(results) >= 20)
        asked_before = len(results)
        old_workers = workers_of(server)
        server.send_signal(signal.SIGHUP)
        # The new workers boot and the old ones finish what they hold and exit ...
        wait_until(
            lambda: len(new := workers_of(server)) == 2 and not new & old_workers,
            timeout=60,
        )
        # ... while the clients keep asking, of the new workers now.
        restarted = len(results)
        wait_until(lambda: len(results) >= restarted + 20)
    finally:
        stop.set()
        for client in clients:
            client.join()

    assert asked_before > 0
    assert len(results) > asked_before
    assert set(results) == {200}, [r for r in results if r != 200][:5]
    assert server.poll() is None


def published(knowledge_base, member, content: bytes) -> None:
    """A document ingested by the real worker and published."""
    editor = member(Role.EDITOR, username="warm-editor")
    reviewer = member(Role.REVIEWER, username="warm-reviewer")
    document = DocumentFactory(knowledge_base=knowledge_base, content=content)
    task = ingestion_services.document_submit(user=editor, document_id=document.pk)
    Worker(worker_id="test", write=lambda line: None).run(task.pk)
    document.refresh_from_db()
    document_services.document_publish(
        user=reviewer,
        document_id=document.pk,
        expected_lock_version=document.lock_version,
    )


@pytest.fixture
def with_chunks(knowledge_base, member):
    published(
        knowledge_base,
        member,
        b"# Leave\n\n" + b"Every employee receives 25 days of paid annual leave. " * 40,
    )
    return Chunk.objects.count()


@pytest.fixture
def logging_info(process_env):
    process_env["LOG_LEVEL"] = "INFO"


def test_workers_warm_their_search_snapshots_before_they_say_ready(
    with_chunks, logging_info, gunicorn
):
    server, base, log = gunicorn

    def warmed() -> list[str]:
        return re.findall(
            r"search warm-up done knowledge_bases=1 chunks=(\d+)", "".join(log)
        )

    # Each worker says warming until its own snapshot is up; the two finish
    # at their own pace, so wait for both before asking who is ready.
    answers: set[tuple[int, str]] = set()
    deadline = time.monotonic() + 60
    while len(warmed()) < 2 and time.monotonic() < deadline:
        status, _, body = fetch(f"{base}/api/health/ready")
        answers.add((status, json.loads(body)["status"]))
        time.sleep(0.05)
    assert warmed() == [str(with_chunks)] * 2, "".join(log)
    assert answers <= {(503, "warming"), (200, "ready")}, answers

    for _ in range(10):
        status, _, body = fetch(f"{base}/api/health/ready")
        assert status == 200, body
        assert json.loads(body)["checks"]["search"] == "ok"
    assert server.poll() is None
