"""Issue 5 in one process: leases, reclaiming, automatic retries, release, outages.

The same behaviour with real OS processes (SIGKILL, signals, a database restart,
load) is in `test_crash_recovery.py`; the claim protocol's own functions (leases,
reclaiming, backoff delays) in `test_claims.py`.
"""

from __future__ import annotations

import signal
import threading
import time
from datetime import timedelta

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import OperationalError, connection
from django.utils import timezone

from documents.models import Document
from ingestion import claims
from ingestion.models import IngestionTask, OutboxEvent
from ingestion.pipeline import IngestionPipeline
from ingestion.worker import Worker
from retrieval.errors import ProviderUnavailable
from retrieval.models import Chunk
from tests.factories import DocumentFactory
from tests.ingestion.hostile import slow_pdf
from tests.ingestion.tasks import (
    TEXT,
    chunk_rows,
    document,
    document_status,
    expire_lease,
    fresh,
    leave_chunks,
)

pytestmark = pytest.mark.django_db


def _content(data: bytes) -> ContentFile:
    return ContentFile(data)


def slow_document(knowledge_base):
    return document(knowledge_base, filename="slow.pdf", content_type="application/pdf")


def make_available(task) -> None:
    IngestionTask.objects.filter(pk=task.pk).update(available_at=timezone.now())


class TestLeases:
    def test_chunks_of_a_dead_run_never_survive_beside_the_successors(
        self, knowledge_base, submit, run_worker
    ):
        task = submit(document(knowledge_base))
        zombie = claims.ingestion_task_claim(task.pk, worker_id="zombie")
        leave_chunks(zombie, "half-done text of a run that died")
        expire_lease(task)

        stats, _ = run_worker(worker_id="rescuer")

        assert stats.succeeded == 1
        row = fresh(task)
        assert (row.status, row.attempt, row.worker_id) == ("succeeded", 2, "rescuer")
        texts = list(
            Chunk.objects.filter(document_id=task.document_id).values_list(
                "text", flat=True
            )
        )
        assert len(texts) == 1
        assert "25 days" in texts[0]
        # The zombie wakes up: it learns it lost the task, and deletes nothing.
        with pytest.raises(claims.TaskLost):
            claims.ingestion_task_succeed(zombie, chunks=chunk_rows(zombie, "late"))
        assert not claims.ingestion_task_fail(zombie, error_code="x", detail="x")
        assert Chunk.objects.filter(document_id=task.document_id).count() == 1

    def test_the_worker_reclaims_before_it_claims(
        self, knowledge_base, submit, run_worker
    ):
        task = submit(document(knowledge_base))
        claims.ingestion_task_claim(task.pk, worker_id="crashed")
        expire_lease(task)

        stats, lines = run_worker()

        assert stats.succeeded == 1
        assert lines[0] == (
            f"claimed task={task.pk} worker=test-worker status=running attempt=2"
        )


class TestChunksWithTheSuccess:
    def test_a_running_task_never_has_chunks(
        self, knowledge_base, submit, run_worker, monkeypatch
    ):
        task = submit(document(knowledge_base))
        seen: list[tuple[str, bool]] = []
        original = IngestionPipeline.report

        def report(pipeline, stage, completed, total):
            original(pipeline, stage, completed, total)
            chunks = Chunk.objects.filter(document_id=task.document_id)
            seen.append((stage, chunks.exists()))

        monkeypatch.setattr(IngestionPipeline, "report", report)
        stats, _ = run_worker(task.pk)

        assert stats.succeeded == 1
        assert [stage for stage, _ in seen][-1] == "finalizing"
        assert not any(exists for _, exists in seen)
        assert Chunk.objects.filter(document_id=task.document_id).count() == 1

    def test_a_failed_chunk_write_undoes_the_success(
        self, knowledge_base, submit, run_worker
    ):
        import uuid
        from types import SimpleNamespace

        task = submit(document(knowledge_base))
        # Rows an earlier run left (another task's): the success deletes them first.
        earlier = SimpleNamespace(document_id=task.document_id, task_id=uuid.uuid4())
        leave_chunks(earlier, "text of an earlier version")
        inserts: list[int] = []

        def insert_fails(execute, sql, params, many, context):
            if sql.startswith(
                f"INSERT INTO {connection.ops.quote_name('retrieval_chunk')}"
            ):
                inserts.append(len(params))
                raise RuntimeError("disk full")
            return execute(sql, params, many, context)

        with connection.execute_wrapper(insert_fails):
            run_worker(task.pk)

        row = fresh(task)
        assert inserts == [1]  # the insert was reached, after the delete
        assert (row.status, row.error_code) == ("failed", "internal_error")
        assert row.stage == "finalizing"
        assert document_status(task) == "failed"
        # The delete went back with the rest of the transaction.
        assert list(
            Chunk.objects.filter(document_id=task.document_id).values_list(
                "text", "ingestion_task_id"
            )
        ) == [("text of an earlier version", earlier.task_id)]


