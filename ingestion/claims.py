"""The claim protocol: how a worker takes a task, and every write it makes under it.

A worker reclaims expired leases (`ingestion_tasks_reclaim_expired`), then claims
(`ingestion_task_claim`, or `claimable_tasks` and `ingestion_task_claim_candidate`)
and gets a `TaskClaim` (with small companions, `ingestion_tasks_claim_small`,
several under one token). Every later write is filtered by that claim's token, so a
worker that lost its task (cancelled, or reclaimed after its lease expired) changes
nothing and learns it from `TaskLost`: progress, lease renewal, success (with the
chunks, in one transaction), failure (retried with backoff when transient), release
on shutdown.
"""

from __future__ import annotations

import logging
import random
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from documents.models import Document
from documents.transitions import transition_document, transition_documents
from retrieval.services import chunks_discard, chunks_replace, chunks_replace_many

from . import counters
from .backoff import capped_exponential
from .budget import WorkSpent
from .enqueue import announce_queued, next_turn
from .lanes import ALL_LANES
from .models import (
    CLAIM_ORDER,
    ERROR_DETAIL_LIMIT,
    TRANSIENT_ERROR_CODES,
    ErrorCode,
    IngestionTask,
    TaskLane,
    TaskStage,
    TaskStatus,
)
from .transitions import transition_tasks

logger = logging.getLogger(__name__)


class TaskLost(Exception):
    """The worker no longer holds its task: it was cancelled or reclaimed."""


@dataclass(frozen=True)
class TaskClaim:
    """What a worker won: the task, and the token that proves it still holds it."""

    task_id: uuid.UUID
    document_id: uuid.UUID
    worker_id: str
    claim_token: uuid.UUID
    attempt: int
    submitted_by_id: int | None = None
    lane: str = TaskLane.LIGHT


@dataclass(frozen=True)
class Candidate:
    """A claimable task as last read: claiming it also checks `attempt` is unchanged."""

    task_id: uuid.UUID
    document_id: uuid.UUID
    attempt: int
    submitted_by_id: int | None = None
    lane: str = TaskLane.LIGHT


# What a claim reads of a task to build its `Candidate`.
_CANDIDATE_FIELDS = ("pk", "document_id", "attempt", "submitted_by_id", "lane")


def ingestion_task_claim(
    task_id: uuid.UUID | str, *, worker_id: str
) -> TaskClaim | None:
    """Try to take one task; `None` when another worker (or nobody) may run it."""
    task = (
        IngestionTask.objects.claimable()
        .filter(pk=task_id)
        .values_list(*_CANDIDATE_FIELDS)
        .first()
    )
    if task is None:
        return None
    return ingestion_task_claim_candidate(Candidate(*task), worker_id=worker_id)


# What an earlier run leaves on a task that waits for its next attempt. A task at
# attempt 0 has none: it never ran, or `release` gave it back reset.
_EARLIER_RUN_CLEARED = {
    "stage": TaskStage.DOWNLOAD,
    "completed": 0,
    "stage_seconds": {},
    "error_code": None,
    "error_detail": None,
    "finished_at": None,
}


def ingestion_task_claim_candidate(
    candidate: Candidate, *, worker_id: str, lanes: frozenset[str] = ALL_LANES
) -> TaskClaim | None:
    """One conditional UPDATE; the row count decides whether this worker won.

    The attempt read with the candidate pins the row (every claim raises it), so
    the new attempt is known without reading the row back: a task claimed
    meanwhile is simply missed. The move itself checks the status, and the
    worker's lanes when it does not take them all.
    """
    now = timezone.now()
    token = uuid.uuid4()
    claimed = transition_tasks(
        _in_lanes(
            IngestionTask.objects.filter(
                pk=candidate.task_id, attempt=candidate.attempt, available_at__lte=now
            ),
            lanes,
        ),
        "claim",
        worker_id=worker_id,
        claim_token=token,
        lease_expires_at=now + _lease(),
        attempt=F("attempt") + 1,
        # The run's first progress, written with the claim: download 0/1.
        total=1,
        started_at=now,
        **({} if candidate.attempt == 0 else _EARLIER_RUN_CLEARED),
    )
    if claimed != 1:
        return None
    return TaskClaim(
        task_id=candidate.task_id,
        document_id=candidate.document_id,
        worker_id=worker_id,
        claim_token=token,
        attempt=candidate.attempt + 1,
        submitted_by_id=candidate.submitted_by_id,
        lane=candidate.lane,
    )


