"""Small documents claimed and finished together (`ingestion/batches.py`): one
claim's token, each task its own state, events and chunks."""

from __future__ import annotations

import signal
import threading

import pytest
from django.core.files.storage import default_storage
from django.db import connection
from django.db.models import Count

from documents.models import Document
from ingestion import claims, services
from ingestion.batches import SmallBatch
from ingestion.models import IngestionTask, OutboxEvent
from ingestion.sandbox import ParseSandbox
from ingestion.sandbox.exchange import ParserProcessError
from ingestion.worker import Worker
from retrieval.models import Chunk
from tests.factories import DocumentFactory, IngestionTaskFactory
from tests.ingestion.processes import Process, slow_worker_env, wait_until
from tests.ingestion.tasks import LONG_MARKDOWN, document_status, fresh

pytestmark = pytest.mark.django_db


def small(knowledge_base, n: int, **kwargs):
    content = (
        f"# Rule {n}\n\nEvery employee of team {n} receives {20 + n} days of "
        f"annual leave.\n\n出差第{n}天的补助按天计算。\n"
    ).encode()
    return DocumentFactory(knowledge_base=knowledge_base, content=content, **kwargs)


def tokens(tasks) -> set:
    return {fresh(task).claim_token for task in tasks}


def test_small_documents_of_one_knowledge_base_run_as_one_batch(
    knowledge_base, submit, run_worker
):
    tasks = [submit(small(knowledge_base, n)) for n in range(5)]

    stats, lines = run_worker()

    assert (stats.claimed, stats.succeeded) == (5, 5)
    assert len(tokens(tasks)) == 1  # claimed together, under one token
    for task in tasks:
        row = fresh(task)
        assert (row.status, row.attempt, row.worker_id) == (
            "succeeded",
            1,
            "test-worker",
        )
        assert (row.stage, row.completed) == ("finalizing", row.total)
        assert row.finished_at is not None
        assert row.lease_expires_at is None
        assert set(row.stage_seconds) >= {"parse", "embedding"}
        assert document_status(task) == "review_pending"
        chunks = Chunk.objects.filter(document_id=task.document_id)
        assert chunks.count() == row.completed >= 1
        assert set(chunks.values_list("ingestion_task_id", flat=True)) == {task.pk}
        assert (
            f"claimed task={task.pk} worker=test-worker status=running attempt=1"
            in (lines)
        )
        assert any(line.startswith(f"succeeded task={task.pk} ") for line in lines)


def test_a_batch_holds_one_knowledge_base_and_small_text_only(
    knowledge_base, other_knowledge_base, run_worker, settings
):
    settings.INGESTION_SMALL_BATCH_MAX_BYTES = 1024
    turns = iter(range(1, 100))

    def queued(document):
        return IngestionTaskFactory(document=document, turn=next(turns))

    ours = [queued(small(knowledge_base, n, processing=True)) for n in range(3)]
    large = queued(
        DocumentFactory(
            knowledge_base=knowledge_base, content=LONG_MARKDOWN, processing=True
        )
    )
    theirs = [queued(small(other_knowledge_base, n, processing=True)) for n in range(2)]

    stats, _ = run_worker()

    assert stats.succeeded == 6
    assert len(tokens(ours)) == 1
    assert len(tokens(theirs)) == 1
    assert tokens(ours) != tokens(theirs)
    assert fresh(large).claim_token not in tokens(ours) | tokens(theirs)


def test_a_batch_never_takes_a_task_ahead_of_one_waiting_before_it(
    knowledge_base, other_knowledge_base, run_worker
):
    """Companions are the run at the front of the queue that fits: another
    knowledge base's task in between ends it, so claim order (fair turns) holds."""

    def queued(kb, n: int, turn: int):
        return IngestionTaskFactory(document=small(kb, n, processing=True), turn=turn)

    first, second = queued(knowledge_base, 0, 1), queued(knowledge_base, 1, 2)
    between = queued(other_knowledge_base, 2, 3)
    last = queued(knowledge_base, 3, 4)

    stats, lines = run_worker()

    assert stats.succeeded == 4
    assert len(tokens([first, second])) == 1
    assert len(tokens([first, between, last])) == 3
    claimed = [line.split()[1] for line in lines if line.startswith("claimed ")]
    assert claimed == [f"task={t.pk}" for t in (first, second, between, last)]


