"""Approximate vector indexes, built in the background for the snapshot cache.

Past `SEARCH_ANN_MIN_CHUNKS` a snapshot's vector list comes from an approximate
index (`vector_index`), which takes minutes to build at a million chunks, so it
is never built inside a query. A snapshot without one, or whose index is too far
behind, is searched exactly (or with the old index beside exact search of the
rest) while one thread builds it; the thread then hands it to the knowledge
base's snapshot of the moment, whatever version that is by then (keys are mapped
to rows by chunk). With shared snapshots one process of the host builds it
(`files.index_lock`) and stores it; the others look for it every
`INDEX_POLL_SECONDS` and take it up.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from django.conf import settings

from retrieval.embeddings import get_embedder

from . import files, vector_index
from .snapshot import Snapshot

logger = logging.getLogger(__name__)

# How often a snapshot that needs an index looks whether another process of the
# host has stored one.
INDEX_POLL_SECONDS = 2.0

HandOver = Callable[[str, np.ndarray, vector_index.Approximate], Snapshot | None]


def wants_index(snapshot: Snapshot) -> bool:
    return snapshot.size >= settings.SEARCH_ANN_MIN_CHUNKS and vector_index.due(
        snapshot.approximate, snapshot.size
    )


def _vectors_made_by() -> str:
    embedder = get_embedder()
    return f"{embedder.name}-{embedder.dimension}"


class IndexBuilds:
    """The index builds of one process. `hand_over(knowledge_base_id, chunk_ids,
    index)` gives an index whose key k stands for the chunk `chunk_ids[k]` to the
    knowledge base's current snapshot and returns that snapshot (None: gone)."""

    def __init__(self, hand_over: HandOver) -> None:
        self._hand_over = hand_over
        self._threads: dict[str, threading.Thread] = {}
        self._next_look: dict[str, float] = {}
        self._guard = threading.Lock()

    def wanted(self, snapshot: Snapshot, root: Path | None) -> Snapshot:
        """The snapshot with the index another process of the host has stored,
        if there is one; otherwise a build starts in the background and the
        snapshot serves as it is."""
        knowledge_base_id = snapshot.knowledge_base_id
        now = time.monotonic()
        with self._guard:
            if knowledge_base_id in self._threads or now < self._next_look.get(
                knowledge_base_id, 0.0
            ):
                return snapshot
            self._next_look[knowledge_base_id] = now + INDEX_POLL_SECONDS
        if root is not None:
            snapshot = self._stored_taken_up(root, snapshot)
            if not wants_index(snapshot):
                return snapshot
        with self._guard:
            if knowledge_base_id in self._threads:
                return snapshot
            thread = threading.Thread(
                target=self._build,
                args=(snapshot, root),
                name=f"search-index-{knowledge_base_id}",
                daemon=True,
            )
            self._threads[knowledge_base_id] = thread
        thread.start()
        return snapshot

    def look_again(self, knowledge_base_id: str) -> None:
        """A new version: look for (or build) its index at its first query."""
        with self._guard:
            self._next_look.pop(knowledge_base_id, None)

    def clear(self) -> None:
        with self._guard:
            self._next_look.clear()

    def building(self) -> bool:
        with self._guard:
            return bool(self._threads)

    def wait(self, timeout: float | None = None) -> None:
        """Until the indexes being built are handed over."""
        with self._guard:
            threads = list(self._threads.values())
        for thread in threads:
            thread.join(timeout)

    def _build(self, snapshot: Snapshot, root: Path | None) -> None:
        knowledge_base_id = snapshot.knowledge_base_id
        try:
            if root is None:
                built, chunk_ids = self._built(snapshot)
                self._hand_over(knowledge_base_id, chunk_ids, built)
            else:
                self._build_shared(snapshot, root)
        except Exception:
            logger.exception(
                "approximate index of knowledge base %s not built; its vector "
                "list is searched exactly until the next try",
                knowledge_base_id,
            )
        finally:
            with self._guard:
                self._threads.pop(knowledge_base_id, None)

    def _build_shared(self, snapshot: Snapshot, root: Path) -> None:
        knowledge_base_id = snapshot.knowledge_base_id
        with files.index_lock(root, knowledge_base_id) as ours:
            if not ours:
                return  # another process of the host builds it: taken up later
            files.remove_index_leftovers(root, knowledge_base_id)
            built, chunk_ids = self._built(snapshot)
            with files.build_lock(root, knowledge_base_id):
                file = vector_index.store(built, files.folder(root, knowledge_base_id))
                files.save_index(
                    root,
                    knowledge_base_id,
                    file,
                    chunk_ids,
                    _vectors_made_by(),
                )
                files.prune_indexes(root, knowledge_base_id)
        # Served from the stored file, mapped: one copy in memory for the host.
        stored = vector_index.opened(
            files.folder(root, knowledge_base_id) / file,
            built.rows,
            built.uncovered,
        )
        self._hand_over(knowledge_base_id, chunk_ids, stored)

    @staticmethod
    def _built(snapshot: Snapshot) -> tuple[vector_index.Approximate, np.ndarray]:
        """An index over the rows the snapshot searches, and the chunk each of
        its keys stands for."""
        started = time.monotonic()
        if snapshot.segmented:
            rows = np.setdiff1d(np.arange(snapshot.size), snapshot.removed)
            built = vector_index.build(
                snapshot.matrix, appended=snapshot.appended_matrix, rows=rows
            )
            chunk_ids = np.asarray(snapshot.chunk_ids)[rows]
        else:
            built = vector_index.build(np.asarray(snapshot.matrix))
            chunk_ids = snapshot.chunk_ids
        logger.info(
            "approximate index built knowledge_base=%s version=%s chunks=%s "
            "seconds=%.1f",
            snapshot.knowledge_base_id,
            snapshot.version,
            snapshot.size,
            time.monotonic() - started,
        )
        return built, chunk_ids

    def _stored_taken_up(self, root: Path, snapshot: Snapshot) -> Snapshot:
        """The current snapshot with the host's newest stored index, when that
        is another one than the snapshot's own."""
        knowledge_base_id = snapshot.knowledge_base_id
        file, chunk_ids, made_by = files.newest_index(root, knowledge_base_id)
        own = snapshot.approximate.file if snapshot.approximate else ""
        if not file or file == own or made_by != _vectors_made_by():
            return snapshot
        try:
            stored = vector_index.opened(
                files.folder(root, knowledge_base_id) / file,
                np.arange(len(chunk_ids), dtype=np.int64),
                np.zeros(0, dtype=np.int64),
            )
        except OSError:
            return snapshot  # replaced meanwhile: the next look reads the newer one
        return self._hand_over(knowledge_base_id, chunk_ids, stored) or snapshot
