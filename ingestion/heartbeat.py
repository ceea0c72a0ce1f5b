"""Keeping a claim's lease alive while the pipeline runs, from a thread of its own.

The thread has its own database connection, so a renewal never waits for the
pipeline (a slow parse, a long transaction). A renewal that finds the task gone sets
`lost`, and the pipeline stops at its next checkpoint.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from django.conf import settings
from django.db import DatabaseError, connection

from . import claims
from .claims import TaskClaim
from .outage import close_connection

logger = logging.getLogger(__name__)


class Heartbeat:
    """Renews one claim's lease every `interval` seconds until the block ends."""

    def __init__(
        self,
        claim: TaskClaim,
        *,
        interval: float,
        renew: Callable[[TaskClaim], bool] | None = None,
    ) -> None:
        self.claim = claim
        self.interval = interval
        self.renew = renew or claims.ingestion_task_renew_lease
        self.lost = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name=f"heartbeat-{claim.task_id}", daemon=True
        )

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join(timeout=min(self.interval, 5))

    def _run(self) -> None:
        try:
            while not self._stop.wait(self.interval):
                try:
                    held = self.renew(self.claim)
                except DatabaseError as error:
                    logger.warning(
                        "lease renewal failed task=%s (%s)",
                        self.claim.task_id,
                        type(error).__name__,
                    )
                    close_connection()
                    continue
                if not held:
                    self.lost.set()
                    return
        finally:
            close_connection()


class NoHeartbeat:
    """Inside a caller's transaction (tests driving the worker) no other connection
    can see the task, so there is nothing a heartbeat thread could renew."""

    def __init__(self) -> None:
        self.lost = threading.Event()

    def __enter__(self) -> NoHeartbeat:
        return self

    def __exit__(self, *exc_info: object) -> None:
        pass


def heartbeat_for(
    claim: TaskClaim,
    *,
    renew: Callable[[TaskClaim], bool] | None = None,
) -> Heartbeat | NoHeartbeat:
    """A renewal every third of the lease, so one late renewal loses nothing;
    `renew` may renew more than `claim` (a batch's claims share its token)."""
    if connection.in_atomic_block:
        return NoHeartbeat()
    return Heartbeat(claim, interval=settings.INGESTION_LEASE_SECONDS / 3, renew=renew)
