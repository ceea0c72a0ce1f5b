"""Reads on ingestion tasks; visibility follows the document's knowledge base."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from django.db.models import Count, Min, QuerySet
from django.utils import timezone

from core.errors import NotFound
from documents.selectors import documents_visible_to, knowledge_base_ids_for

from .models import IngestionTask, OutboxEvent, TaskLane, TaskStatus

# How far back the queue waits of claimed tasks are looked at.
RECENT_WAITS = timedelta(hours=24)

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User


def tasks_visible_to(user: User | AnonymousUser) -> QuerySet[IngestionTask]:
    """The tasks of the versions the caller reads (`documents_visible_to`): a
    viewer sees those of published versions only, as the document's task list."""
    return IngestionTask.objects.filter(
        document__in=documents_visible_to(user).values("pk")
    ).select_related("document")


def visible_task(user: User | AnonymousUser, task_id: uuid.UUID | str) -> IngestionTask:
    task = tasks_visible_to(user).filter(pk=task_id).first()
    if task is None:
        raise NotFound("Ingestion task not found.")
    return task


def member_task(user: User | AnonymousUser, task_id: uuid.UUID | str) -> IngestionTask:
    """Any task in one of the caller's knowledge bases, for an action whose role
    check follows (as `member_document`): a viewer is told the role it needs."""
    task = (
        IngestionTask.objects.filter(
            pk=task_id, document__knowledge_base_id__in=knowledge_base_ids_for(user)
        )
        .select_related("document")
        .first()
    )
    if task is None:
        raise NotFound("Ingestion task not found.")
    return task


def latest_task(document_id: uuid.UUID | str) -> IngestionTask | None:
    return IngestionTask.objects.filter(document_id=document_id).first()


@dataclass(frozen=True)
class LaneQueue:
    """One lane's queue: tasks claimable now, running, the oldest claimable's
    wait so far, and the waits (claim minus available) of tasks claimed lately."""

    depth: int
    running: int
    oldest_wait_seconds: float | None
    recent_waits: list[float]

    def wait_percentile(self, share: float) -> float | None:
        if not self.recent_waits:
            return None
        ordered = sorted(self.recent_waits)
        return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def lane_queues(now: datetime | None = None) -> dict[str, LaneQueue]:
    now = now or timezone.now()
    claimable = {
        lane: (count, oldest)
        for lane, count, oldest in IngestionTask.objects.claimable(now)
        .order_by()
        .values_list("lane")
        .annotate(n=Count("pk"), oldest=Min("available_at"))
        .values_list("lane", "n", "oldest")
    }
    running = dict(
        IngestionTask.objects.running()
        .order_by()
        .values_list("lane")
        .annotate(n=Count("pk"))
        .values_list("lane", "n")
    )
    waits: dict[str, list[float]] = {lane: [] for lane in TaskLane.values}
    claimed = (
        IngestionTask.objects.filter(started_at__gte=now - RECENT_WAITS)
        .order_by()
        .values_list("lane", "available_at", "started_at")
    )
    for lane, available, started in claimed.iterator():
        waits.setdefault(lane, []).append(
            max((started - available).total_seconds(), 0.0)
        )
    return {
        lane: LaneQueue(
            depth=claimable[lane][0] if lane in claimable else 0,
            running=running.get(lane, 0),
            oldest_wait_seconds=(
                round((now - claimable[lane][1]).total_seconds(), 1)
                if lane in claimable
                else None
            ),
            recent_waits=waits[lane],
        )
        for lane in TaskLane.values
    }


def ingestion_status(now: datetime | None = None) -> dict[str, Any]:
    """What an operator needs at a glance (`manage.py ingestion_status`)."""
    now = now or timezone.now()
    counts = dict(
        IngestionTask.objects.values_list("status").annotate(n=Count("pk")).order_by()
    )
    oldest = IngestionTask.objects.filter(status=TaskStatus.QUEUED).aggregate(
        since=Min("available_at")
    )["since"]
    running = [
        {
            "task_id": str(task.pk),
            "document_id": str(task.document_id),
            "worker_id": task.worker_id,
            "lane": task.lane,
            "attempt": task.attempt,
            "stage": task.stage,
            "completed": task.completed,
            "total": task.total,
            "lease_expires_in_seconds": (
                round((task.lease_expires_at - now).total_seconds(), 1)
                if task.lease_expires_at
                else None
            ),
        }
        for task in IngestionTask.objects.running().order_by("started_at")
    ]
    failures = dict(
        IngestionTask.objects.filter(
            status=TaskStatus.FAILED, finished_at__gte=now - timedelta(hours=24)
        )
        .values_list("error_code")
        .annotate(n=Count("pk"))
        .order_by()
    )
    lanes = {
        lane: {
            "depth": queue.depth,
            "running": queue.running,
            "oldest_wait_seconds": queue.oldest_wait_seconds,
            "wait_p50_seconds": _rounded(queue.wait_percentile(0.5)),
            "wait_p95_seconds": _rounded(queue.wait_percentile(0.95)),
            "claimed_last_24h": len(queue.recent_waits),
        }
        for lane, queue in lane_queues(now).items()
    }
    return {
        "tasks_by_status": {status: counts.get(status, 0) for status in TaskStatus},
        "lanes": lanes,
        "oldest_queued_age_seconds": (
            round((now - oldest).total_seconds(), 1) if oldest else None
        ),
        "running": running,
        "failures_last_24h_by_error_code": failures,
        "outbox_undelivered": OutboxEvent.objects.undelivered().count(),
    }


def _rounded(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds, 1)
