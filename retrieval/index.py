"""Per-process, per-knowledge-base search snapshots of the published chunks.

A snapshot holds, for one knowledge base, the rows needed to score every published
chunk without touching the database: the embedding matrix (float32) and a BM25
inverted index (postings sorted by term). It is tied to the knowledge base's
`index_version`, which grows on every publish and archive; each query reads the
current versions (one small query) and refreshes stale snapshots first, so a publish
in any process is visible to every process on its next query.

Refreshing is incremental: chunks of documents no longer published are dropped
from the arrays, and only chunks of newly published documents are read and
tokenized. Only published chunks ever enter a snapshot, so visibility is decided
before anything is scored.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from documents.models import DocumentStatus, KnowledgeBase

from .embeddings import from_bytes, get_embedder
from .models import Chunk
from .tokens import folds, keyword_tokens

BM25_K1 = 1.2
BM25_B = 0.75


@dataclass
class Postings:
    """A BM25 inverted index in flat arrays: term t owns rows[starts[t]:starts[t+1]]."""

    vocabulary: dict[str, int] = field(default_factory=dict)
    starts: np.ndarray = field(default_factory=lambda: np.zeros(1, dtype=np.int64))
    rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    counts: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.uint16))

    @classmethod
    def build(cls, vocabulary, term_ids, rows, counts) -> Postings:
        order = np.argsort(term_ids, kind="stable")
        term_ids = term_ids[order]
        starts = np.zeros(len(vocabulary) + 1, dtype=np.int64)
        np.cumsum(np.bincount(term_ids, minlength=len(vocabulary)), out=starts[1:])
        return cls(vocabulary, starts, rows[order], counts[order])

    def entries(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(term id, row, count) of every posting."""
        term_ids = np.repeat(
            np.arange(len(self.vocabulary), dtype=np.int32), np.diff(self.starts)
        )
        return term_ids, self.rows, self.counts

    def nbytes(self) -> int:
        return self.starts.nbytes + self.rows.nbytes + self.counts.nbytes


@dataclass
class Snapshot:
    knowledge_base_id: str
    version: int
    dimension: int
    chunk_ids: np.ndarray  # int64, one per row
    document_ids: np.ndarray  # object (uuid), one per row
    ordinals: np.ndarray  # int32
    lengths: np.ndarray  # float32 token count per row
    # bool per row: its text changes in simplified script, so the rerank converts
    # it (the others, most rows, it reads as they are)
    folds: np.ndarray
    matrix: np.ndarray  # float32 (rows, dimension)
    postings: Postings

    @property
    def size(self) -> int:
        return len(self.chunk_ids)

    def nbytes(self) -> int:
        """Memory held by the arrays of this snapshot."""
        return (
            self.chunk_ids.nbytes
            + self.document_ids.nbytes
            + self.ordinals.nbytes
            + self.lengths.nbytes
            + self.folds.nbytes
            + self.matrix.nbytes
            + self.postings.nbytes()
        )

    def bm25(self, query_tokens: list[str]) -> np.ndarray:
        """BM25 score of every row (zeros where no query term occurs)."""
        scores = np.zeros(self.size, dtype=np.float32)
        if not self.size:
            return scores
        average_length = float(self.lengths.mean()) or 1.0
        for term, query_count in Counter(query_tokens).items():
            term_id = self.postings.vocabulary.get(term)
            if term_id is None:
                continue
            start, end = self.postings.starts[term_id : term_id + 2]
            rows = self.postings.rows[start:end]
            counts = self.postings.counts[start:end].astype(np.float32)
            document_frequency = end - start
            idf = np.log1p(
                (self.size - document_frequency + 0.5) / (document_frequency + 0.5)
            )
            norm = BM25_K1 * (1 - BM25_B + BM25_B * self.lengths[rows] / average_length)
            scores[rows] += query_count * idf * counts * (BM25_K1 + 1) / (counts + norm)
        return scores

    def cosine(self, query_vector: np.ndarray) -> np.ndarray:
        if not self.size:
            return np.zeros(0, dtype=np.float32)
        return self.matrix @ query_vector.astype(np.float32)


def _empty_snapshot(knowledge_base_id: str, version: int, dimension: int) -> Snapshot:
    return Snapshot(
        knowledge_base_id=knowledge_base_id,
        version=version,
        dimension=dimension,
        chunk_ids=np.zeros(0, dtype=np.int64),
        document_ids=np.zeros(0, dtype=object),
        ordinals=np.zeros(0, dtype=np.int32),
        lengths=np.zeros(0, dtype=np.float32),
        folds=np.zeros(0, dtype=bool),
        matrix=np.zeros((0, dimension), dtype=np.float32),
        postings=Postings(),
    )


