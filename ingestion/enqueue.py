"""What every way into the queue shares (submit, retry, backoff, release, reclaim):
the task's turn, and the outbox event that announces it."""

from __future__ import annotations

import uuid

from django.db.models import Max

from .models import CLAIM_ORDER, IngestionTask, OutboxEvent

TASK_QUEUED_TOPIC = "ingestion.task.queued"


def next_turn(*, submitted_by_id: int | None) -> int:
    """The turn of a task entering the queue (submit, retry, backoff, release).

    The turn served now (the next claim's), or the one after its submitter's
    last queued or running task if that is later: a submitter's k-th waiting
    task goes after everyone else's (k-1)-th, so a flood from one person waits
    its turns while anyone else's upload is taken next. Within one submitter
    turns only grow, so their tasks stay first in, first out.
    """
    serving = (
        IngestionTask.objects.claimable()
        .order_by(*CLAIM_ORDER)
        .values_list("turn", flat=True)
        .first()
    )
    last = (
        IngestionTask.objects.active()
        .filter(submitted_by_id=submitted_by_id)
        .aggregate(last=Max("turn"))["last"]
    )
    serving = 0 if serving is None else serving
    return serving if last is None else max(serving, last + 1)


def announce_queued(*, task_id: uuid.UUID, document_id: uuid.UUID) -> None:
    """The wake-up for workers, written in the caller's transaction."""
    OutboxEvent.objects.create(
        topic=TASK_QUEUED_TOPIC,
        payload={"task_id": str(task_id), "document_id": str(document_id)},
    )
