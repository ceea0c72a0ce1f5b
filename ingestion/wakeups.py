"""Wake-ups for idle `--loop` workers: something may be claimable now.

    poll    sleep `poll_interval`
    notify  PostgreSQL: LISTEN on CHANNEL; `relay_outbox` sends NOTIFY
    redis   BRPOP on OUTBOX_REDIS_KEY; `relay_outbox` pushes task ids there

A wake-up carries no authority: the worker answers it with a normal conditional
claim, which may find nothing. A NOTIFY is only kept for a connection already
listening, so a worker readies its waiter before its first claim, and a waiter that
has to (re)connect while waiting reports a wake-up at once: it cannot know what was
sent meanwhile. Every waiter still returns after `poll_interval`, so polling stays
the fallback; a waiter whose connection fails logs it and sleeps instead,
reconnecting next time.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from typing import Protocol

from django.conf import settings
from django.db import connection

logger = logging.getLogger(__name__)

CHANNEL = "ingestion_tasks"
# Waits are cut into slices so a stop request is seen within one slice.
SLICE_SECONDS = 0.5
# An unreachable database host must not hold a starting worker (or SIGTERM) for
# libpq's default two minutes; the waiter then polls and tries again next wait.
CONNECT_TIMEOUT_SECONDS = 5
WAKE_MODES = ("auto", "poll", "notify", "redis")


class Waiter(Protocol):
    mode: str

    def ready(self) -> None:
        """Start listening now, so that wake-ups sent from here on are kept."""
        ...

    def wait(self, timeout: float, stop: threading.Event) -> bool:
        """Block until woken (True), `timeout` passed or `stop` set (False)."""
        ...

    def close(self) -> None: ...


class PollWaiter:
    mode = "poll"

    def ready(self) -> None:
        pass

    def wait(self, timeout: float, stop: threading.Event) -> bool:
        stop.wait(timeout)
        return False

    def close(self) -> None:
        pass


class _ConnectedWaiter:
    """LISTEN and BRPOP alike: connect lazily; on errors, log once and sleep."""

    name = ""
    errors: tuple[type[BaseException], ...] = ()

    def __init__(self) -> None:
        self._failing = False

    def ready(self) -> None:
        try:
            self._connect()
        except self.errors as error:
            self._failed(error)

    def wait(self, timeout: float, stop: threading.Event) -> bool:
        deadline = time.monotonic() + timeout
        try:
            while not stop.is_set():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                if self._connect():
                    # (Re)connected just now: what was sent before went unheard.
                    self._recovered()
                    return True
                woken = self._wait_once(min(SLICE_SECONDS, remaining))
                self._recovered()
                if woken:
                    return True
        except self.errors as error:
            self._failed(error)
            stop.wait(max(0.0, deadline - time.monotonic()))
        return False

    def _failed(self, error: BaseException) -> None:
        if not self._failing:
            logger.warning(
                "%s wake-ups unavailable, polling instead (%s)",
                self.name,
                type(error).__name__,
            )
        self._failing = True
        self.close()

    def _recovered(self) -> None:
        if self._failing:
            logger.warning("%s wake-ups available again", self.name)
            self._failing = False

    def _connect(self) -> bool:
        """Connect (and subscribe) unless connected already; True if it just did."""
        return False

    def _wait_once(self, timeout: float) -> bool:
        raise NotImplementedError


class PostgresWaiter(_ConnectedWaiter):
    """LISTEN on a dedicated connection (Django's may sit in a transaction)."""

    name = "PostgreSQL NOTIFY"
    mode = "notify"

    def __init__(self) -> None:
        import psycopg

        super().__init__()
        self.errors = (psycopg.Error, OSError)
        self._conn = None

    def _connect(self) -> bool:
        if self._conn is not None:
            return False
        import psycopg

        params = {"connect_timeout": CONNECT_TIMEOUT_SECONDS}
        params.update(connection.get_connection_params())
        self._conn = psycopg.connect(**params, autocommit=True)
        self._conn.execute(f"LISTEN {CHANNEL}")
        return True

    def _wait_once(self, timeout: float) -> bool:
        return any(True for _ in self._conn.notifies(timeout=timeout, stop_after=1))

    def close(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(Exception):  # closing a broken connection
                self._conn.close()
            self._conn = None


class RedisWaiter(_ConnectedWaiter):
    """BRPOP: each pushed task id wakes exactly one waiting worker."""

    name = "Redis"
    mode = "redis"

    def __init__(self, url: str, key: str) -> None:
        import redis

        super().__init__()
        self.errors = (redis.RedisError, OSError)
        self.key = key
        self._client = redis.Redis.from_url(
            url, socket_connect_timeout=5, socket_timeout=SLICE_SECONDS + 10
        )

    def _wait_once(self, timeout: float) -> bool:
        return self._client.brpop([self.key], timeout=timeout) is not None

    def close(self) -> None:
        self._client.close()


def make_waiter(mode: str) -> Waiter:
    """`auto` is `notify` on PostgreSQL and `poll` elsewhere."""
    if mode == "auto":
        mode = "notify" if connection.vendor == "postgresql" else "poll"
    if mode == "notify":
        if connection.vendor != "postgresql":
            raise ValueError("--wake notify needs PostgreSQL")
        return PostgresWaiter()
    if mode == "redis":
        if not settings.OUTBOX_REDIS_URL:
            raise ValueError("--wake redis needs OUTBOX_REDIS_URL")
        return RedisWaiter(settings.OUTBOX_REDIS_URL, settings.OUTBOX_REDIS_KEY)
    return PollWaiter()
