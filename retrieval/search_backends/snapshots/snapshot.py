"""A knowledge base's published chunks as arrays: what a search scores.

Its base (the matrix and postings of a build) and, once a publish appended to
it, the rows appended since, with the rows no longer published left out of every
score (`removed`). Per-row arrays cover every row, base first. Frozen: a new
version is a new snapshot; what the cache knows about one is in its entry. No
Django here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from . import bm25, vector_index
from .bm25 import Postings, Segments


def empty(dtype: type | str) -> Callable[[], np.ndarray]:
    """What makes an empty array: a field's default."""
    return lambda: np.zeros(0, dtype=dtype)


# The arrays with one value per row, base first.
ROW_FIELDS = ("chunk_ids", "document_ids", "ordinals", "lengths", "folds")


@dataclass(frozen=True, eq=False)
class Snapshot:
    knowledge_base_id: str
    version: int
    dimension: int
    matrix: np.ndarray  # float32 (rows, dimension): the base's vectors
    chunk_ids: np.ndarray = field(default_factory=empty(np.int64))  # one per row
    # Its document's UUID as 16 bytes (as stored): compared a million at a time.
    document_ids: np.ndarray = field(default_factory=empty("V16"))
    ordinals: np.ndarray = field(default_factory=empty(np.int32))
    lengths: np.ndarray = field(default_factory=empty(np.float32))  # its terms
    # Its text changes in simplified script: the rerank converts it.
    folds: np.ndarray = field(default_factory=empty(bool))
    postings: Postings = field(default_factory=Postings)  # the base's
    # Rows read from chunks made by another tokenizer or embedder: once
    # `reindex_chunks` rewrites them, the next version is built anew.
    stale: int = 0
    # Where the vector list's candidates come from past SEARCH_ANN_MIN_CHUNKS.
    approximate: vector_index.Approximate | None = None
    # The rows appended since the base: their vectors, their postings (rows
    # numbered after the base's); None: none appended.
    appended_matrix: np.ndarray | None = None
    appended_postings: Postings | None = None
    # Rows no longer published, sorted.
    removed: np.ndarray = field(default_factory=empty(np.int64))
    # The stored version whose files hold the base ("": not stored).
    base_name: str = ""

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
    def live(self) -> np.ndarray:
        """A flag per row: searched (not removed)."""
        live = np.ones(self.size, dtype=bool)
        live[self.removed] = False
        return live

    @cached_property
    def segments(self) -> Segments:
        parts = (self.postings,)
        if self.appended_postings is not None:
            parts += (self.appended_postings,)
        return Segments(parts, self.lengths, self.removed)

    def frequency(self, hashed: int) -> int:
        """How many published rows hold the term."""
        return self.segments.frequency(hashed)

    def base(self) -> Snapshot:
        """The base's rows alone, as a snapshot (views: nothing is copied)."""
        if not self.segmented:
            return self
        rows = self.base_size
        return Snapshot(
            knowledge_base_id=self.knowledge_base_id,
            version=self.version,
            dimension=self.dimension,
            matrix=self.matrix,
            postings=self.postings,
            base_name=self.base_name,
            **{name: getattr(self, name)[:rows] for name in ROW_FIELDS},
        )

    def nbytes(self) -> int:
        """Memory held by the arrays of this snapshot."""
        arrays = (self.chunk_ids, self.document_ids, self.ordinals, self.lengths)
        more = (self.folds, self.matrix, self.appended_matrix, self.removed)
        postings = (self.postings, self.appended_postings, self.approximate)
        return (
            sum(a.nbytes for a in (*arrays, *more) if a is not None)
            + sum(p.nbytes() for p in postings if p is not None)
            + (self.segments.nbytes() if "segments" in self.__dict__ else 0)
        )

    def keyword_top(
        self, query_tokens: list[str], count: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """The rows of the `count` best BM25 scores above 0, and those scores."""
        return bm25.top(self.segments, query_tokens, count)

    def bm25_at(self, query_tokens: list[str], rows: np.ndarray) -> np.ndarray:
        """The BM25 scores of these rows."""
        return bm25.at(self.segments, query_tokens, rows)

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