def ingestion_tasks_claim_small(
    head: TaskClaim,
    *,
    limit: int,
    max_bytes: int,
    content_types: Sequence[str],
) -> list[TaskClaim] | None:
    """Small tasks to run with `head` (`batches.py`); `None` when `head` is no
    small first run itself.

    Companions are the run of tasks at the front of the head's lane, in claim
    order, that are of the head's knowledge base, at their first run (`queued`,
    never run, yielded or charged) and whose document is of `content_types` and
    at most `max_bytes`: the first task that is not ends the run, so a batch
    never takes a task ahead of one waiting before it (fair turns hold). Up to
    `limit` of them are taken by one conditional UPDATE that re-checks their
    status, stamped with the head's claim token; when another worker took some
    meanwhile, the rows won are read back by that token.
    """
    small = {
        "document__size_bytes__lte": max_bytes,
        "document__content_type__in": list(content_types),
        "yielded_at__isnull": True,
        # Nothing spent of its work budget: no run of it was ever charged.
        "work_cpu_seconds": 0,
        "work_ocr_pages": 0,
    }
    knowledge_base_id = (
        _held(head)
        .filter(attempt=1, **small)
        .values_list("document__knowledge_base_id", flat=True)
        .first()
    )
    if knowledge_base_id is None:
        return None
    if limit <= 0:
        return []
    now = timezone.now()
    front = (
        IngestionTask.objects.claimable(now)
        .filter(lane=head.lane)
        .order_by(*CLAIM_ORDER)
        .values_list(
            "pk",
            "document_id",
            "submitted_by_id",
            "document__knowledge_base_id",
            "document__size_bytes",
            "document__content_type",
            "status",
            "attempt",
            "yielded_at",
            "work_cpu_seconds",
            "work_ocr_pages",
        )[:limit]
    )
    picked: list[tuple[uuid.UUID, uuid.UUID, int | None]] = []
    for task_id, document_id, submitted_by_id, kb, size, kind, *run in front:
        fits = (
            kb == knowledge_base_id
            and size is not None
            and size <= max_bytes
            and kind in content_types
            and run == [TaskStatus.QUEUED, 0, None, 0, 0]
        )
        if not fits:
            break
        picked.append((task_id, document_id, submitted_by_id))
    if not picked:
        return []
    claimed = transition_tasks(
        IngestionTask.objects.filter(
            pk__in=[task_id for task_id, _, _ in picked],
            status=TaskStatus.QUEUED,
            attempt=0,
            available_at__lte=now,
        ),
        "claim",
        worker_id=head.worker_id,
        claim_token=head.claim_token,
        lease_expires_at=now + _lease(),
        attempt=F("attempt") + 1,
        total=1,
        started_at=now,
    )
    if claimed != len(picked):
        won = set(
            IngestionTask.objects.filter(
                pk__in=[task_id for task_id, _, _ in picked],
                claim_token=head.claim_token,
                status=TaskStatus.RUNNING,
            ).values_list("pk", flat=True)
        )
        picked = [row for row in picked if row[0] in won]
    return [
        TaskClaim(
            task_id=task_id,
            document_id=document_id,
            worker_id=head.worker_id,
            claim_token=head.claim_token,
            attempt=1,
            submitted_by_id=submitted_by_id,
            lane=head.lane,
        )
        for task_id, document_id, submitted_by_id in picked
    ]


def claimable_tasks(
    limit: int, *, offset: int = 0, lanes: frozenset[str] = ALL_LANES
) -> list[Candidate]:
    """The next claimable tasks of `lanes` in claim order (turn, then oldest
    first), skipping the first `offset`."""
    return [
        Candidate(*row)
        for row in _in_lanes(IngestionTask.objects.claimable(), lanes)
        .order_by(*CLAIM_ORDER)
        .values_list(*_CANDIDATE_FIELDS)[offset : offset + limit]
    ]


def _in_lanes(
    tasks: QuerySet[IngestionTask], lanes: frozenset[str]
) -> QuerySet[IngestionTask]:
    # A worker of every lane filters on none: its claim is the one it always was.
    return tasks if lanes >= ALL_LANES else tasks.filter(lane__in=sorted(lanes))


