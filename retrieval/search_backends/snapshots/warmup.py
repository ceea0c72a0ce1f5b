"""Search snapshots built in the background when a web process starts.

With `SEARCH_WARMUP` on, the WSGI application (`config/wsgi.py`) starts one thread
that builds the snapshot of every knowledge base, so the first question after a
deploy or restart does not wait for it. `/api/health/ready` says `warming` until
the thread is done. A query that arrives first waits for the build under way
(the snapshot cache's lock per knowledge base), never starts a second one. If the
warm-up fails (the database is down), snapshots are built by the first queries,
as without it.
"""

from __future__ import annotations

import logging
import threading
import time

from django.db import connection

from documents.models import KnowledgeBase

from .cache import snapshot_cache

logger = logging.getLogger(__name__)


class Warmup:
    IDLE, WARMING, DONE, FAILED = "idle", "warming", "done", "failed"

    def __init__(self) -> None:
        self.state = self.IDLE
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the warm-up thread, once per process."""
        with self._lock:
            if self._thread is not None:
                return
            self.state = self.WARMING
            self._thread = threading.Thread(
                target=self._run, name="search-warmup", daemon=True
            )
            self._thread.start()

    def wait(self, timeout: float | None = None) -> bool:
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
        return self.state in (self.DONE, self.FAILED)

    def _run(self) -> None:
        started = time.monotonic()
        try:
            knowledge_bases = list(
                KnowledgeBase.objects.order_by("id").values_list("id", flat=True)
            )
            chunks = 0
            for knowledge_base_id in knowledge_bases:
                chunks += sum(
                    s.searched for s in snapshot_cache.snapshots([knowledge_base_id])
                )
        except Exception:
            self.state = self.FAILED
            logger.exception("search warm-up failed; snapshots build at first query")
        else:
            self.state = self.DONE
            logger.info(
                "search warm-up done knowledge_bases=%s chunks=%s seconds=%.2f",
                len(knowledge_bases),
                chunks,
                time.monotonic() - started,
            )
        finally:
            connection.close()

    def check(self) -> str:
        """For `/api/health/ready` (`SnapshotBackend.health`)."""
        if self.state == self.WARMING:
            return "warming"
        if self.state == self.FAILED:
            return "cold"  # the first queries build the snapshots
        return "ok" if self.state == self.DONE else "off"


warmup = Warmup()
