"""The ingestion task state machine: how one execution is going.

    submit --> queued --claim--> running --succeed--> succeeded
                 ^   \\             |  \\
                 |    \\            |   '--fail--> failed --retry--> queued
                 |     \\           |
                 |      '--cancel--+--cancel--> cancelled   (also from retry_wait)
                 |                 |
                 +----release------+--backoff--> retry_wait --claim--> running
                 '---yield_turn----'

`retry_wait` is claimable like `queued` once `available_at` has passed. A task whose
lease expired is reclaimed with `backoff` (or `fail` once its attempts are spent), a
worker shutting down gives its task back with `release`, and so does a light-only
worker that finds its task heavy (`lanes.py`); one whose turn is over
(INGESTION_TURN_SECONDS while others wait) with `yield_turn`, which keeps its stage
and progress: its next run resumes from its checkpoints. Every
status change goes through `TASK_TRANSITIONS` as one conditional update; a
worker's own moves are further filtered by its `claim_token`, so a worker that
lost its task (cancelled, or reclaimed after its lease expired) changes nothing.
"""

from __future__ import annotations

import uuid

from django.db.models import QuerySet

from core.errors import InvalidTransition, NotFound
from core.statemachine import Transition, apply_conditional_update, table

from .models import IngestionTask, TaskStatus

QUEUED = TaskStatus.QUEUED
RUNNING = TaskStatus.RUNNING
SUCCEEDED = TaskStatus.SUCCEEDED
FAILED = TaskStatus.FAILED
CANCELLED = TaskStatus.CANCELLED
RETRY_WAIT = TaskStatus.RETRY_WAIT

TASK_TRANSITIONS: dict[str, Transition] = table(
    claim=({QUEUED, RETRY_WAIT}, RUNNING),
    succeed=({RUNNING}, SUCCEEDED),
    fail=({RUNNING}, FAILED),
    backoff=({RUNNING}, RETRY_WAIT),
    release=({RUNNING}, QUEUED),
    yield_turn=({RUNNING}, QUEUED),
    cancel=({QUEUED, RUNNING, RETRY_WAIT}, CANCELLED),
    retry=({FAILED}, QUEUED),
)


def transition_tasks(
    queryset: QuerySet[IngestionTask], action: str, **updates: object
) -> int:
    """Apply `action` to every task of `queryset` that allows it; return the count."""
    return apply_conditional_update(queryset, TASK_TRANSITIONS[action], **updates)


def transition_task(
    task_id: uuid.UUID | str, action: str, **updates: object
) -> IngestionTask:
    """Apply `action` to one task or raise why it could not be applied."""
    if transition_tasks(IngestionTask.objects.filter(pk=task_id), action, **updates):
        return IngestionTask.objects.get(pk=task_id)
    current = IngestionTask.objects.filter(pk=task_id).first()
    if current is None:
        raise NotFound("Ingestion task not found.")
    raise InvalidTransition(
        f"Cannot {action} an ingestion task that is {current.status}."
    )