def ingestion_task_set_lane(claim: TaskClaim, lane: str) -> None:
    """The run found the task's cost (`lanes.heavy_reason`): record its lane."""
    if _held(claim).update(lane=lane) != 1:
        raise TaskLost(claim.task_id)


def _held(claim: TaskClaim) -> QuerySet[IngestionTask]:
    return IngestionTask.objects.filter(
        pk=claim.task_id, status=TaskStatus.RUNNING, claim_token=claim.claim_token
    )


def _lease() -> timedelta:
    return timedelta(seconds=settings.INGESTION_LEASE_SECONDS)


def ingestion_task_renew_lease(claim: TaskClaim) -> bool:
    """Push the lease forward; `False` when the task is no longer ours."""
    return _held(claim).update(lease_expires_at=timezone.now() + _lease()) == 1


def ingestion_tasks_renew_leases(claim: TaskClaim) -> bool:
    """Push forward the lease of every task held with `claim`'s token (a batch
    shares one); `False` when none is ours any more."""
    return (
        IngestionTask.objects.filter(
            status=TaskStatus.RUNNING, claim_token=claim.claim_token
        ).update(lease_expires_at=timezone.now() + _lease())
        > 0
    )


def ingestion_tasks_report_stage(claim: TaskClaim, *, stage: str) -> None:
    """Every task held with `claim`'s token is at `stage` 0/1 (a batch's tasks
    show it together); never revives a task that is no longer ours."""
    IngestionTask.objects.filter(
        status=TaskStatus.RUNNING, claim_token=claim.claim_token
    ).update(stage=stage, completed=0, total=1, updated_at=timezone.now())


def ingestion_tasks_reclaim_expired(*, limit: int = 100) -> int:
    """Take back running tasks whose worker stopped renewing the lease.

    While attempts remain the task waits in `retry_wait`, claimable at once; then it
    fails with `lease_expired` and its document fails with it. Clearing the claim
    token makes every late write of the old worker match no row, and the chunks it
    may have written go in the same transaction.
    """
    now = timezone.now()
    expired = IngestionTask.objects.lease_expired(now).values_list(
        "pk", "document_id", "attempt", "submitted_by_id"
    )[:limit]
    reclaimed = 0
    for task_id, document_id, attempt, submitted_by_id in expired:
        still_expired = IngestionTask.objects.lease_expired(now).filter(
            pk=task_id, attempt=attempt
        )
        exhausted = attempt >= settings.INGESTION_MAX_ATTEMPTS
        with transaction.atomic():
            requeued = (
                {}
                if exhausted
                else {"turn": next_turn(submitted_by_id=submitted_by_id)}
            )
            moved = transition_tasks(
                still_expired,
                "fail" if exhausted else "backoff",
                error_code=ErrorCode.LEASE_EXPIRED,
                error_detail="The worker stopped renewing its lease (it crashed, "
                "hung or lost its database connection).",
                claim_token=None,
                lease_expires_at=None,
                available_at=now,
                finished_at=now if exhausted else None,
                **requeued,
            )
            if not moved:
                continue
            if exhausted:
                transition_documents(
                    Document.objects.filter(pk=document_id), "ingest_fail"
                )
            chunks_discard(document_id=document_id, ingestion_task_id=task_id)
        reclaimed += 1
        logger.warning(
            "ingestion task lease expired task=%s attempt=%s now=%s",
            task_id,
            attempt,
            TaskStatus.FAILED if exhausted else TaskStatus.RETRY_WAIT,
        )
    counters.worker_counter_add(
        counters.LEASES_RECLAIMED, worker_id="any", amount=reclaimed
    )
    return reclaimed


def ingestion_task_report_progress(
    claim: TaskClaim,
    *,
    stage: str,
    completed: int,
    total: int,
    stage_seconds: dict[str, float] | None = None,
    work: WorkSpent | None = None,
) -> None:
    """Record progress (and, when given, this run's seconds per finished stage
    and the work spent since the last write); never revives a task that is no
    longer ours."""
    timings = {} if stage_seconds is None else {"stage_seconds": stage_seconds}
    updated = _held(claim).update(
        stage=stage,
        completed=completed,
        total=total,
        updated_at=timezone.now(),
        **timings,
        **_charged(work),
    )
    if updated != 1:
        raise TaskLost(claim.task_id)


