"""What operators run to keep the tables small (`prune_ingestion_tasks`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.db.models import Exists, Model, OuterRef, QuerySet
from django.utils import timezone

from .artifacts import orphan_artifacts_prune
from .models import FINISHED_STATUSES, IngestionTask, OutboxEvent


@dataclass(frozen=True)
class PruneResult:
    tasks: int
    events: int
    artifacts: int = 0


def ingestion_history_prune(*, older_than: timedelta, batch: int = 1000) -> PruneResult:
    """Delete finished tasks and delivered outbox events older than `older_than`,
    and the stage outputs no task can resume from (`artifacts.py`), whatever
    their age.

    The latest task of each document stays, whatever its age: it is the
    document's current ingestion state.
    """
    cutoff = timezone.now() - older_than
    newer_sibling = IngestionTask.objects.filter(
        document_id=OuterRef("document_id"), created_at__gt=OuterRef("created_at")
    )
    old_tasks = IngestionTask.objects.filter(
        status__in=FINISHED_STATUSES, finished_at__lt=cutoff
    ).filter(Exists(newer_sibling))
    old_events = OutboxEvent.objects.filter(
        delivered_at__isnull=False, delivered_at__lt=cutoff
    )
    return PruneResult(
        tasks=_delete_in_batches(old_tasks, batch),
        events=_delete_in_batches(old_events, batch),
        artifacts=orphan_artifacts_prune(),
    )


def _delete_in_batches(queryset: QuerySet[Model], batch: int) -> int:
    deleted = 0
    while ids := list(queryset.values_list("pk", flat=True)[:batch]):
        count, _ = queryset.model.objects.filter(pk__in=ids).delete()
        deleted += count
    return deleted
