"""Approximate vector indexes, built in the background for the snapshot cache:
never inside a query (minutes at a million chunks). Meanwhile the snapshot is
searched exactly, or with its old index beside exact search of the rest; the
index then goes to whatever version is current by then (keys are mapped to rows
by chunk). With shared snapshots one process of the host builds and stores it;
the others look for it every `INDEX_POLL_SECONDS` and take it up.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

import numpy as np
from django.conf import settings

from retrieval.embeddings import get_embedder

from . import files, vector_index
from .snapshot import Snapshot

# How often a snapshot that needs an index looks whether another process of the
# host has stored one.
INDEX_POLL_SECONDS = 2.0

# Gives an index whose key k stands for the chunk `chunk_ids[k]` to the knowledge
# base's current snapshot; returns that snapshot (None: gone).
HandOver = Callable[[str, np.ndarray, vector_index.Approximate], Snapshot | None]
# The cache's `_locked`: its locks of a knowledge base, in their order.
Locked = Callable[..., AbstractContextManager[None]]


def wants_index(snapshot: Snapshot) -> bool:
    return snapshot.size >= settings.SEARCH_ANN_MIN_CHUNKS and vector_index.due(
        snapshot.approximate, snapshot.size
    )


def _vectors_made_by() -> str:
    embedder = get_embedder()
    return f"{embedder.name}-{embedder.dimension}"


def build(
    snapshot: Snapshot, root: Path | None, locked: Locked, hand_over: HandOver
) -> None:
    """An index over the rows `snapshot` searches, handed over; with `root`,
    built by one process of the host and stored for the others. Until it is
    handed over the vector list is searched exactly (a build that fails is
    logged by `Background`, and tried again by the next query that needs it)."""
    knowledge_base_id = snapshot.knowledge_base_id
    if root is None:
        hand_over(knowledge_base_id, *_built(snapshot))
        return
    held = files.lock(root, knowledge_base_id, "index", wait=False)
    if held is None:
        return  # another process of the host builds it: taken up later
    with held:
        files.remove_index_leftovers(root, knowledge_base_id)
        chunk_ids, built = _built(snapshot)
        folder = files.folder(root, knowledge_base_id)
        with locked(knowledge_base_id, process=False, root=root):
            file = vector_index.store(built, folder)
            files.save_index(
                root, knowledge_base_id, file, chunk_ids, _vectors_made_by()
            )
            files.prune_indexes(root, knowledge_base_id)
    # Served from the stored file, mapped: one copy in memory for the host.
    stored = vector_index.opened(folder / file, built.rows, built.uncovered)
    hand_over(knowledge_base_id, chunk_ids, stored)


def _built(snapshot: Snapshot) -> tuple[np.ndarray, vector_index.Approximate]:
    """The chunk each key stands for, and an index over the rows searched."""
    rows = np.flatnonzero(snapshot.live)
    built = vector_index.build(
        snapshot.matrix, appended=snapshot.appended_matrix, rows=rows
    )
    return np.asarray(snapshot.chunk_ids)[rows], built


def taken_up(root: Path, snapshot: Snapshot, hand_over: HandOver) -> Snapshot:
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
    return hand_over(knowledge_base_id, chunk_ids, stored) or snapshot
