"""`ingestion/wakeups.py`: how an idle `--loop` worker waits for work.

The relay that sends the wake-ups, and a worker woken by one, are tested in
`test_outbox.py`.
"""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from ingestion.outbox import PostgresNotify
from ingestion.wakeups import PostgresWaiter
from tests.ingestion.test_outbox import event, relay

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
