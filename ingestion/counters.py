"""Worker-side counters for `/metrics` (claims, missed claims, leases reclaimed,
turns yielded)."""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from .models import WorkerCounter

CLAIMS = "claims"
MISSED_CLAIMS = "missed_claims"
LEASES_RECLAIMED = "leases_reclaimed"
TURNS_YIELDED = "turns_yielded"


def worker_counter_add(name: str, *, worker_id: str, amount: int = 1) -> None:
    """Add to this worker's row (created on first use); moves with F()."""
    if amount <= 0:
        return
    rows = WorkerCounter.objects.filter(name=name, worker_id=worker_id)
    if rows.update(value=F("value") + amount, updated_at=timezone.now()):
        return
    try:
        with transaction.atomic():
            WorkerCounter.objects.create(name=name, worker_id=worker_id, value=amount)
    except IntegrityError:  # created meanwhile by the same worker id elsewhere
        rows.update(value=F("value") + amount, updated_at=timezone.now())
