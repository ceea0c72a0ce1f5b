"""A real Curator server for attacks over HTTP: `manage.py runserver` on a free port."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import time
from collections.abc import Iterator

import pytest

from tests.ingestion.processes import Process
from tests.live import free_port, http


class Server:
    """A running API process; `url("/api/health")` is an address on it."""

    def __init__(self, process: Process, port: int) -> None:
        self.process = process
        self.base = f"http://127.0.0.1:{port}"

    def url(self, path: str) -> str:
        return f"{self.base}{path}"


def _wait_until_up(server: Server, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.popen.poll() is not None:
            raise AssertionError(f"server exited: {server.process.stderr[-2000:]}")
        try:
            if http("GET", server.url("/api/health/live"))[0] == 200:
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("server did not answer in time")


@pytest.fixture
def start_server(process_env) -> Iterator:
    """Start a server with extra settings: `start_server(METRICS_PUBLIC="false")`."""
    started: list[Process] = []

    def start(**env: str) -> Server:
        port = free_port()
        process = Process(
            process_env, "runserver", f"127.0.0.1:{port}", "--noreload", **env
        )
        started.append(process)
        server = Server(process, port)
        _wait_until_up(server)
        return server

    yield start
    for process in started:
        if process.popen.poll() is None:
            process.signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.stop(timeout=10)
