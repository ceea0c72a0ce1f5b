"""Work the snapshot cache does beside the queries, in threads: at most one per
key (a kind of work and a knowledge base). Work asked for while its key's
thread runs is dropped, or queued to run next in that thread (the newest
queued replaces an older one). Work that fails is logged; the queries go on
with what they have and the next one that needs it asks again."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

logger = logging.getLogger(__name__)

Key = tuple[str, str]  # (kind of work, knowledge base id)
Work = Callable[[], None]


class Background:
    def __init__(self) -> None:
        self._threads: dict[Key, threading.Thread] = {}
        self._queued: dict[Key, Work] = {}
        self._guard = threading.Lock()

    def start(self, key: Key, work: Work, *, queue: bool = False) -> None:
        """Run `work` in a thread of its own, unless one runs for `key`: then
        `work` runs next in that thread when `queue`, else not at all."""
        with self._guard:
            if key in self._threads:
                if queue:
                    self._queued[key] = work
                return
            kind, knowledge_base_id = key
            thread = threading.Thread(
                target=self._run,
                args=(key, work),
                name=f"search-{kind}-{knowledge_base_id}",
                daemon=True,
            )
            self._threads[key] = thread
        thread.start()

    def running(self, kind: str, knowledge_base_id: str | None = None) -> bool:
        """Whether work of `kind` runs (for that knowledge base, if named)."""
        with self._guard:
            return any(
                key[0] == kind and knowledge_base_id in (None, key[1])
                for key in self._threads
            )

    def wait(self, kind: str | None = None, timeout: float | None = None) -> None:
        """Until the work of `kind` (all of it when None) under way now is done,
        with what is queued behind it."""
        with self._guard:
            threads = [t for key, t in self._threads.items() if kind in (None, key[0])]
        for thread in threads:
            thread.join(timeout)

    def _run(self, key: Key, work: Work | None) -> None:
        kind, knowledge_base_id = key
        while work is not None:
            started = time.monotonic()
            try:
                work()
            except Exception:
                logger.exception(
                    "search %s of knowledge base %s failed; searches go on without it",
                    kind,
                    knowledge_base_id,
                )
            else:
                logger.info(
                    "search %s done knowledge_base=%s seconds=%.2f",
                    kind,
                    knowledge_base_id,
                    time.monotonic() - started,
                )
            with self._guard:
                work = self._queued.pop(key, None)
                if work is None:
                    del self._threads[key]
