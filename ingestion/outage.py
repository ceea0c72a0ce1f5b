"""Riding out a database outage in long-running loops (worker, outbox relay).

A `--loop` process must survive a database restart: on a connection error it logs,
drops its connection, waits 1, 2, 4 ... up to 30 s, and tries again; the first
success resets the delay.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable

from django.db import (
    DatabaseError,
    InterfaceError,
    OperationalError,
    close_old_connections,
    connection,
)

from .backoff import capped_exponential

logger = logging.getLogger(__name__)

# A lost or refused connection: the work itself may well succeed later.
CONNECTION_ERRORS = (OperationalError, InterfaceError)


def close_connection() -> None:
    with contextlib.suppress(DatabaseError):
        connection.close()


def refresh_connections() -> None:
    """Drop broken or expired connections between units of work.

    Not inside a caller's transaction (tests driving a loop in-process), where
    closing would end the caller's transaction.
    """
    if not connection.in_atomic_block:
        close_old_connections()


class DatabaseOutage:
    def __init__(
        self,
        *,
        name: str,
        delays: tuple[float, float] = (1.0, 30.0),
        write: Callable[[str], None] = print,
    ) -> None:
        self.name = name
        self.base, self.cap = delays
        self.write = write
        self.failures = 0

    def wait_after(self, error: Exception, stop: threading.Event) -> None:
        """Log the failure, drop the connection, sleep (or until `stop`)."""
        self.failures += 1
        delay = capped_exponential(self.failures, base=self.base, cap=self.cap)
        logger.warning(
            "database unavailable %s (%s); retrying in %.1f s",
            self.name,
            type(error).__name__,
            delay,
        )
        self.write(
            f"database unavailable {self.name} error={type(error).__name__} "
            f"retry_in={delay:g}s"
        )
        if not connection.in_atomic_block:
            close_connection()
        stop.wait(delay)

    def recovered(self) -> None:
        if self.failures:
            logger.warning("database available again %s", self.name)
            self.write(f"database available again {self.name}")
        self.failures = 0
