"""Every write on ingestion tasks: what people ask for, and what workers report.

People: `document_submit`, `ingestion_task_cancel`, `ingestion_task_retry`.
Workers: `ingestion_task_claim` / `ingestion_task_claim_next`, then writes that are
all filtered by the claim token they got (`TaskClaim`), so a worker that lost its
task (cancelled, or reclaimed) changes nothing and learns it from `TaskLost`.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from config.errors import InvalidTransition
from documents.models import Document, Role
from documents.selectors import require_role, visible_document
from documents.transitions import transition_document, transition_documents
from retrieval.services import chunks_discard, chunks_replace

from .models import IngestionTask, OutboxEvent, TaskStage, TaskStatus
from .selectors import visible_task
from .transitions import transition_task, transition_tasks

logger = logging.getLogger(__name__)

TASK_QUEUED_TOPIC = "ingestion.task.queued"
ERROR_DETAIL_LIMIT = 500


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


# --- What people ask for -------------------------------------------------------


def document_submit(*, user, document_id) -> IngestionTask:
    """Queue a draft for ingestion: document, task and outbox event in one commit."""
    document = visible_document(user, document_id)
    require_role(user, document.knowledge_base_id, Role.EDITOR)
    with transaction.atomic():
        transition_document(document.pk, "submit")
        task = IngestionTask.objects.create(document_id=document.pk)
        _announce_queued(task)
    logger.info("ingestion task queued task=%s document=%s", task.pk, document.pk)
    return task


def ingestion_task_cancel(*, user, task_id) -> IngestionTask:
    """Cancel a queued, running or waiting task; the document goes back to draft."""
    task = _task_for_editor(user, task_id)
    with transaction.atomic():
        cancelled = transition_task(task.pk, "cancel", finished_at=timezone.now())
        transition_documents(Document.objects.filter(pk=task.document_id), "cancel")
        # A running worker may have written chunks already; none may outlive this.
        chunks_discard(document_id=task.document_id)
    logger.info("ingestion task cancelled task=%s by=%s", task.pk, user.username)
    return cancelled


def ingestion_task_retry(*, user, task_id) -> IngestionTask:
    """Put the same failed task back in the queue; its document must be failed too."""
    task = _task_for_editor(user, task_id)
    latest = IngestionTask.objects.filter(document_id=task.document_id).first()
    if latest is None or latest.pk != task.pk:
        raise InvalidTransition("Only the document's latest task can be retried.")
    with transaction.atomic():
        retried = transition_task(
            task.pk,
            "retry",
            stage=TaskStage.DOWNLOAD,
            completed=0,
            total=0,
            error_code=None,
            error_detail=None,
            worker_id=None,
            claim_token=None,
            lease_expires_at=None,
            available_at=timezone.now(),
            finished_at=None,
        )
        transition_document(task.document_id, "retry")
        _announce_queued(retried)
    logger.info("ingestion task retried task=%s by=%s", task.pk, user.username)
    return retried


def _task_for_editor(user, task_id) -> IngestionTask:
    task = visible_task(user, task_id)
    require_role(user, task.document.knowledge_base_id, Role.EDITOR)
    return task


def _announce_queued(task: IngestionTask) -> None:
    OutboxEvent.objects.create(
        topic=TASK_QUEUED_TOPIC,
        payload={"task_id": str(task.pk), "document_id": str(task.document_id)},
    )


# --- What workers do -------------------------------------------------------------


def ingestion_task_claim(task_id, *, worker_id: str) -> TaskClaim | None:
    """Try to take one task; `None` when another worker (or nobody) may run it."""
    now = timezone.now()
    token = uuid.uuid4()
    claimed = transition_tasks(
        IngestionTask.objects.claimable(now).filter(pk=task_id),
        "claim",
        worker_id=worker_id,
        claim_token=token,
        attempt=F("attempt") + 1,
        stage=TaskStage.DOWNLOAD,
        completed=0,
        total=0,
        started_at=now,
        finished_at=None,
    )
    if claimed != 1:
        return None
    task = IngestionTask.objects.values("document_id", "attempt").get(
        pk=task_id, claim_token=token
    )
    return TaskClaim(
        task_id=task_id,
        document_id=task["document_id"],
        worker_id=worker_id,
        claim_token=token,
        attempt=task["attempt"],
    )


def claimable_task_ids(limit: int) -> list[uuid.UUID]:
    return list(
        IngestionTask.objects.claimable()
        .order_by("available_at", "created_at")
        .values_list("pk", flat=True)[:limit]
    )


def _held(claim: TaskClaim):
    return IngestionTask.objects.filter(
        pk=claim.task_id, status=TaskStatus.RUNNING, claim_token=claim.claim_token
    )


def ingestion_task_report_progress(
    claim: TaskClaim, *, stage: str, completed: int, total: int
) -> None:
    """Record progress; never revives a task that is no longer ours."""
    updated = _held(claim).update(
        stage=stage, completed=completed, total=total, updated_at=timezone.now()
    )
    if updated != 1:
        raise TaskLost(claim.task_id)


def ingestion_task_write_chunks(
    claim: TaskClaim, *, document: Document, chunks, vectors, embedding_model: str
) -> None:
    """Replace the document's chunks, only while the task is still ours."""
    with transaction.atomic():
        # Touching our own row first serialises this with a concurrent cancel.
        if _held(claim).update(updated_at=timezone.now()) != 1:
            raise TaskLost(claim.task_id)
        chunks_replace(
            document=document,
            chunks=chunks,
            vectors=vectors,
            embedding_model=embedding_model,
            ingestion_task_id=claim.task_id,
        )


def ingestion_task_still_held(claim: TaskClaim) -> bool:
    return _held(claim).exists()


def ingestion_task_discard_chunks(claim: TaskClaim) -> int:
    return chunks_discard(
        document_id=claim.document_id, ingestion_task_id=claim.task_id
    )


def ingestion_task_succeed(claim: TaskClaim) -> None:
    """Task `succeeded` and document `review_pending`, together or not at all."""
    with transaction.atomic():
        now = timezone.now()
        if not transition_tasks(
            _held(claim), "succeed", finished_at=now, lease_expires_at=None
        ):
            raise TaskLost(claim.task_id)
        transition_document(claim.document_id, "ingest_succeed")


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
