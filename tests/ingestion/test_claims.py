"""`ingestion/claims.py`: claiming a task, its lease and the reclaiming of expired
ones, the writes a worker makes under its claim, the backoff between attempts.

The worker that drives these is tested in `test_worker.py` and, for leases, retries
and shutdown, in `test_reliability.py`; the order in which tasks are claimed across
submitters in `tests/security/test_fair_claiming.py`.
"""

from __future__ import annotations

import random
import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from ingestion import claims, services
from ingestion.models import IngestionTask
from ingestion.worker import Worker, WorkerStats
from retrieval.models import Chunk
from tests.ingestion.tasks import (
    chunk_rows,
    document,
    document_status,
    expire_lease,
    fresh,
    leave_chunks,
    markdown_document,
)

pytestmark = pytest.mark.django_db

PROGRESS_FIELDS = (
    "status",
    "attempt",
    "stage",
    "completed",
    "total",
    "stage_seconds",
    "error_code",
    "error_detail",
    "worker_id",
    "claim_token",
    "lease_expires_at",
    "started_at",
    "finished_at",
)


def fresh_progress(task) -> dict:
    return IngestionTask.objects.values(*PROGRESS_FIELDS).get(pk=task.pk)


class TestClaiming:
    @pytest.mark.django_db(transaction=True)
    def test_two_workers_race_for_one_task(self, knowledge_base, submit, monkeypatch):
        """Two workers, each in its own thread with its own database connection,
        both read the task as claimable; only then do both send their conditional
        claim, at once. One UPDATE wins, and the task runs once."""
        task = submit(markdown_document(knowledge_base))
        both_read = threading.Barrier(2, timeout=30)
        claim_candidate = claims.ingestion_task_claim_candidate

        def claim_once_both_have_read(candidate, *, worker_id):
            both_read.wait()
            return claim_candidate(candidate, worker_id=worker_id)

        monkeypatch.setattr(
            claims, "ingestion_task_claim_candidate", claim_once_both_have_read
        )
        runs: dict[str, tuple[WorkerStats, list[str]]] = {}
        errors: dict[str, BaseException] = {}

        def work(worker_id: str) -> None:
            lines: list[str] = []
            try:
                stats = Worker(worker_id=worker_id, write=lines.append).run(task.pk)
                runs[worker_id] = (stats, lines)
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
        assert sorted(runs) == ["worker-one", "worker-two"]
        winners = [worker_id for worker_id, (stats, _) in runs.items() if stats.claimed]
        assert len(winners) == 1, runs
        [winner] = winners
        [loser] = set(runs) - {winner}
        claims_made = ("claimed ", "claim missed ")
        claimed = [
            line
            for _, lines in runs.values()
            for line in lines
            if line.startswith(claims_made)
        ]
        assert sorted(claimed) == [
            f"claim missed task={task.pk} worker={loser}",
            f"claimed task={task.pk} worker={winner} status=running attempt=1",
        ]
        assert (runs[winner][0].succeeded, runs[loser][0].missed) == (1, 1)
        task.refresh_from_db()
        assert (task.status, task.worker_id, task.attempt) == (
            "succeeded",
            winner,
            1,
        )
        chunks = Chunk.objects.filter(document_id=task.document_id)
        ordinals = sorted(chunks.values_list("ordinal", flat=True))
        assert task.completed == len(ordinals) > 1
        assert ordinals == list(range(len(ordinals)))
        assert set(chunks.values_list("ingestion_task_id", flat=True)) == {task.pk}

    def test_the_claim_shows_the_first_stage_of_the_run(self, knowledge_base, submit):
        task = submit(markdown_document(knowledge_base))

        claims.ingestion_task_claim(task.pk, worker_id="w")

        task.refresh_from_db()
        assert (task.stage, task.completed, task.total) == ("download", 0, 1)
        assert (task.stage_seconds, task.error_code, task.finished_at) == (
            {},
            None,
            None,
        )

    def test_a_retry_starts_without_the_earlier_runs_progress_and_error(
        self, knowledge_base, submit
    ):
        task = submit(markdown_document(knowledge_base))
        IngestionTask.objects.filter(pk=task.pk).update(
            status="retry_wait",
            attempt=1,
            stage="indexing",
            completed=7,
            total=9,
            stage_seconds={"parse": 9},
            error_code="object_read_error",
            error_detail="The object store did not answer.",
            finished_at=timezone.now(),
        )

        claim = claims.ingestion_task_claim(task.pk, worker_id="w")

        task.refresh_from_db()
        assert claim.attempt == task.attempt == 2
        assert (task.stage, task.completed, task.total) == ("download", 0, 1)
        assert task.stage_seconds == {}
        assert (task.error_code, task.error_detail, task.finished_at) == (None,) * 3

    def test_a_released_task_comes_back_as_if_it_never_ran(
        self, knowledge_base, submit
    ):
        # The claim of attempt 0 clears nothing: the release must leave nothing.
        task = submit(markdown_document(knowledge_base))
        pristine = fresh_progress(task)
        claim = claims.ingestion_task_claim(task.pk, worker_id="w")
        claims.ingestion_task_report_progress(
            claim, stage="parse", completed=1, total=2, stage_seconds={"download": 1.5}
        )

        assert claims.ingestion_task_release(claim)

        assert fresh_progress(task) == pristine
        claims.ingestion_task_claim(task.pk, worker_id="next")
        task.refresh_from_db()
        assert (task.attempt, task.stage, task.completed, task.total) == (
            1,
            "download",
            0,
            1,
        )
        assert task.stage_seconds == {}

    def test_a_stale_candidate_takes_only_a_task_still_claimable(
        self, knowledge_base, submit
    ):
        from datetime import timedelta

        task = submit(markdown_document(knowledge_base))
        [stale] = claims.claimable_tasks(1)
        other = claims.ingestion_task_claim_candidate(stale, worker_id="other")

        assert claims.ingestion_task_claim_candidate(stale, worker_id="w") is None
        # Given back unfinished: claimable at once, at the attempt read.
        claims.ingestion_task_release(other)
        IngestionTask.objects.filter(pk=task.pk).update(
            available_at=timezone.now() + timedelta(minutes=5)
        )
        assert claims.ingestion_task_claim_candidate(stale, worker_id="w") is None
        IngestionTask.objects.filter(pk=task.pk).update(available_at=timezone.now())
        claim = claims.ingestion_task_claim_candidate(stale, worker_id="w")
        assert claim.attempt == 1
        assert IngestionTask.objects.get(pk=task.pk).worker_id == "w"

    def test_retry_wait_is_claimable_only_once_available(self, knowledge_base, submit):
        from datetime import timedelta

        task = submit(markdown_document(knowledge_base))
        IngestionTask.objects.filter(pk=task.pk).update(
            status="retry_wait", available_at=timezone.now() + timedelta(minutes=5)
        )
        assert claims.ingestion_task_claim(task.pk, worker_id="w") is None
        IngestionTask.objects.filter(pk=task.pk).update(available_at=timezone.now())
        assert claims.ingestion_task_claim(task.pk, worker_id="w") is not None


