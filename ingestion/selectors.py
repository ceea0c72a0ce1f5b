"""Reads on ingestion tasks; visibility follows the document's knowledge base."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from django.db.models import Count, Min, QuerySet
from django.utils import timezone

from core.errors import NotFound
from documents.selectors import knowledge_base_ids_for

from .models import IngestionTask, OutboxEvent, TaskStatus

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User


def tasks_visible_to(user: User | AnonymousUser) -> QuerySet[IngestionTask]:
    return IngestionTask.objects.filter(
        document__knowledge_base_id__in=knowledge_base_ids_for(user)
    ).select_related("document")


def visible_task(user: User | AnonymousUser, task_id: uuid.UUID | str) -> IngestionTask:
    task = tasks_visible_to(user).filter(pk=task_id).first()
    if task is None:
        raise NotFound("Ingestion task not found.")
    return task


def latest_task(document_id: uuid.UUID | str) -> IngestionTask | None:
    return IngestionTask.objects.filter(document_id=document_id).first()


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
    return {
        "tasks_by_status": {status: counts.get(status, 0) for status in TaskStatus},
        "oldest_queued_age_seconds": (
            round((now - oldest).total_seconds(), 1) if oldest else None
        ),
        "running": running,
        "failures_last_24h_by_error_code": failures,
        "outbox_undelivered": OutboxEvent.objects.undelivered().count(),
    }
