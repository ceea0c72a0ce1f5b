"""The shared mechanics of our state machines: a table row and its conditional update.

Each app keeps its own table in `<app>/transitions.py`; this module only knows
how to apply one row of such a table as a single filtered `.update()`, so the
database (not Python) decides whether the move happened.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet
from django.utils import timezone


@dataclass(frozen=True)
class Transition:
    sources: frozenset[str]
    target: str


def table(**rows: tuple[set[str], str]) -> dict[str, Transition]:
    return {
        action: Transition(frozenset(sources), target)
        for action, (sources, target) in rows.items()
    }


def apply_conditional_update(
    queryset: QuerySet[Any], transition: Transition, **updates: object
) -> int:
    """Move the rows of `queryset` that are in an allowed source state; count them."""
    return queryset.filter(status__in=transition.sources).update(
        status=transition.target, updated_at=timezone.now(), **updates
    )