class TestLeases:
    def test_a_claim_gives_a_lease_and_a_fresh_token(
        self, knowledge_base, submit, settings
    ):
        settings.INGESTION_LEASE_SECONDS = 60
        task = submit(document(knowledge_base))
        before = timezone.now()

        claim = claims.ingestion_task_claim(task.pk, worker_id="w-1")

        row = fresh(task)
        assert row.claim_token == claim.claim_token
        assert before + timedelta(seconds=59) < row.lease_expires_at
        assert row.lease_expires_at <= timezone.now() + timedelta(seconds=60)

    def test_renewal_pushes_the_lease_forward(self, knowledge_base, submit, settings):
        settings.INGESTION_LEASE_SECONDS = 5
        task = submit(document(knowledge_base))
        claim = claims.ingestion_task_claim(task.pk, worker_id="w-1")
        settings.INGESTION_LEASE_SECONDS = 500

        assert claims.ingestion_task_renew_lease(claim) is True

        assert fresh(task).lease_expires_at > timezone.now() + timedelta(seconds=400)

    def test_a_live_lease_is_left_alone(self, knowledge_base, submit):
        task = submit(document(knowledge_base))
        claims.ingestion_task_claim(task.pk, worker_id="w-1")

        assert claims.ingestion_tasks_reclaim_expired() == 0

        assert fresh(task).status == "running"

    def test_an_expired_lease_goes_to_retry_wait_claimable_at_once(
        self, knowledge_base, submit
    ):
        task = submit(document(knowledge_base))
        claims.ingestion_task_claim(task.pk, worker_id="w-1")
        expire_lease(task)

        assert claims.ingestion_tasks_reclaim_expired() == 1

        row = fresh(task)
        assert (row.status, row.error_code, row.attempt) == (
            "retry_wait",
            "lease_expired",
            1,
        )
        assert row.claim_token is None
        assert row.lease_expires_at is None
        assert row.available_at <= timezone.now()
        assert document_status(task) == "processing"
        successor = claims.ingestion_task_claim(task.pk, worker_id="w-2")
        assert successor is not None
        assert successor.attempt == 2
        assert fresh(task).error_code is None

    def test_a_running_task_without_a_lease_counts_as_expired(
        self, knowledge_base, submit
    ):
        # Claimed by a worker from before leases existed: nobody renews it.
        task = submit(document(knowledge_base))
        claims.ingestion_task_claim(task.pk, worker_id="old")
        IngestionTask.objects.filter(pk=task.pk).update(lease_expires_at=None)

        assert claims.ingestion_tasks_reclaim_expired() == 1
        assert fresh(task).status == "retry_wait"

    def test_the_last_attempt_fails_with_its_document(
        self, knowledge_base, submit, settings
    ):
        settings.INGESTION_MAX_ATTEMPTS = 2
        task = submit(document(knowledge_base))
        IngestionTask.objects.filter(pk=task.pk).update(attempt=1)
        claim = claims.ingestion_task_claim(task.pk, worker_id="w-1")
        assert claim.attempt == 2
        leave_chunks(claim, "text of a run that died")
        expire_lease(task)

        claims.ingestion_tasks_reclaim_expired()

        row = fresh(task)
        assert (row.status, row.error_code, row.attempt) == (
            "failed",
            "lease_expired",
            2,
        )
        assert row.finished_at is not None
        assert document_status(task) == "failed"
        assert not Chunk.objects.filter(document_id=task.document_id).exists()

    def test_a_worker_that_lost_its_task_changes_nothing(self, knowledge_base, submit):
        task = submit(document(knowledge_base))
        old = claims.ingestion_task_claim(task.pk, worker_id="old")
        expire_lease(task)
        claims.ingestion_tasks_reclaim_expired()
        new = claims.ingestion_task_claim(task.pk, worker_id="new")
        claims.ingestion_task_report_progress(
            new, stage="embedding", completed=1, total=3
        )
        leave_chunks(new, "the successor's text")
        before = fresh(task)

        with pytest.raises(claims.TaskLost):
            claims.ingestion_task_report_progress(
                old, stage="parse", completed=1, total=1
            )
        with pytest.raises(claims.TaskLost):
            claims.ingestion_task_succeed(old, chunks=chunk_rows(old, "late text"))
        assert claims.ingestion_task_renew_lease(old) is False
        assert (
            claims.ingestion_task_report_failure(
                old, error_code="parse_error", detail="late"
            )
            is None
        )
        assert claims.ingestion_task_release(old) is False

        after = fresh(task)
        assert (after.status, after.worker_id, after.stage, after.completed) == (
            "running",
            "new",
            "embedding",
            1,
        )
        assert after.lease_expires_at == before.lease_expires_at
        assert list(
            Chunk.objects.filter(document_id=task.document_id).values_list(
                "text", flat=True
            )
        ) == ["the successor's text"]