def test_a_worker_asked_for_one_task_runs_that_task_alone(
    knowledge_base, submit, run_worker
):
    asked, other = (submit(small(knowledge_base, n)) for n in range(2))

    stats, _ = run_worker(asked.pk)

    assert (stats.claimed, fresh(asked).status, fresh(other).status) == (
        1,
        "succeeded",
        "queued",
    )


def test_batches_are_at_most_the_setting(knowledge_base, submit, run_worker, settings):
    settings.INGESTION_SMALL_BATCH = 3
    tasks = [submit(small(knowledge_base, n)) for n in range(7)]

    stats, _ = run_worker()

    assert stats.succeeded == 7
    sizes = sorted(
        IngestionTask.objects.filter(pk__in=[t.pk for t in tasks])
        .values("claim_token")
        .annotate(n=Count("pk"))
        .values_list("n", flat=True)
    )
    assert sizes == [1, 3, 3]


def test_one_bad_document_in_a_batch_fails_alone(knowledge_base, submit, run_worker):
    good = [submit(small(knowledge_base, n)) for n in range(2)]
    empty = submit(DocumentFactory(knowledge_base=knowledge_base, content=b"\n\n  \n"))
    gone = submit(small(knowledge_base, 9))
    default_storage.delete(Document.objects.get(pk=gone.document_id).storage_key)
    more = submit(small(knowledge_base, 3))

    stats, lines = run_worker(max_tasks=5)

    # One batch (the backoff cleared the transient one's token).
    assert stats.claimed == 5
    assert len(tokens([*good, empty, more])) == 1
    assert fresh(gone).attempt == 1
    for task in [*good, more]:
        assert fresh(task).status == "succeeded"
        assert document_status(task) == "review_pending"
    row = fresh(empty)
    assert (row.status, row.error_code) == ("failed", "empty_document")
    assert document_status(empty) == "failed"
    assert f"failed task={empty.pk} worker=test-worker error_code=empty_document" in (
        lines
    )
    # A read error is transient: that task alone waits for its next attempt.
    row = fresh(gone)
    assert (row.status, row.error_code) == ("retry_wait", "object_read_error")
    assert document_status(gone) == "processing"
    assert not Chunk.objects.filter(
        document_id__in=[empty.document_id, gone.document_id]
    )
    assert (stats.succeeded, stats.failed, stats.retried) == (3, 1, 1)


def test_a_parser_crash_on_one_document_fails_that_task_alone(
    knowledge_base, submit, run_worker, monkeypatch
):
    tasks = [submit(small(knowledge_base, n)) for n in range(3)]
    crashing = Document.objects.get(pk=tasks[1].document_id)
    extract = ParseSandbox.extract

    def crash_on_one(self, kind, data, **options):
        with default_storage.open(crashing.storage_key, "rb") as original:
            if data == original.read():
                raise ParserProcessError("the parser process died")
        return extract(self, kind, data, **options)

    monkeypatch.setattr(ParseSandbox, "extract", crash_on_one)

    stats, _ = run_worker()

    assert len(tokens(tasks)) == 1
    row = fresh(tasks[1])
    assert (row.status, row.error_code) == ("failed", "internal_error")
    assert row.error_detail == "Unexpected error in the worker (ParserProcessError)."
    assert [fresh(t).status for t in (tasks[0], tasks[2])] == ["succeeded"] * 2
    assert (stats.succeeded, stats.failed) == (2, 1)


