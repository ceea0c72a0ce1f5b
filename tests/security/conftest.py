"""A real Curator server for attacks over HTTP on a free port: `manage.py runserver`,
or gunicorn."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

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


def _runserver(process_env: dict[str, str], port: int, env: dict) -> Process:
    return Process(process_env, "runserver", f"127.0.0.1:{port}", "--noreload", **env)


def _gunicorn(process_env: dict[str, str], port: int, env: dict) -> Process:
    """The production server as `make serve` runs it, with one worker."""
    return Process(
        process_env,
        "-c",
        "config/gunicorn.conf.py",
        program=[str(Path(sys.executable).parent / "gunicorn")],
        WEB_BIND=f"127.0.0.1:{port}",
        WEB_WORKERS="1",
        **env,
    )


SERVERS = {"runserver": _runserver, "gunicorn": _gunicorn}


@pytest.fixture
def start_server(process_env) -> Iterator:
    """Start a server with extra settings: `start_server(METRICS_PUBLIC="false")`;
    `start_server(server="gunicorn")` for the production server."""
    started: list[Process] = []

    def start(server: str = "runserver", **env: str) -> Server:
        port = free_port()
        process = SERVERS[server](process_env, port, env)
        started.append(process)
        running = Server(process, port)
        _wait_until_up(running)
        return running

    yield start
    for process in started:
        if process.popen.poll() is None:
            process.signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.stop(timeout=10)
