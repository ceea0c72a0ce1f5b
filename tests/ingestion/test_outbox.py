"""The outbox relay and the wake-ups it gives idle workers (NOTIFY, Redis)."""

from __future__ import annotations

import io
import signal
import threading
import time
import uuid

import pytest
from django.core.management import CommandError, call_command
from django.db import connection, transaction

from ingestion import services
from ingestion.models import IngestionTask, OutboxEvent
from ingestion.outbox import PostgresNotify, RedisPush, Relay
from ingestion.wakeups import CHANNEL, PollWaiter
from tests.factories import DocumentFactory
from tests.ingestion.processes import Process, wait_until

pytestmark = pytest.mark.django_db

REDIS_URL = "redis://127.0.0.1:6379/0"


def redis_client():
    redis = pytest.importorskip("redis")
    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1)
    try:
        client.ping()
    except redis.RedisError:
        pytest.skip("Redis is not running on 127.0.0.1:6379")
    return client


@pytest.fixture
def redis_key():
    """A Redis list of our own, so parallel test runs do not share wake-ups."""
    client = redis_client()
    key = f"curator:test:{uuid.uuid4().hex}"
    yield key
    client.delete(key)
    client.close()


class Recorder:
    name = "recorder"

    def __init__(self, fail_for: set[str] | None = None) -> None:
        self.published: list[tuple[int, str]] = []
        self.fail_for = fail_for or set()

    def publish(self, event) -> None:
        task_id = event.payload["task_id"]
        if task_id in self.fail_for:
            raise ConnectionError("broker unreachable")
        self.published.append((event.pk, task_id))


def event(task_id: str) -> OutboxEvent:
    return OutboxEvent.objects.create(
        topic="ingestion.task.queued", payload={"task_id": task_id}
    )


def relay(*publishers, **options) -> Relay:
    options.setdefault("retry_delays", (0, 0))
    return Relay(publishers=list(publishers), write=lambda line: None, **options)


class TestRelay:
    def test_events_are_published_in_order_and_marked_delivered(self):
        events = [event(f"task-{n % 2}") for n in range(5)]
        recorder = Recorder()

        relay(recorder).run()

        assert recorder.published == [(e.pk, e.payload["task_id"]) for e in events]
        delivered = OutboxEvent.objects.filter(delivered_at__isnull=False)
        assert delivered.count() == 5
        assert set(delivered.values_list("attempts", "last_error")) == {(1, "")}
        relay(recorder).run()
        assert len(recorder.published) == 5

    def test_batches_continue_until_the_outbox_is_empty(self):
        for n in range(7):
            event(f"task-{n}")
        recorder = Recorder()
        relay(recorder, batch_size=3).run()
        assert len(recorder.published) == 7

    def test_a_failed_delivery_is_recorded_retried_and_keeps_order_per_task(self):
        first_a = event("a")
        first_b = event("b")
        second_a = event("a")
        recorder = Recorder(fail_for={"a"})

        relay_ = relay(recorder)
        relay_.deliver_batch()

        assert recorder.published == [(first_b.pk, "b")]
        failed = OutboxEvent.objects.get(pk=first_a.pk)
        assert failed.delivered_at is None
        assert failed.attempts == 1
        assert failed.last_error == "recorder: ConnectionError: broker unreachable"
        # The later event of the same task waited; it never overtakes the first.
        assert OutboxEvent.objects.get(pk=second_a.pk).attempts == 0

        recorder.fail_for.clear()
        relay_.deliver_batch()

        assert recorder.published[1:] == [(first_a.pk, "a"), (second_a.pk, "a")]
        assert not OutboxEvent.objects.undelivered().exists()
        assert OutboxEvent.objects.get(pk=first_a.pk).attempts == 2

    def test_a_failed_event_waits_before_its_next_try(self):
        event("a")
        recorder = Recorder(fail_for={"a"})
        relay_ = relay(recorder, retry_delays=(60, 60))
        relay_.deliver_batch()
        relay_.deliver_batch()
        assert OutboxEvent.objects.get().attempts == 1

    def test_submit_writes_the_event_the_relay_delivers(self, knowledge_base, submit):
        task = submit(DocumentFactory(knowledge_base=knowledge_base))
        recorder = Recorder()
        relay(recorder).run()
        assert recorder.published[-1][1] == str(task.pk)


@pytest.mark.django_db(transaction=True)
def test_an_event_is_only_delivered_after_its_transaction_committed():
    recorder = Recorder()
    written, release = threading.Event(), threading.Event()

    def writer():
        try:
            with transaction.atomic():
                event("late")
                written.set()
                release.wait(10)
        finally:
            connection.close()

    thread = threading.Thread(target=writer)
    thread.start()
    assert written.wait(10), "the writer never wrote its event"
    assert relay(recorder).deliver_batch() == 0
    release.set()
    thread.join()
    assert relay(recorder).deliver_batch() == 1
    assert recorder.published[0][1] == "late"