def test_a_task_cancelled_during_its_batch_is_not_finished(
    knowledge_base, submit, run_worker, editor, monkeypatch
):
    tasks = [submit(small(knowledge_base, n)) for n in range(3)]
    victim = tasks[1]
    parse = SmallBatch._parse

    def cancel_first(batch, claim, document):
        if claim.task_id == tasks[0].pk:
            services.ingestion_task_cancel(user=editor, task_id=victim.pk)
        return parse(batch, claim, document)

    monkeypatch.setattr(SmallBatch, "_parse", cancel_first)

    stats, lines = run_worker()

    assert len(tokens(tasks)) == 1
    assert fresh(victim).status == "cancelled"
    assert document_status(victim) == "draft"
    assert not Chunk.objects.filter(document_id=victim.document_id).exists()
    assert f"lost task={victim.pk} worker=test-worker" in lines
    for task in (tasks[0], tasks[2]):
        assert fresh(task).status == "succeeded"
        assert Chunk.objects.filter(document_id=task.document_id).exists()
    assert (stats.succeeded, stats.lost) == (2, 1)


def test_within_the_grace_period_the_batch_finishes_and_nothing_more_is_claimed(
    knowledge_base, other_knowledge_base, submit, monkeypatch
):
    tasks = [submit(small(knowledge_base, n)) for n in range(3)]
    later = IngestionTaskFactory(
        document=small(other_knowledge_base, 9, processing=True), turn=10**6
    )
    lines: list[str] = []
    worker = Worker(worker_id="w", grace_seconds=30, write=lines.append)
    parse = SmallBatch._parse

    def signal_then_parse(batch, claim, document):
        if claim.task_id == tasks[1].pk:
            assert {fresh(t).stage for t in tasks} == {"parse"}
            worker._on_signal(15, None)
        return parse(batch, claim, document)

    monkeypatch.setattr(SmallBatch, "_parse", signal_then_parse)

    stats = worker.run()

    assert (stats.claimed, stats.succeeded) == (3, 3)
    assert {fresh(task).status for task in tasks} == {"succeeded"}
    assert fresh(later).status == "queued"
    assert "stopping worker=w signal=SIGTERM grace=30s" in lines


def test_a_batch_released_at_shutdown_goes_back_uncharged(
    knowledge_base, submit, monkeypatch
):
    tasks = [submit(small(knowledge_base, n)) for n in range(3)]
    events = OutboxEvent.objects.count()
    lines: list[str] = []
    worker = Worker(worker_id="w", grace_seconds=0, write=lines.append)
    parse = SmallBatch._parse

    def signal_then_parse(batch, claim, document):
        if claim.task_id == tasks[1].pk and not worker.stopping.is_set():
            worker._on_signal(15, None)
        return parse(batch, claim, document)

    monkeypatch.setattr(SmallBatch, "_parse", signal_then_parse)

    stats = worker.run()

    assert stats.released == 3
    for task in tasks:
        row = fresh(task)
        assert (row.status, row.attempt, row.claim_token) == ("queued", 0, None)
        assert document_status(task) == "processing"
        assert not Chunk.objects.filter(document_id=task.document_id).exists()
    assert OutboxEvent.objects.count() == events + 3


def test_a_lost_batch_writes_nothing(knowledge_base, submit, monkeypatch):
    tasks = [submit(small(knowledge_base, n)) for n in range(3)]
    parse = SmallBatch._parse

    def taken_over(batch, claim, document):
        # Every lease ran out and another worker took them (their token changed).
        IngestionTask.objects.filter(pk__in=[t.pk for t in tasks]).update(
            claim_token=None
        )
        return parse(batch, claim, document)

    monkeypatch.setattr(SmallBatch, "_parse", taken_over)
    lines: list[str] = []

    stats = Worker(worker_id="w", write=lines.append).run()

    assert (stats.succeeded, stats.lost) == (0, 3)
    assert not Chunk.objects.exists()
    assert {fresh(task).status for task in tasks} == {"running"}