@pytest.mark.django_db(transaction=True)
class TestHeartbeat:
    """A heartbeat needs its own connection to see the task: committed data only."""

    def test_the_lease_is_renewed_while_a_long_parse_runs(
        self, knowledge_base, submit, settings
    ):
        settings.INGESTION_LEASE_SECONDS = 0.6
        task = submit(
            document(
                knowledge_base, filename="slow.pdf", content_type="application/pdf"
            )
        )
        default_storage.delete(task.document.storage_key)
        default_storage.save(task.document.storage_key, _content(slow_pdf(40_000)))
        stop = threading.Event()
        reclaimed = []

        def competitor():
            # Another worker, reclaiming as soon as the lease looks expired.
            try:
                while not stop.wait(0.05):
                    reclaimed.append(claims.ingestion_tasks_reclaim_expired())
            finally:
                connection.close()

        thread = threading.Thread(target=competitor)
        thread.start()
        started = time.monotonic()
        try:
            stats = Worker(worker_id="slow", write=lambda line: None).run(task.pk)
        finally:
            stop.set()
            thread.join()

        # Long enough that an unrenewed lease would have expired twice over.
        assert time.monotonic() - started > 2 * settings.INGESTION_LEASE_SECONDS
        assert stats.succeeded == 1
        assert sum(reclaimed) == 0
        assert (fresh(task).status, fresh(task).attempt) == ("succeeded", 1)

    def test_a_lost_lease_stops_the_parse_early(self, knowledge_base, submit, settings):
        settings.INGESTION_LEASE_SECONDS = 0.6
        task = submit(
            document(
                knowledge_base, filename="slow.pdf", content_type="application/pdf"
            )
        )
        default_storage.delete(task.document.storage_key)
        default_storage.save(task.document.storage_key, _content(slow_pdf(300_000)))

        def take_over():
            # As if the lease expired and another worker reclaimed and claimed it.
            try:
                running = IngestionTask.objects.filter(pk=task.pk, stage="parse")
                deadline = time.monotonic() + 10
                while not running.exists() and time.monotonic() < deadline:
                    time.sleep(0.05)
                # Mid-parse: the heartbeat has renewed the lease since it began.
                lease = running.values_list("lease_expires_at", flat=True).get()
                renewed = running.filter(lease_expires_at__gt=lease)
                while not renewed.exists() and time.monotonic() < deadline:
                    time.sleep(0.05)
                running.update(claim_token=None, worker_id="other")
            finally:
                connection.close()

        thread = threading.Thread(target=take_over)
        thread.start()
        lines: list[str] = []
        started = time.monotonic()
        stats = Worker(worker_id="slow", write=lines.append).run(task.pk)
        thread.join()

        assert stats.lost == 1
        assert time.monotonic() - started < 5  # the parse alone takes ~20 s
        assert lines[-1].startswith(f"lost task={task.pk} worker=slow")
        assert fresh(task).worker_id == "other"


def missing_original(knowledge_base):
    doc = document(knowledge_base)
    default_storage.delete(doc.storage_key)
    return doc


