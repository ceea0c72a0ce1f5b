"""The snapshot backend behind the search seam (`retrieval.search_backends`)."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Mapping, Sequence

import numpy as np

from retrieval.search_backends import Candidate, Health
from retrieval.terms import term_hash

from . import bm25_native, warmup
from .cache import SnapshotCache, snapshot_cache
from .snapshot import Snapshot


class SnapshotBackend:
    def __init__(self, cache: SnapshotCache | None = None) -> None:
        # The process's cache unless given one (a test's "other process").
        self.cache = cache if cache is not None else snapshot_cache

    def searcher(
        self,
        knowledge_base_ids: Sequence[str],
        versions: Mapping[str, int] | None = None,
    ) -> SnapshotSearcher:
        knowledge_base_ids = list(knowledge_base_ids)
        snapshots = self.cache.snapshots(knowledge_base_ids, versions)
        return SnapshotSearcher(snapshots, knowledge_base_ids)

    def published(self, knowledge_base_id: str, document_id: object) -> None:
        """Nothing to do: the next query sees the new `index_version`."""

    def withdrawn(self, knowledge_base_id: str, document_id: object) -> None:
        """Nothing to do: the next query sees the new `index_version`."""

    def discard(self, knowledge_base_id: str) -> None:
        self.cache.discard(knowledge_base_id)

    def keyword_scorer(self) -> str:
        """ "ok" where the compiled top-k scores keywords, else "numpy"."""
        return "ok" if bm25_native.available() else "numpy"

    def health(self) -> Health:
        state = warmup.warmup.state
        if state == "warming":
            return Health("warming")
        return Health("ready", state)  # "ok", "cold" (warm-up failed) or "off"


class _Statistics:
    """Term statistics summed over the snapshots searched."""

    def __init__(self, snapshots: list[Snapshot]) -> None:
        self.snapshots = snapshots
        self.size = sum(snapshot.searched for snapshot in snapshots)

    def frequency(self, term: str) -> int:
        hashed = term_hash(term)
        return sum(snapshot.frequency(hashed) for snapshot in self.snapshots)


class SnapshotSearcher:
    """One query's snapshots: each one a consistent version of its knowledge base."""

    def __init__(
        self, snapshots: list[Snapshot], knowledge_base_ids: list[str]
    ) -> None:
        self.snapshots = snapshots
        self.knowledge_base_ids = knowledge_base_ids
        self.statistics = _Statistics(snapshots)

    def keyword(self, terms: Sequence[str], limit: int) -> list[Candidate]:
        return _best(
            self.snapshots,
            [snapshot.keyword_top(list(terms), limit) for snapshot in self.snapshots],
            limit,
        )

    def nearest(self, vector: np.ndarray, limit: int) -> list[Candidate]:
        return _best(
            self.snapshots,
            [snapshot.nearest(vector, limit) for snapshot in self.snapshots],
            limit,
        )

    def keyword_scores(
        self, terms: Sequence[str], candidates: Sequence[Candidate]
    ) -> list[float]:
        scores: dict[int, float] = {}
        for snapshot in self.snapshots:
            mine = [
                candidate
                for candidate in candidates
                if candidate.knowledge_base_id == snapshot.knowledge_base_id
            ]
            rows = np.array([candidate.locator for candidate in mine])
            found = snapshot.bm25_at(list(terms), rows)
            for candidate, score in zip(mine, found, strict=True):
                scores[candidate.chunk_id] = float(score)
        return [scores[candidate.chunk_id] for candidate in candidates]


def _best(
    snapshots: list[Snapshot],
    found: list[tuple[np.ndarray, np.ndarray]],
    limit: int,
) -> list[Candidate]:
    """The best `limit` rows with a positive score, over every snapshot."""
    candidates = []
    for snapshot, (rows, scores) in zip(snapshots, found, strict=True):
        kept = scores > 0
        rows, scores = rows[kept], scores[kept]
        # Gathered a column at a time: an element of a mapped array costs a
        # Python call.
        columns = zip(
            rows.tolist(),
            scores.tolist(),
            snapshot.chunk_ids[rows].tolist(),
            snapshot.document_ids[rows].tolist(),
            snapshot.ordinals[rows].tolist(),
            snapshot.folds[rows].tolist(),
            strict=True,
        )
        candidates += [
            Candidate(
                chunk_id=chunk_id,
                document_id=_document_id(document_id),
                knowledge_base_id=snapshot.knowledge_base_id,
                ordinal=ordinal,
                score=score,
                locator=row,
                folds=bool(folds),
            )
            for row, score, chunk_id, document_id, ordinal, folds in columns
        ]
    candidates.sort(key=lambda candidate: (-candidate.score, candidate.chunk_id))
    return candidates[:limit]


@functools.lru_cache(maxsize=1 << 16)
def _document_id(stored: bytes) -> uuid.UUID:
    """A document's UUID from its 16 stored bytes: the same documents come back
    query after query, and making a UUID costs more than finding it."""
    return uuid.UUID(bytes=stored)