@pytest.mark.django_db(transaction=True)
def test_two_workers_claiming_batches_at_once_never_take_a_task_twice(
    knowledge_base, submit, monkeypatch
):
    """Two workers, each in its own thread with its own database connection,
    claim a head each and then send their batch claims at the same moment: every
    task is claimed by exactly one of them, once."""
    tasks = [submit(small(knowledge_base, n)) for n in range(12)]
    both_ready = threading.Barrier(2, timeout=30)
    claim_small = claims.ingestion_tasks_claim_small
    first_call = threading.local()

    def at_once(head, **options):
        if not getattr(first_call, "done", False):
            first_call.done = True
            both_ready.wait()
        return claim_small(head, **options)

    monkeypatch.setattr(claims, "ingestion_tasks_claim_small", at_once)
    # Workers are processes, each with parsers of its own; these two threads
    # share this process's, which serve one parse at a time.
    one_parse = threading.Lock()
    extract = ParseSandbox.extract

    def one_at_a_time(self, *args, **kwargs):
        with one_parse:
            return extract(self, *args, **kwargs)

    monkeypatch.setattr(ParseSandbox, "extract", one_at_a_time)
    runs: dict[str, list[str]] = {}
    errors: dict[str, BaseException] = {}

    def work(worker_id: str) -> None:
        lines: list[str] = []
        try:
            Worker(worker_id=worker_id, write=lines.append).run()
            runs[worker_id] = lines
        except BaseException as error:
            errors[worker_id] = error
        finally:
            connection.close()

    threads = [
        threading.Thread(target=work, args=(worker_id,))
        for worker_id in ("worker-one", "worker-two")
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    assert not errors
    claimed = [
        line.split()[1]
        for lines in runs.values()
        for line in lines
        if line.startswith("claimed ")
    ]
    assert sorted(claimed) == sorted(f"task={task.pk}" for task in tasks)
    for task in tasks:
        row = fresh(task)
        assert (row.status, row.attempt) == ("succeeded", 1)
        chunks = Chunk.objects.filter(document_id=task.document_id)
        assert set(chunks.values_list("ingestion_task_id", flat=True)) == {task.pk}
    assert {fresh(task).worker_id for task in tasks} == {"worker-one", "worker-two"}


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_batch_has_every_task_reclaimed(
    knowledge_base, process_env
):
    tasks = [
        IngestionTaskFactory(document=small(knowledge_base, n, processing=True))
        for n in range(3)
    ]
    lease = {"INGESTION_LEASE_SECONDS": "2"}
    victim = Process(
        process_env,
        "run_ingestion_worker",
        "--worker-id",
        "victim",
        **lease,
        **slow_worker_env(60),
    )
    rescuer = None
    try:
        wait_until(
            lambda: all(
                (fresh(task).status, fresh(task).worker_id) == ("running", "victim")
                for task in tasks
            )
        )
        assert len(tokens(tasks)) == 1  # one batch, stuck in its first parse
        victim.popen.kill()
        victim.popen.wait()
        rescuer = Process(
            process_env,
            "run_ingestion_worker",
            "--loop",
            "--poll-interval",
            "0.5",
            "--worker-id",
            "rescuer",
            **lease,
        )
        wait_until(
            lambda: {fresh(task).status for task in tasks} == {"succeeded"},
            timeout=60,
        )
    finally:
        victim.kill_if_running()
        if rescuer is not None:
            rescuer.signal(signal.SIGTERM)
            assert rescuer.stop() == 0, rescuer.stderr

    for task in tasks:
        row = fresh(task)
        assert (row.worker_id, row.attempt) == ("rescuer", 2)
        assert document_status(task) == "review_pending"
        chunks = Chunk.objects.filter(document_id=task.document_id)
        assert set(chunks.values_list("ingestion_task_id", flat=True)) == {task.pk}