class TestAutomaticRetries:
    def test_a_transient_failure_waits_and_the_api_shows_until_when(
        self, knowledge_base, submit, run_worker, settings, editor, client_for
    ):
        settings.INGESTION_BACKOFF_BASE_SECONDS = 10
        task = submit(missing_original(knowledge_base))
        before = timezone.now()

        _, lines = run_worker(task.pk)

        row = fresh(task)
        assert (row.status, row.error_code, row.attempt) == (
            "retry_wait",
            "object_read_error",
            1,
        )
        assert before + timedelta(seconds=5) <= row.available_at
        assert row.available_at <= timezone.now() + timedelta(seconds=10)
        assert row.claim_token is None
        assert document_status(task) == "processing"
        assert lines[-1] == (
            f"retry task={task.pk} worker=test-worker "
            "error_code=object_read_error attempt=1"
        )
        # Its editor reads it: to a viewer the task of a version in processing
        # is not there, as the version itself.
        body = client_for(editor).get(f"/api/ingestion-tasks/{task.pk}").json()
        assert body["status"] == "retry_wait"
        assert body["available_at"].replace("Z", "+00:00") == (
            row.available_at.isoformat()
        )
        assert body["error_code"] == "object_read_error"

    def test_never_claimed_before_available_at(
        self, knowledge_base, submit, run_worker
    ):
        task = submit(missing_original(knowledge_base))
        run_worker(task.pk)

        stats, lines = run_worker()
        assert stats.claimed == 0
        stats, lines = run_worker(task.pk)
        assert lines == [f"claim missed task={task.pk} worker=test-worker"]
        assert fresh(task).attempt == 1

    def test_attempts_stop_at_the_maximum_then_the_task_fails(
        self, knowledge_base, submit, run_worker, settings
    ):
        settings.INGESTION_MAX_ATTEMPTS = 3
        task = submit(missing_original(knowledge_base))
        statuses = []
        for _ in range(5):
            make_available(task)
            run_worker(task.pk)
            statuses.append((fresh(task).status, fresh(task).attempt))

        assert statuses == [
            ("retry_wait", 1),
            ("retry_wait", 2),
            ("failed", 3),
            ("failed", 3),
            ("failed", 3),
        ]
        assert fresh(task).error_code == "object_read_error"
        assert document_status(task) == "failed"

    def test_a_waiting_task_runs_again_and_succeeds(
        self, knowledge_base, submit, run_worker
    ):
        doc = missing_original(knowledge_base)
        task = submit(doc)
        run_worker(task.pk)
        default_storage.save(doc.storage_key, _content(TEXT))
        make_available(task)

        stats, _ = run_worker()

        row = fresh(task)
        assert stats.succeeded == 1
        assert (row.status, row.attempt, row.error_code, row.error_detail) == (
            "succeeded",
            2,
            None,
            None,
        )
        assert document_status(task) == "review_pending"

    def test_provider_unavailable_is_transient(
        self, knowledge_base, submit, run_worker, monkeypatch
    ):
        from ingestion import pipeline

        class DownEmbedder:
            name = "down"

            def embed(self, texts):
                raise ProviderUnavailable("timed out")

        monkeypatch.setattr(pipeline, "get_embedder", DownEmbedder)
        task = submit(document(knowledge_base))

        run_worker(task.pk)

        row = fresh(task)
        assert (row.status, row.error_code) == ("retry_wait", "provider_unavailable")
        assert not Chunk.objects.filter(document_id=task.document_id).exists()

    def test_a_database_connection_error_is_transient(
        self, knowledge_base, submit, run_worker, monkeypatch
    ):
        def connection_lost(claim, **final):
            raise OperationalError("server closed the connection unexpectedly")

        monkeypatch.setattr(claims, "ingestion_task_succeed", connection_lost)
        task = submit(document(knowledge_base))

        run_worker(task.pk)

        row = fresh(task)
        assert (row.status, row.error_code) == ("retry_wait", "database_unavailable")
        assert "server closed" not in row.error_detail

    @pytest.mark.parametrize(
        ("content", "filename", "content_type", "code"),
        [
            (b"%PDF-1.4 broken", "broken.pdf", "application/pdf", "parse_error"),
            (b"<html><script>x()</script></html>", "e.html", "text/html", None),
        ],
        ids=["parse_error", "empty_document"],
    )
    def test_permanent_failures_fail_at_once(
        self, knowledge_base, submit, run_worker, content, filename, content_type, code
    ):
        task = submit(
            DocumentFactory(
                knowledge_base=knowledge_base,
                content=content,
                filename=filename,
                content_type=content_type,
            )
        )
        run_worker(task.pk)
        row = fresh(task)
        assert (row.status, row.attempt) == ("failed", 1)
        assert row.error_code == (code or "empty_document")

    def test_document_not_found_fails_at_once(self, knowledge_base, submit, run_worker):
        task = submit(document(knowledge_base))
        Document.objects.filter(pk=task.document_id).delete()
        run_worker(task.pk)
        assert (fresh(task).status, fresh(task).error_code) == (
            "failed",
            "document_not_found",
        )

    def test_manual_retry_still_works_after_automatic_retries_gave_up(
        self, knowledge_base, submit, run_worker, settings, editor, client_for
    ):
        settings.INGESTION_MAX_ATTEMPTS = 1
        doc = missing_original(knowledge_base)
        task = submit(doc)
        run_worker(task.pk)
        assert fresh(task).status == "failed"
        default_storage.save(doc.storage_key, _content(TEXT))

        response = client_for(editor).post(f"/api/ingestion-tasks/{task.pk}/retry")

        assert response.status_code == 202
        assert response.json()["status"] == "queued"
        run_worker()
        assert (fresh(task).status, fresh(task).attempt) == ("succeeded", 2)

    def test_when_the_failure_cannot_be_recorded_the_lease_takes_over(
        self, knowledge_base, submit, run_worker, monkeypatch
    ):
        def database_gone(*args, **kwargs):
            raise OperationalError("could not connect to server")

        monkeypatch.setattr(claims, "ingestion_task_report_failure", database_gone)
        task = submit(missing_original(knowledge_base))

        stats, lines = run_worker(task.pk)

        assert stats.lost == 1
        assert "could not record object_read_error" in lines[-1]
        assert fresh(task).status == "running"
        expire_lease(task)
        monkeypatch.undo()
        claims.ingestion_tasks_reclaim_expired()
        assert fresh(task).status == "retry_wait"


