"""The production web server: gunicorn with DEBUG off, as `make serve` runs it."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.live import free_port

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

GUNICORN = str(Path(sys.executable).parent / "gunicorn")


def fetch(url: str) -> tuple[int, str, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.headers["Content-Type"], response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers["Content-Type"], error.read()


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
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if fetch(f"{base}/api/health/live")[0] == 200:
                break
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(server.stderr.read()) from None
            time.sleep(0.1)
    yield server, base
    server.terminate()
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def test_the_admin_loads_its_css_and_the_api_answers_with_debug_off(gunicorn):
    _, base = gunicorn

    status, _, page = fetch(f"{base}/admin/login/")
    assert status == 200
    assert b"/static/admin/css/base.css" in page
    status, content_type, css = fetch(f"{base}/static/admin/css/base.css")
    assert (status, content_type.split(";")[0]) == (200, "text/css")
    assert b"body" in css
    status, content_type, body = fetch(f"{base}/api/health")
    assert (status, content_type) == (200, "application/json")
    assert b'"database"' in body


def test_a_graceful_restart_drops_no_request(gunicorn):
    server, base = gunicorn
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
    time.sleep(1)
    asked_before = len(results)
    server.send_signal(signal.SIGHUP)
    time.sleep(4)  # the new workers boot and the old ones finish what they hold
    stop.set()
    for client in clients:
        client.join()

    assert asked_before > 0
    assert len(results) > asked_before
    assert set(results) == {200}, [r for r in results if r != 200][:5]
    assert server.poll() is None