def _charged(work: WorkSpent | None) -> dict[str, object]:
    if not work:
        return {}
    return {
        "work_cpu_seconds": F("work_cpu_seconds") + work.cpu_seconds,
        "work_ocr_pages": F("work_ocr_pages") + work.ocr_pages,
    }


def ingestion_task_work_spent(claim: TaskClaim) -> WorkSpent:
    """What earlier runs of the task spent of its work budget."""
    row = (
        IngestionTask.objects.filter(pk=claim.task_id)
        .values_list("work_cpu_seconds", "work_ocr_pages")
        .first()
    )
    return WorkSpent() if row is None else WorkSpent(*row)


def ingestion_task_charge_work(claim: TaskClaim, work: WorkSpent) -> bool:
    """Add `work` to what the task has spent; `False` when it is no longer ours."""
    if not work:
        return True
    return _held(claim).update(**_charged(work)) == 1


def ingestion_task_discard_chunks(claim: TaskClaim) -> int:
    return chunks_discard(
        document_id=claim.document_id, ingestion_task_id=claim.task_id
    )


def ingestion_task_succeed(
    claim: TaskClaim, *, chunks: Sequence[tuple[object, ...]], **final_progress: object
) -> None:
    """Task `succeeded`, document `review_pending` and the document's chunks
    replaced by `chunks` (rows from `retrieval.services.chunk_rows`): together or
    not at all, so no running or failed task ever has chunks.

    The guarded task update comes first: a concurrent cancel also starts at the
    task row, so the two are serialised there and never wait on each other's chunk
    rows. `final_progress` (stage, completed, total, stage_seconds) goes with it.
    """
    with transaction.atomic():
        now = timezone.now()
        if not transition_tasks(
            _held(claim),
            "succeed",
            finished_at=now,
            lease_expires_at=None,
            **final_progress,
        ):
            raise TaskLost(claim.task_id)
        document = Document.objects.filter(pk=claim.document_id)
        if not transition_documents(document, "ingest_succeed"):
            transition_document(claim.document_id, "ingest_succeed")  # raises why
        chunks_replace(document_id=claim.document_id, rows=chunks)


@dataclass(frozen=True)
class Finished:
    """One task of a batch to finish: its chunk rows, and what its success
    writes on its row (`final_progress` of `ingestion_task_succeed`, work)."""

    claim: TaskClaim
    rows: Sequence[tuple[object, ...]]
    final_progress: dict[str, object]
    work: WorkSpent | None = None


def ingestion_tasks_succeed(finished: Sequence[Finished]) -> list[TaskClaim]:
    """`ingestion_task_succeed` for several tasks in one transaction; the claims
    that succeeded (the others were cancelled or taken over: nothing of them is
    written).

    Each task moves on its own guarded update, its document on its own
    conditional one, inside a savepoint, so a task lost or a document that
    cannot move leaves the others be; then one DELETE and one INSERT write the
    chunks of those that succeeded.
    """
    won: list[Finished] = []
    with transaction.atomic():
        now = timezone.now()
        for item in finished:
            with transaction.atomic():
                if not transition_tasks(
                    _held(item.claim),
                    "succeed",
                    finished_at=now,
                    lease_expires_at=None,
                    **item.final_progress,
                    **_charged(item.work),
                ):
                    continue
                document = Document.objects.filter(pk=item.claim.document_id)
                if not transition_documents(document, "ingest_succeed"):
                    transaction.set_rollback(True)
                    continue
                won.append(item)
        chunks_replace_many(
            rows_by_document={item.claim.document_id: item.rows for item in won}
        )
    return [item.claim for item in won]


def ingestion_task_report_failure(
    claim: TaskClaim, *, error_code: str, detail: str
) -> str | None:
    """Retry a transient failure later while attempts remain, else fail.

    Returns the task's new status, or `None` when the task was no longer ours.
    """
    if (
        error_code in TRANSIENT_ERROR_CODES
        and claim.attempt < settings.INGESTION_MAX_ATTEMPTS
    ):
        available_at = timezone.now() + timedelta(seconds=backoff_delay(claim.attempt))
        if ingestion_task_backoff(
            claim, error_code=error_code, detail=detail, available_at=available_at
        ):
            return TaskStatus.RETRY_WAIT
        return None
    if ingestion_task_fail(claim, error_code=error_code, detail=detail):
        return TaskStatus.FAILED
    return None