class TestShutdown:
    def signal_at(self, monkeypatch, worker, stage, times=1):
        original = IngestionPipeline.report

        def report(pipeline, at, completed, total):
            if at == stage and completed == total:
                for _ in range(times):
                    worker._on_signal(signal.SIGTERM, None)
            original(pipeline, at, completed, total)

        monkeypatch.setattr(IngestionPipeline, "report", report)

    def test_the_current_task_finishes_within_the_grace_period(
        self, knowledge_base, submit, monkeypatch, settings
    ):
        # The pipeline's grace, one task at a time; a batch's is in
        # test_small_batches.py.
        settings.INGESTION_SMALL_BATCH = 1
        first = submit(document(knowledge_base))
        second = submit(document(knowledge_base))
        lines: list[str] = []
        worker = Worker(worker_id="w", grace_seconds=30, write=lines.append)
        self.signal_at(monkeypatch, worker, "parse")

        stats = worker.run()

        assert stats.claimed == 1
        assert fresh(first).status == "succeeded"
        assert fresh(second).status == "queued"
        assert "stopping worker=w signal=SIGTERM grace=30s" in lines

    def test_past_the_grace_period_the_task_is_released_uncharged(
        self, knowledge_base, submit, monkeypatch
    ):
        task = submit(document(knowledge_base))
        events = OutboxEvent.objects.count()
        lines: list[str] = []
        worker = Worker(worker_id="w", grace_seconds=0, write=lines.append)
        # The chunk rows are ready; the next checkpoint comes before the success.
        self.signal_at(monkeypatch, worker, "indexing")

        stats = worker.run()

        row = fresh(task)
        assert stats.released == 1
        assert (row.status, row.attempt, row.worker_id, row.claim_token) == (
            "queued",
            0,
            None,
            None,
        )
        assert (row.stage, row.completed, row.total) == ("download", 0, 0)
        assert document_status(task) == "processing"
        assert not Chunk.objects.filter(document_id=task.document_id).exists()
        assert OutboxEvent.objects.count() == events + 1
        assert lines[-1] == (
            f"released task={task.pk} worker=w "
            "(shutdown; back in the queue, no attempt charged)"
        )
        monkeypatch.undo()
        Worker(worker_id="next", write=lines.append).run()
        assert (fresh(task).status, fresh(task).attempt) == ("succeeded", 1)

    def test_a_second_signal_releases_at_once(
        self, knowledge_base, submit, monkeypatch
    ):
        task = submit(document(knowledge_base))
        lines: list[str] = []
        worker = Worker(worker_id="w", grace_seconds=3600, write=lines.append)
        self.signal_at(monkeypatch, worker, "download", times=2)

        stats = worker.run()

        assert stats.released == 1
        assert fresh(task).status == "queued"
        assert "releasing now worker=w signal=SIGTERM" in lines


class TestDatabaseOutage:
    def flaky_claims(self, monkeypatch, failures: int):
        original = claims.claimable_tasks
        calls = {"n": 0}

        def claimable(limit, **options):
            calls["n"] += 1
            if calls["n"] <= failures:
                raise OperationalError("connection refused")
            return original(limit, **options)

        monkeypatch.setattr(claims, "claimable_tasks", claimable)

    def test_a_loop_worker_backs_off_and_carries_on(
        self, knowledge_base, submit, monkeypatch
    ):
        task = submit(document(knowledge_base))
        self.flaky_claims(monkeypatch, failures=3)
        lines: list[str] = []
        worker = Worker(
            worker_id="w",
            loop=True,
            max_tasks=1,
            poll_interval=0.01,
            reconnect_delays=(0.01, 0.02),
            write=lines.append,
        )

        stats = worker.run()

        assert stats.succeeded == 1
        assert fresh(task).status == "succeeded"
        outages = [line for line in lines if line.startswith("database unavailable")]
        assert [line.split()[-1] for line in outages] == [
            "retry_in=0.01s",
            "retry_in=0.02s",
            "retry_in=0.02s",
        ]
        assert "database available again worker=w" in lines

    def test_a_one_shot_worker_reports_the_outage(self, knowledge_base, monkeypatch):
        self.flaky_claims(monkeypatch, failures=1)
        with pytest.raises(OperationalError):
            Worker(worker_id="w", write=lambda line: None).run()
