"""A knowledge base's published chunks as arrays: what a search scores.

A snapshot is its base (the matrix and postings of a build) and, once a publish
has brought it up to date by appending, the rows appended since, with the rows
no longer published left out of every score (`removed`) until the next build.
Per-row arrays (ids, ordinals, lengths, flags) cover every row, base first.

Built and kept current by `cache`; no Django here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from . import bm25, vector_index
from .bm25 import Postings, Segments


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
    # Rows read from chunks made by another tokenizer or embedder: once
    # `reindex_chunks` rewrites them, the next version is built anew.
    stale: int = 0
    # Where the vector list's candidates come from past SEARCH_ANN_MIN_CHUNKS.
    approximate: vector_index.Approximate | None = None
    # With shared snapshots, the stored version this in-memory copy stands in
    # for while this process writes it in the background ("": mapped, or not
    # shared).
    awaiting: str = ""
    # The rows appended since the base: their vectors, their postings (rows
    # numbered after the base's); None: none appended.
    appended_matrix: np.ndarray | None = None
    appended_postings: Postings | None = None
    # Rows no longer published (sorted), and per term of the base's and the
    # appended postings how many of them hold it.
    removed: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    removed_frequencies: tuple[np.ndarray, ...] = ()
    # The stored version whose files hold the base, and the one this snapshot
    # was read from or stored as ("": not stored).
    base_name: str = ""
    stored_as: str = ""
    # `document_runs()`, once made.
    runs: tuple[np.ndarray, np.ndarray] | None = None

    @property
    def size(self) -> int:
        return len(self.chunk_ids)

    @property
    def searched(self) -> int:
        """Rows a search scores: the published ones."""
        return self.size - len(self.removed)

    @property
    def base_size(self) -> int:
        return len(self.matrix)

    @property
    def appended(self) -> int:
        """Rows appended since the base."""
        return self.size - self.base_size

    @property
    def segmented(self) -> bool:
        return self.appended_postings is not None or len(self.removed) > 0

    @cached_property
    def segments(self) -> Segments:
        parts = (self.postings,)
        if self.appended_postings is not None:
            parts += (self.appended_postings,)
        return Segments(parts, self.lengths, self.removed, self.removed_frequencies)

    def frequency(self, hashed: int) -> int:
        """How many published rows hold the term."""
        return self.segments.frequency(hashed)

    def document_runs(self) -> tuple[np.ndarray, np.ndarray]:
        """The first row of each run of one document's rows, and that document
        (the base's rows, then the appended ones), made once per snapshot."""
        if self.runs is None:
            base = self.base_size
            starts, documents = document_runs(self.document_ids[:base])
            if self.appended:
                more, others = document_runs(self.document_ids[base:])
                starts = np.concatenate([starts, more + base])
                documents = np.concatenate([documents, others])
            self.runs = (starts, documents)
        return self.runs

    def base(self) -> Snapshot:
        """The base's rows alone, as a snapshot (views: nothing is copied)."""
        if not self.segmented:
            return self
        rows = self.base_size
        runs = None
        if self.runs is not None:
            base_runs = self.runs[0] < rows
            runs = (self.runs[0][base_runs], self.runs[1][base_runs])
        return Snapshot(
            knowledge_base_id=self.knowledge_base_id,
            version=self.version,
            dimension=self.dimension,
            chunk_ids=self.chunk_ids[:rows],
            document_ids=self.document_ids[:rows],
            ordinals=self.ordinals[:rows],
            lengths=self.lengths[:rows],
            folds=self.folds[:rows],
            matrix=self.matrix,
            postings=self.postings,
            base_name=self.base_name,
            stored_as=self.base_name,
            runs=runs,
        )

    def vectors(self) -> np.ndarray:
        """Every row's vector, removed rows' included (a copy once appended)."""
        if self.appended_matrix is None:
            return self.matrix
        return np.concatenate([self.matrix, self.appended_matrix])

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
            + (self.approximate.nbytes() if self.approximate else 0)
            + (self.appended_matrix.nbytes if self.appended_matrix is not None else 0)
            + (self.appended_postings.nbytes() if self.appended_postings else 0)
            + self.removed.nbytes
            + sum(frequencies.nbytes for frequencies in self.removed_frequencies)
        )

    def bm25(self, query_tokens: list[str]) -> np.ndarray:
        """BM25 score of every row (zeros where no query term occurs)."""
        return bm25.scores(self.segments, self.lengths, query_tokens)

    def keyword_top(
        self, query_tokens: list[str], count: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """The rows of the `count` best BM25 scores above 0, and those scores."""
        return bm25.top(self.segments, self.lengths, query_tokens, count)

    def bm25_at(self, query_tokens: list[str], rows: np.ndarray) -> np.ndarray:
        """The BM25 scores of these rows."""
        return bm25.at(self.segments, self.lengths, query_tokens, rows)

    def nearest(
        self, query_vector: np.ndarray, count: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """The rows of the `count` best cosine scores, and those scores."""
        return vector_index.nearest(
            self.matrix,
            self.approximate,
            query_vector,
            count,
            appended=self.appended_matrix,
            removed=self.removed,
        )


def document_runs(document_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The first row of each document's rows (a document's rows are adjacent:
    rows are added a document at a time) and that document: a refresh looks
    up thousands of documents, not every row."""
    if not len(document_ids):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=object)
    changes = np.ones(len(document_ids), dtype=bool)
    changes[1:] = document_ids[1:] != document_ids[:-1]
    starts = np.flatnonzero(changes)
    return starts, document_ids[starts]
