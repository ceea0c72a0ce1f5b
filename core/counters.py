"""Counts that hold under concurrency: events per subject in a window, in the database.

`take(subject, limit=N, seconds=S)` counts one event if fewer than N are in the
subject's window, in one statement: an `INSERT ... ON CONFLICT DO UPDATE` whose
`WHERE` carries the limit. However many requests arrive together, at most N are
counted: PostgreSQL locks the row and checks the condition against its latest
version, SQLite runs one writer at a time. The statement's own result decides
(a row back: counted, none: refused), never a read followed by a write.

A window starts with the subject's first event and lasts S seconds; the first
event after it ends starts the next. A burst therefore never straddles a window
boundary, but around the end of a full window up to 2N can pass in a short time.

Why the database and not the cache: the default cache is the database cache,
whose `incr` is a read then a write, and a per-process cache would count apart in
each server process. Call these outside `transaction.atomic()`: inside one, the
row stays locked until the transaction ends (PostgreSQL), serialising the
subject's requests. Outside one, PostgreSQL commits them without waiting for the
disk: a count lost in a crash is harmless, and the wait was nine tenths of a
take's cost (docs/benchmarks.md, "Rate limits and login limits").
"""

from __future__ import annotations

import functools
import itertools
import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import ParamSpec, TypeVar

from django.db import connection, transaction
from django.db.models import F

from .models import Counter

# Ended windows are deleted every this many takes of a process: cheap (an index
# range) and it keeps the table to the subjects seen in the last window.
PURGE_EVERY = 1000
# A total's window: never ends (year 33658).
FOREVER = 1e12

_takes = itertools.count(1)

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _unsynced(write: Callable[_P, _R]) -> Callable[_P, _R]:
    """Run `write` in a transaction whose commit does not wait for the disk, on
    PostgreSQL and outside any transaction (it would change the outer commit)."""

    @functools.wraps(write)
    def run(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        if connection.vendor != "postgresql" or connection.in_atomic_block:
            return write(*args, **kwargs)
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit TO OFF")
            return write(*args, **kwargs)

    return run


@dataclass(frozen=True)
class Taken:
    allowed: bool
    # Events in the window, this one included when allowed.
    count: int
    # Whole seconds until the window ends (at least 1).
    retry_after: int


def _take_sql() -> str:
    """Parameters: subject, new window's end, now, now, now, limit. The `SET`
    expressions all read the row as it was, on both databases."""
    table = connection.ops.quote_name(Counter._meta.db_table)
    subject, count, ends = (
        connection.ops.quote_name(name) for name in ("subject", "count", "window_ends")
    )
    return (
        f"INSERT INTO {table} ({subject}, {count}, {ends}) VALUES (%s, 1, %s) "  # noqa: S608 - names from the model
        f"ON CONFLICT ({subject}) DO UPDATE SET "
        f"{count} = CASE WHEN {table}.{ends} <= %s THEN 1 "
        f"ELSE {table}.{count} + 1 END, "
        f"{ends} = CASE WHEN {table}.{ends} <= %s THEN excluded.{ends} "
        f"ELSE {table}.{ends} END "
        f"WHERE {table}.{ends} <= %s OR {table}.{count} < %s "
        f"RETURNING {count}, {ends}"
    )


def _seconds_until(moment: float, now: float) -> int:
    return max(1, math.ceil(moment - now))


@_unsynced
def take(subject: str, *, limit: int, seconds: float) -> Taken:
    """Count one event for `subject` unless its window already holds `limit`."""
    if next(_takes) % PURGE_EVERY == 0:
        purge()
    now = time.time()
    with connection.cursor() as cursor:
        cursor.execute(_take_sql(), [subject, now + seconds, now, now, now, limit])
        row = cursor.fetchone()
    if row is not None:
        return Taken(True, row[0], _seconds_until(row[1], now))
    current = Counter.objects.filter(subject=subject)
    count, ends = current.values_list("count", "window_ends").first() or (limit, now)
    return Taken(False, count, _seconds_until(ends, now))


@_unsynced
def give_back(subjects: Iterable[str]) -> None:
    """Uncount one event of each subject (one that turned out not to count)."""
    subjects = list(subjects)
    if subjects:
        Counter.objects.filter(
            subject__in=subjects, count__gt=0, window_ends__gt=time.time()
        ).update(count=F("count") - 1)


@_unsynced
def forget(subjects: Iterable[str]) -> None:
    Counter.objects.filter(subject__in=list(subjects)).delete()


@_unsynced
def remember(subject: str, *, seconds: float) -> None:
    """Note that `subject` happened, for `seconds` from now (see `remembered`)."""
    Counter.objects.update_or_create(
        subject=subject, defaults={"count": 1, "window_ends": time.time() + seconds}
    )


def remembered(subject: str) -> bool:
    return Counter.objects.filter(subject=subject, window_ends__gt=time.time()).exists()


def add_to_total(subject: str) -> None:
    """Add one to a total that never resets (for /metrics)."""
    take(subject, limit=2**31 - 1, seconds=FOREVER)


def totals(prefix: str) -> dict[str, int]:
    """The totals whose subject starts with `prefix`, by the rest of the subject."""
    rows = Counter.objects.filter(subject__startswith=prefix).values_list(
        "subject", "count"
    )
    return {subject.removeprefix(prefix): count for subject, count in rows}


@_unsynced
def purge() -> int:
    deleted, _ = Counter.objects.filter(window_ends__lt=time.time()).delete()
    return deleted