def backoff_delay(attempt: int, *, rng: random.Random | None = None) -> float:
    """Seconds before run `attempt + 1`: exponential, capped, with jitter.

    A random factor in [0.5, 1): retries of tasks that failed together (a provider
    outage) spread out, and no delay is shorter than half its step.
    """
    return capped_exponential(
        attempt,
        base=settings.INGESTION_BACKOFF_BASE_SECONDS,
        cap=settings.INGESTION_BACKOFF_CAP_SECONDS,
        factor=settings.INGESTION_BACKOFF_FACTOR,
        jitter=0.5,
        rng=rng,
    )


def ingestion_task_backoff(
    claim: TaskClaim, *, error_code: str, detail: str, available_at: datetime
) -> bool:
    """`retry_wait` until `available_at`; the document stays `processing`."""
    with transaction.atomic():
        moved = transition_tasks(
            _held(claim),
            "backoff",
            error_code=error_code,
            error_detail=detail[:ERROR_DETAIL_LIMIT],
            available_at=available_at,
            claim_token=None,
            lease_expires_at=None,
            turn=next_turn(submitted_by_id=claim.submitted_by_id),
        )
        if not moved:
            return False
        ingestion_task_discard_chunks(claim)
    return True


def ingestion_task_fail(claim: TaskClaim, *, error_code: str, detail: str) -> bool:
    """Task and document `failed` with a stable code; this run's chunks removed."""
    with transaction.atomic():
        failed = transition_tasks(
            _held(claim),
            "fail",
            error_code=error_code,
            error_detail=detail[:ERROR_DETAIL_LIMIT],
            finished_at=timezone.now(),
            lease_expires_at=None,
        )
        if not failed:
            return False
        transition_documents(
            Document.objects.filter(pk=claim.document_id), "ingest_fail"
        )
        ingestion_task_discard_chunks(claim)
    return True


def ingestion_lanes_waiting(
    *, besides: uuid.UUID, lanes: frozenset[str] = ALL_LANES
) -> set[str]:
    """The lanes, of `lanes`, in which a task other than `besides` could be
    claimed now."""
    waiting = _in_lanes(IngestionTask.objects.claimable().exclude(pk=besides), lanes)
    return set(waiting.order_by().values_list("lane", flat=True).distinct())


def ingestion_task_yield(claim: TaskClaim) -> bool:
    """Back to the queue at a checkpoint, its turn over (`yield_turn`): stage and
    progress as last reported, the lease given up, a new turn taken behind the
    tasks waiting.

    No attempt is charged: a long scan takes many turns, and the attempts that
    INGESTION_MAX_ATTEMPTS bounds are the runs that failed or were lost.
    """
    with transaction.atomic():
        moved = transition_tasks(
            _held(claim),
            "yield_turn",
            attempt=F("attempt") - 1,
            worker_id=None,
            claim_token=None,
            lease_expires_at=None,
            available_at=timezone.now(),
            yielded_at=timezone.now(),
            yields=F("yields") + 1,
            turn=next_turn(submitted_by_id=claim.submitted_by_id),
        )
        if not moved:
            return False
        announce_queued(task_id=claim.task_id, document_id=claim.document_id)
    return True


def ingestion_task_release(claim: TaskClaim, *, lane: str | None = None) -> bool:
    """Give the task back to the queue unfinished: at worker shutdown, or, with
    `lane`, to the workers of that lane (a light-only worker found it heavy),
    keeping its turn.

    No attempt is charged, this run's chunks go, and the queued event is announced
    again so another worker picks it up promptly.
    """
    requeued = (
        {"turn": next_turn(submitted_by_id=claim.submitted_by_id)}
        if lane is None
        else {"lane": lane}
    )
    with transaction.atomic():
        released = transition_tasks(
            _held(claim),
            "release",
            attempt=F("attempt") - 1,
            **_EARLIER_RUN_CLEARED,
            total=0,
            worker_id=None,
            claim_token=None,
            lease_expires_at=None,
            started_at=None,
            available_at=timezone.now(),
            yielded_at=None,
            **requeued,
        )
        if not released:
            return False
        ingestion_task_discard_chunks(claim)
        announce_queued(task_id=claim.task_id, document_id=claim.document_id)
    return True