class TestCancellation:
    def test_progress_is_never_written_to_a_cancelled_task(
        self, knowledge_base, submit, editor
    ):
        task = submit(markdown_document(knowledge_base))
        claim = claims.ingestion_task_claim(task.pk, worker_id="w")
        services.ingestion_task_cancel(user=editor, task_id=task.pk)

        with pytest.raises(claims.TaskLost):
            claims.ingestion_task_report_progress(
                claim, stage="parse", completed=1, total=1
            )
        task.refresh_from_db()
        assert (task.status, task.stage) == ("cancelled", "download")


class TestBackoff:
    @pytest.mark.parametrize(
        ("attempt", "step"),
        [(1, 10), (2, 20), (3, 40), (6, 320), (7, 600), (30, 600)],
    )
    def test_exponential_capped_with_jitter(self, settings, attempt, step):
        settings.INGESTION_BACKOFF_BASE_SECONDS = 10
        settings.INGESTION_BACKOFF_FACTOR = 2
        settings.INGESTION_BACKOFF_CAP_SECONDS = 600
        rng = random.Random(attempt)
        delays = [claims.backoff_delay(attempt, rng=rng) for _ in range(200)]
        assert all(step / 2 <= delay < step for delay in delays)
        assert max(delays) - min(delays) > step / 4  # jittered, not constant

    def test_settings_are_honoured(self, settings):
        settings.INGESTION_BACKOFF_BASE_SECONDS = 1
        settings.INGESTION_BACKOFF_FACTOR = 3
        settings.INGESTION_BACKOFF_CAP_SECONDS = 5
        assert 1.5 <= claims.backoff_delay(2, rng=random.Random(1)) < 3
        assert 2.5 <= claims.backoff_delay(3, rng=random.Random(1)) < 5
