"""A knowledge base's published chunks as arrays: what a search scores.

Built and kept current by `retrieval.index`; no Django here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import bm25, vector_index
from .bm25 import Postings


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
            + (self.approximate.nbytes() if self.approximate else 0)
        )

    def bm25(self, query_tokens: list[str]) -> np.ndarray:
        """BM25 score of every row (zeros where no query term occurs)."""
        return bm25.scores(self.postings, self.lengths, query_tokens)

    def keyword_top(
        self, query_tokens: list[str], count: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """The rows of the `count` best BM25 scores above 0, and those scores."""
        return bm25.top(self.postings, self.lengths, query_tokens, count)

    def bm25_at(self, query_tokens: list[str], rows: np.ndarray) -> np.ndarray:
        """The BM25 scores of these rows."""
        return bm25.at(self.postings, self.lengths, query_tokens, rows)

    def nearest(
        self, query_vector: np.ndarray, count: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """The rows of the `count` best cosine scores, and those scores."""
        return vector_index.nearest(self.matrix, self.approximate, query_vector, count)


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
