"""The outbox relay: events written inside a transaction, published after it committed.

    every pass:
        read undelivered events in id order (one batch); an event whose
        transaction has not committed is not visible yet: that is "after commit"
        publish each to every publisher (NOTIFY on PostgreSQL; LPUSH to Redis
        when OUTBOX_REDIS_URL is set)
        mark the published ones delivered
        a failed publish counts in `attempts`/`last_error`; that event and the
        later events of the same task wait (1, 2, 4 ... 60 s) and are tried again,
        in order

Delivery is at least once: a relay that stops between publishing and marking
publishes again. Workers only treat an event as a hint to claim, so a duplicate
costs one empty claim and the database stays the only source of truth.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from django.conf import settings
from django.db import connection

from . import deliveries
from .backoff import capped_exponential
from .models import OutboxEvent
from .outage import CONNECTION_ERRORS, DatabaseOutage, refresh_connections
from .wakeups import CHANNEL

logger = logging.getLogger(__name__)

# Wake-ups nobody popped are worthless once this many newer ones are queued.
REDIS_LIST_LIMIT = 10_000


class Publisher(Protocol):
    name: str

    def publish(self, event: OutboxEvent) -> None: ...


def _task_id(event: OutboxEvent) -> str:
    return str(event.payload.get("task_id", "")) if event.payload else ""


class PostgresNotify:
    """NOTIFY on the Django connection, in autocommit: sent at once."""

    name = "notify"

    def publish(self, event: OutboxEvent) -> None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_notify(%s, %s)", [CHANNEL, _task_id(event)])


class RedisPush:
    """LPUSH the task id; each `--wake redis` worker BRPOPs one."""

    name = "redis"

    def __init__(self, url: str, key: str) -> None:
        import redis

        self.key = key
        self.client = redis.Redis.from_url(
            url, socket_connect_timeout=5, socket_timeout=5
        )

    def publish(self, event: OutboxEvent) -> None:
        pipe = self.client.pipeline()
        pipe.lpush(self.key, _task_id(event))
        pipe.ltrim(self.key, 0, REDIS_LIST_LIMIT - 1)
        pipe.execute()


def default_publishers() -> list[Publisher]:
    publishers: list[Publisher] = []
    if connection.vendor == "postgresql":
        publishers.append(PostgresNotify())
    if settings.OUTBOX_REDIS_URL:
        publishers.append(
            RedisPush(settings.OUTBOX_REDIS_URL, settings.OUTBOX_REDIS_KEY)
        )
    return publishers


@dataclass
class RelayStats:
    delivered: int = 0
    failed: int = 0


class Relay:
    def __init__(
        self,
        *,
        publishers: list[Publisher] | None = None,
        batch_size: int = 100,
        retry_delays: tuple[float, float] = (1.0, 60.0),
        write: Callable[[str], None] = print,
    ) -> None:
        self.publishers = default_publishers() if publishers is None else publishers
        self.batch_size = batch_size
        self.write = write
        self.stats = RelayStats()
        self.stopping = threading.Event()
        self.outage = DatabaseOutage(name="relay", write=write)
        self.retry_delays = retry_delays
        self._retry_at: dict[int, float] = {}

    def install_signal_handlers(self) -> None:
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, self._on_signal)

    def _on_signal(self, signum, frame) -> None:
        self.write(f"stopping relay signal={signal.Signals(signum).name}")
        self.stopping.set()

    def run(self, *, loop: bool = False, interval: float = 0.1) -> RelayStats:
        """One pass after another until nothing is left (or until stopped, --loop)."""
        while not self.stopping.is_set():
            try:
                refresh_connections()
                delivered = self.deliver_batch()
            except CONNECTION_ERRORS as error:
                if not loop:
                    raise
                self.outage.wait_after(error, self.stopping)
                continue
            self.outage.recovered()
            if delivered == self.batch_size:
                continue  # a full batch: more may be waiting
            if not loop:
                break
            self.stopping.wait(interval)
        return self.stats

    def deliver_batch(self) -> int:
        """Publish one batch in id order; return how many were delivered."""
        undelivered = OutboxEvent.objects.undelivered().order_by("id")
        events = list(undelivered[: self.batch_size])
        published: list[int] = []
        held_back: set[str] = set()
        failed = 0
        now = time.monotonic()
        for event in events:
            task_id = _task_id(event)
            if task_id in held_back:
                continue  # an earlier event of this task is waiting: keep the order
            if self._retry_at.get(event.pk, 0.0) > now:
                held_back.add(task_id)
                continue
            error = self._publish(event)
            if error is None:
                published.append(event.pk)
                self._retry_at.pop(event.pk, None)
                continue
            failed += 1
            held_back.add(task_id)
            deliveries.outbox_event_record_failure(event_id=event.pk, error=error)
            base, cap = self.retry_delays
            # `attempts` counts the failures before this one.
            delay = capped_exponential(event.attempts + 1, base=base, cap=cap)
            self._retry_at[event.pk] = now + delay
            logger.warning("outbox publish failed event=%s (%s)", event.pk, error)
        delivered = (
            deliveries.outbox_events_mark_delivered(event_ids=published)
            if published
            else 0
        )
        self.stats.delivered += delivered
        self.stats.failed += failed
        if delivered or failed:
            self.write(f"relayed delivered={delivered} failed={failed}")
        return delivered

    def _publish(self, event: OutboxEvent) -> str | None:
        for publisher in self.publishers:
            try:
                publisher.publish(event)
            except CONNECTION_ERRORS:
                raise  # the database itself is gone: the outage loop handles it
            except Exception as error:
                return f"{publisher.name}: {type(error).__name__}: {error}"
        return None
