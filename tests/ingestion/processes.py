"""Curator OS processes for tests: started with extra settings, output read live."""

from __future__ import annotations

import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable

from tests.ingestion.conftest import REPO


class Process:
    """`manage.py ...` (or another `program`) whose stdout lines are collected by
    a reader thread."""

    def __init__(
        self,
        base_env: dict[str, str],
        *args: str,
        program: list[str] | None = None,
        **env: str,
    ) -> None:
        self.popen = subprocess.Popen(
            [*(program or [sys.executable, str(REPO / "manage.py")]), *args],
            cwd=REPO,
            env={**base_env, "PYTHONUNBUFFERED": "1", **env},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []
        self._new: queue.Queue[str] = queue.Queue()
        self._errors: list[str] = []
        threading.Thread(
            target=self._read, args=(self.popen.stdout,), daemon=True
        ).start()
        threading.Thread(
            target=self._collect, args=(self.popen.stderr,), daemon=True
        ).start()

    def _read(self, stream) -> None:
        for line in stream:
            self.lines.append(line.rstrip("\n"))
            self._new.put(line)

    def _collect(self, stream) -> None:
        self._errors.extend(stream)

    @property
    def stdout(self) -> str:
        return "\n".join(self.lines)

    @property
    def stderr(self) -> str:
        return "".join(self._errors)

    def wait_for_line(self, prefix: str, timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        for line in list(self.lines):
            if line.startswith(prefix):
                return line
        while time.monotonic() < deadline:
            try:
                line = self._new.get(timeout=0.05)
            except queue.Empty:
                if self.popen.poll() is not None and self._new.empty():
                    break
                continue
            if line.startswith(prefix):
                return line.rstrip("\n")
        raise AssertionError(
            f"no line starting {prefix!r}; stdout:\n{self.stdout}\n"
            f"stderr:\n{self.stderr}"
        )

    def signal(self, signum: int) -> None:
        self.popen.send_signal(signum)

    def stop(self, timeout: float = 30) -> int:
        """Wait for the exit code (after a signal), killing it past `timeout`."""
        try:
            return self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait()
            raise

    def kill_if_running(self) -> None:
        if self.popen.poll() is None:
            self.popen.kill()
            self.popen.wait()


def wait_until(check: Callable[[], object], timeout: float = 30, step=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(step)
    raise AssertionError(f"condition not met within {timeout} s")


def slow_worker_env(delay: float) -> dict[str, str]:
    return {
        "DJANGO_SETTINGS_MODULE": "tests.slow_parse_settings",
        "CURATOR_TEST_PARSE_DELAY": str(delay),
    }
