"""Search snapshots built in the background when a web process starts.

With `SEARCH_WARMUP` on, the WSGI application (`config/wsgi.py`) starts one thread
that builds the snapshot of every knowledge base, so the first question after a
deploy or restart does not wait for it; `/api/health/ready` says `warming` until
it is done. A query that arrives first waits for the build under way (the cache's
lock of the knowledge base), never starts a second one. If the warm-up fails
(the database is down), the first queries build the snapshots.
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
    # The readiness word of each state: "cold", the first queries build them.
    OFF, WARMING, DONE, FAILED = "off", "warming", "ok", "cold"

    def __init__(self) -> None:
        self.state = self.OFF
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        """Start the warm-up thread, once per process."""
        with self._lock:
            if self._thread is None:
                self.state = self.WARMING
                self._thread = threading.Thread(
                    target=self._run, name="search-warmup", daemon=True
                )
                self._thread.start()

    def wait(self, timeout: float | None = None) -> bool:
        if self._thread is not None:
            self._thread.join(timeout)
        return self.state in (self.DONE, self.FAILED)

    def _run(self) -> None:
        started, chunks = time.monotonic(), 0
        try:
            ids = list(
                KnowledgeBase.objects.order_by("id").values_list("id", flat=True)
            )
            for knowledge_base_id in ids:
                snapshots = snapshot_cache.snapshots([knowledge_base_id])
                chunks += sum(snapshot.searched for snapshot in snapshots)
        except Exception:
            self.state = self.FAILED
            logger.exception("search warm-up failed; snapshots build at first query")
        else:
            self.state = self.DONE
            logger.info(
                "search warm-up done knowledge_bases=%s chunks=%s seconds=%.2f",
                len(ids),
                chunks,
                time.monotonic() - started,
            )
        finally:
            connection.close()


warmup = Warmup()
