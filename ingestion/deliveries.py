"""The outbox relay's writes: events marked delivered, failed publishes counted."""

from __future__ import annotations

from django.db.models import F
from django.utils import timezone

from .models import ERROR_DETAIL_LIMIT, OutboxEvent


def outbox_events_mark_delivered(*, event_ids: list[int]) -> int:
    """Mark published events delivered (those no other relay marked first)."""
    return (
        OutboxEvent.objects.undelivered()
        .filter(pk__in=event_ids)
        .update(delivered_at=timezone.now(), attempts=F("attempts") + 1, last_error="")
    )


def outbox_event_record_failure(*, event_id: int, error: str) -> None:
    """Count a failed publish; the event stays undelivered and is tried again."""
    OutboxEvent.objects.undelivered().filter(pk=event_id).update(
        attempts=F("attempts") + 1, last_error=error[:ERROR_DETAIL_LIMIT]
    )