def _refreshed(snapshot: Snapshot, version: int) -> Snapshot:
    """A new snapshot at `version`: drop unpublished documents, add new ones."""
    published = set(
        Chunk.objects.filter(
            knowledge_base_id=snapshot.knowledge_base_id,
            document__status=DocumentStatus.PUBLISHED,
        )
        .values_list("document_id", flat=True)
        .distinct()
    )
    keep = np.fromiter(
        (document_id in published for document_id in snapshot.document_ids),
        dtype=bool,
        count=snapshot.size,
    )
    known = set(snapshot.document_ids[keep])
    added = Chunk.objects.filter(
        knowledge_base_id=snapshot.knowledge_base_id,
        document_id__in=published - known,
        document__status=DocumentStatus.PUBLISHED,
    ).order_by("document_id", "ordinal")
    new_rows = list(
        added.values_list(
            "id", "document_id", "ordinal", "text", "embedding", "embedding_model"
        )
    )

    # Keep the surviving rows, renumbered.
    new_index = np.full(snapshot.size, -1, dtype=np.int64)
    new_index[keep] = np.arange(int(keep.sum()))
    term_ids, rows, counts = snapshot.postings.entries()
    survivors = keep[rows] if len(rows) else np.zeros(0, dtype=bool)
    vocabulary = dict(snapshot.postings.vocabulary)
    term_parts = [term_ids[survivors]]
    row_parts = [new_index[rows[survivors]].astype(np.int32)]
    count_parts = [counts[survivors]]
    lengths = [snapshot.lengths[keep]]

    # Tokenize only the chunks of newly published documents.
    base = int(keep.sum())
    added_lengths = np.zeros(len(new_rows), dtype=np.float32)
    added_folds = np.zeros(len(new_rows), dtype=bool)
    for offset, (_, _, _, text, _, _) in enumerate(new_rows):
        added_folds[offset] = folds(text)
        tokens = Counter(keyword_tokens(text))
        added_lengths[offset] = sum(tokens.values())
        if not tokens:
            continue
        term_parts.append(
            np.fromiter(
                (vocabulary.setdefault(term, len(vocabulary)) for term in tokens),
                dtype=np.int32,
                count=len(tokens),
            )
        )
        row_parts.append(np.full(len(tokens), base + offset, dtype=np.int32))
        count_parts.append(
            np.fromiter(
                (min(count, 65535) for count in tokens.values()),
                dtype=np.uint16,
                count=len(tokens),
            )
        )
    lengths.append(added_lengths)

    dimension = snapshot.dimension
    # Vectors of another embedder are never compared: those rows score 0 by cosine
    # (and are still found by keyword) until the document is ingested again.
    model = get_embedder().name
    added_matrix = np.zeros((len(new_rows), dimension), dtype=np.float32)
    for offset, row in enumerate(new_rows):
        embedding = bytes(row[4])
        if row[5] == model and len(embedding) == dimension * 4:
            added_matrix[offset] = from_bytes(embedding, dimension)

    return Snapshot(
        knowledge_base_id=snapshot.knowledge_base_id,
        version=version,
        dimension=dimension,
        chunk_ids=np.concatenate(
            [
                snapshot.chunk_ids[keep],
                np.array([r[0] for r in new_rows], dtype=np.int64),
            ]
        ),
        document_ids=np.concatenate(
            [
                snapshot.document_ids[keep],
                np.array([r[1] for r in new_rows], dtype=object),
            ]
        ),
        ordinals=np.concatenate(
            [
                snapshot.ordinals[keep],
                np.array([r[2] for r in new_rows], dtype=np.int32),
            ]
        ),
        lengths=np.concatenate(lengths),
        folds=np.concatenate([snapshot.folds[keep], added_folds]),
        matrix=np.concatenate([snapshot.matrix[keep], added_matrix]),
        postings=Postings.build(
            vocabulary,
            np.concatenate(term_parts).astype(np.int32),
            np.concatenate(row_parts),
            np.concatenate(count_parts),
        ),
    )


class SnapshotCache:
    """The snapshots of this process, refreshed when their index version moves."""

    def __init__(self) -> None:
        self._snapshots: dict[str, Snapshot] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def snapshots(self, knowledge_base_ids: list[str]) -> list[Snapshot]:
        versions = dict(
            KnowledgeBase.objects.filter(pk__in=knowledge_base_ids).values_list(
                "id", "index_version"
            )
        )
        return [
            self._current(kb_id, version) for kb_id, version in sorted(versions.items())
        ]

    def _current(self, knowledge_base_id: str, version: int) -> Snapshot:
        snapshot = self._snapshots.get(knowledge_base_id)
        if snapshot is not None and snapshot.version == version:
            return snapshot
        with self._guard:
            lock = self._locks.setdefault(knowledge_base_id, threading.Lock())
        with lock:
            snapshot = self._snapshots.get(knowledge_base_id)
            if snapshot is None or snapshot.version != version:
                dimension = get_embedder().dimension
                if snapshot is None or snapshot.dimension != dimension:
                    snapshot = _empty_snapshot(knowledge_base_id, -1, dimension)
                snapshot = _refreshed(snapshot, version)
                self._snapshots[knowledge_base_id] = snapshot
            return snapshot

    def discard(self, knowledge_base_id: str) -> None:
        """Forget one knowledge base's snapshot (it was deleted)."""
        with self._guard:
            self._snapshots.pop(knowledge_base_id, None)
            self._locks.pop(knowledge_base_id, None)

    def clear(self) -> None:
        with self._guard:
            self._snapshots.clear()


snapshot_cache = SnapshotCache()
