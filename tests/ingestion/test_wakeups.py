"""`ingestion/wakeups.py`: how an idle `--loop` worker waits for work.

The relay that sends the wake-ups, and a worker woken by one, are tested in
`test_outbox.py`.
"""

from __future__ import annotations

import threading
import time
import uuid

import pytest
from django.db import connection

from ingestion.outbox import PostgresNotify
from ingestion.wakeups import (
    PollWaiter,
    PostgresWaiter,
    RedisWaiter,
    make_waiter,
)
from tests.ingestion.test_outbox import REDIS_URL, event, redis_client, relay

pytestmark = pytest.mark.django_db


@pytest.mark.django_db(transaction=True)
def test_a_ready_waiter_keeps_a_wake_up_sent_before_it_waits():
    if connection.vendor != "postgresql":
        pytest.skip("NOTIFY is PostgreSQL's")
    never = threading.Event()
    ready, late = PostgresWaiter(), PostgresWaiter()
    try:
        ready.ready()
        event("task-1")
        relay(PostgresNotify()).run()
        # Sent while the worker was busy claiming: kept only where LISTEN came first.
        assert ready.wait(5, never) is True
        assert ready.wait(0.2, never) is False
        # A waiter connecting only now missed it, so it says "look" once.
        assert late.wait(5, never) is True
        assert late.wait(0.2, never) is False
    finally:
        ready.close()
        late.close()


def test_a_waiter_that_cannot_connect_is_ready_to_poll(monkeypatch, caplog):
    if connection.vendor != "postgresql":
        pytest.skip("NOTIFY is PostgreSQL's")
    params = {**connection.get_connection_params(), "port": 1, "connect_timeout": 2}
    monkeypatch.setattr(connection, "get_connection_params", lambda: params)
    waiter = PostgresWaiter()

    with caplog.at_level("WARNING", logger="ingestion.wakeups"):
        waiter.ready()
        assert waiter.wait(0.1, threading.Event()) is False

    warnings = [r.getMessage() for r in caplog.records]
    assert warnings == [
        "PostgreSQL NOTIFY wake-ups unavailable, polling instead (OperationalError)"
    ]


class TestMakeWaiter:
    def test_auto_listens_on_postgresql_and_polls_elsewhere(self):
        waiter = make_waiter("auto")
        try:
            expected = "notify" if connection.vendor == "postgresql" else "poll"
            assert waiter.mode == expected
        finally:
            waiter.close()
        assert isinstance(make_waiter("poll"), PollWaiter)

    def test_notify_needs_postgresql(self):
        if connection.vendor == "postgresql":
            waiter = make_waiter("notify")
            assert isinstance(waiter, PostgresWaiter)
            waiter.close()
        else:
            with pytest.raises(ValueError, match="needs PostgreSQL"):
                make_waiter("notify")

    def test_redis_needs_its_url(self, settings):
        settings.OUTBOX_REDIS_URL = ""
        with pytest.raises(ValueError, match="OUTBOX_REDIS_URL"):
            make_waiter("redis")

        settings.OUTBOX_REDIS_URL = REDIS_URL
        settings.OUTBOX_REDIS_KEY = "curator:test:wake"
        waiter = make_waiter("redis")
        assert (waiter.mode, waiter.key) == ("redis", "curator:test:wake")
        waiter.close()


class TestPollWaiter:
    def test_never_woken_it_returns_after_the_timeout_or_at_stop(self):
        waiter = PollWaiter()
        stop = threading.Event()

        started = time.monotonic()
        assert waiter.wait(0.2, stop) is False
        assert time.monotonic() - started >= 0.2

        stop.set()
        started = time.monotonic()
        assert waiter.wait(60, stop) is False
        assert time.monotonic() - started < 1


@pytest.fixture
def redis_key():
    """A Redis list of this test's own."""
    client = redis_client()
    key = f"curator:test:{uuid.uuid4().hex}"
    yield key
    client.delete(key)
    client.close()


class TestRedisWaiter:
    def test_a_pushed_task_id_wakes_one_wait(self, redis_key):
        waiter = RedisWaiter(REDIS_URL, redis_key)
        never = threading.Event()
        try:
            redis_client().lpush(redis_key, "task-1")

            assert waiter.wait(5, never) is True
            assert waiter.wait(0.2, never) is False
        finally:
            waiter.close()

    def test_a_stop_is_seen_within_one_slice(self, redis_key):
        waiter = RedisWaiter(REDIS_URL, redis_key)
        stop = threading.Event()
        threading.Timer(0.1, stop.set).start()
        try:
            started = time.monotonic()
            assert waiter.wait(60, stop) is False
            assert time.monotonic() - started < 5
        finally:
            waiter.close()

    def test_an_unreachable_redis_is_polled_instead_and_said_once(self, caplog):
        waiter = RedisWaiter("redis://127.0.0.1:1/0", "curator:test:unreachable")
        never = threading.Event()

        with caplog.at_level("WARNING", logger="ingestion.wakeups"):
            assert waiter.wait(0.2, never) is False
            assert waiter.wait(0.2, never) is False

        assert [r.getMessage() for r in caplog.records] == [
            "Redis wake-ups unavailable, polling instead (ConnectionError)"
        ]