@pytest.mark.django_db(transaction=True)
def test_postgresql_notify_carries_the_task_id():
    if connection.vendor != "postgresql":
        pytest.skip("NOTIFY is PostgreSQL's")
    import psycopg

    params = connection.get_connection_params()
    with psycopg.connect(**params, autocommit=True) as listener:
        listener.execute(f"LISTEN {CHANNEL}")
        event("task-42")
        relay(PostgresNotify()).run()
        notes = list(listener.notifies(timeout=5, stop_after=1))
    assert [(n.channel, n.payload) for n in notes] == [(CHANNEL, "task-42")]


def test_a_loop_worker_listens_before_its_first_claim(monkeypatch):
    from ingestion.worker import Worker

    calls: list[str] = []

    class Recording(PollWaiter):
        def ready(self):
            calls.append("ready")

        def wait(self, timeout, stop):
            calls.append("wait")
            stop.set()
            return False

    worker = Worker(worker_id="w", loop=True, waiter=Recording(), write=print)
    monkeypatch.setattr(worker, "claim_next", lambda: calls.append("claim"))
    monkeypatch.setattr(worker, "_start_parsers", lambda: None)
    monkeypatch.setattr("ingestion.worker.warm_parser", lambda: None)

    worker.run()

    assert calls == ["ready", "claim", "wait"]


def test_redis_push_puts_the_task_id_on_the_list(redis_key):
    event("task-7")
    relay(RedisPush(REDIS_URL, redis_key)).run()
    assert redis_client().lrange(redis_key, 0, -1) == [b"task-7"]


def test_an_unreachable_redis_is_a_failed_delivery_retried_later(redis_key):
    event("task-8")
    down = relay(RedisPush("redis://127.0.0.1:1/0", redis_key))
    down.deliver_batch()
    row = OutboxEvent.objects.get()
    assert (row.delivered_at, row.attempts) == (None, 1)
    assert row.last_error.startswith("redis: ConnectionError")

    relay(RedisPush(REDIS_URL, redis_key)).run()

    assert OutboxEvent.objects.get().delivered_at is not None
    assert redis_client().lrange(redis_key, 0, -1) == [b"task-8"]


class TestCommands:
    def test_relay_outbox_delivers_and_reports(self):
        event("x")
        out = io.StringIO()
        call_command("relay_outbox", stdout=out)
        assert "relay stopped delivered=1 failed=0" in out.getvalue()
        assert not OutboxEvent.objects.undelivered().exists()

    def test_wake_redis_needs_a_redis_url(self, settings):
        settings.OUTBOX_REDIS_URL = ""
        with pytest.raises(CommandError, match="OUTBOX_REDIS_URL"):
            call_command("run_ingestion_worker", "--loop", "--wake", "redis")

    def test_wake_notify_needs_postgresql(self):
        if connection.vendor == "postgresql":
            pytest.skip("SQLite-specific")
        with pytest.raises(CommandError, match="PostgreSQL"):
            call_command("run_ingestion_worker", "--loop", "--wake", "notify")


# --- real processes: a worker that polls only every 120 s picks up work at once ---


def submit_and_time_claim(editor, knowledge_base) -> float:
    document = DocumentFactory(knowledge_base=knowledge_base)
    submitted = time.monotonic()
    task = services.document_submit(user=editor, document_id=document.pk)
    wait_until(
        lambda: IngestionTask.objects.get(pk=task.pk).status != "queued", timeout=15
    )
    return time.monotonic() - submitted


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("wake", ["notify", "redis"])
def test_a_wake_up_brings_an_idle_worker_at_once(
    wake, editor, knowledge_base, process_env, request
):
    env = dict(process_env)
    if wake == "notify":
        if connection.vendor != "postgresql":
            pytest.skip("NOTIFY is PostgreSQL's")
    else:
        env.update(
            OUTBOX_REDIS_URL=REDIS_URL,
            OUTBOX_REDIS_KEY=request.getfixturevalue("redis_key"),
        )
    processes = [
        Process(env, "relay_outbox", "--loop"),
        Process(
            env,
            "run_ingestion_worker",
            "--loop",
            "--poll-interval",
            "120",
            "--wake",
            wake,
        ),
    ]
    try:
        processes[0].wait_for_line("relay started")
        processes[1].wait_for_line("started worker=")
        latencies = [submit_and_time_claim(editor, knowledge_base) for _ in range(3)]
    finally:
        for process in processes:
            process.signal(signal.SIGTERM)
        codes = [process.stop() for process in processes]
    assert codes == [0, 0], [p.stderr for p in processes]
    # The worker polls every 120 s: only the wake-up explains a claim within 10 s
    # (on a loaded CI host a claim took 3.35 s).
    assert max(latencies) < 10, latencies
