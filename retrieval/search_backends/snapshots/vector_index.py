"""The vector list of a search: the rows nearest a question's embedding.

Below `SEARCH_ANN_MIN_CHUNKS` a snapshot's matrix is scored whole (exact). Above
it the candidates come from an approximate index (HNSW, usearch) over the rows
the snapshot had when it was built, and are scored exactly: the scores and order
are exact search's, only the candidate set is approximate. An index is never
edited: a refresh maps its keys to the new rows (-1: gone) and the rows it does
not hold are scored exactly beside it, until they are `REBUILD_SHARE` of the
snapshot (`due`). Settings as measured in docs/benchmarks.md ("A million
chunks"). No Django here.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
from usearch.index import Index

from .bm25 import best

CONNECTIVITY = 32
EXPANSION_ADD = 384  # how well the graph is built decides recall more than links
EXPANSION_SEARCH = 2048
RESCORED = 100  # candidates scored exactly: int8 order differs in the last places
REBUILD_SHARE = 0.1
BUILD_THREADS = 2
BUILD_BATCH = 65_536  # rows copied at a time when only some rows are indexed
FILE_PREFIX = "ann-"


@dataclass
class Approximate:
    """An HNSW index whose key k stands for the row `rows[k]` of the snapshot
    (-1: no longer published), with the rows it does not hold."""

    index: Index
    rows: np.ndarray  # int64, one per key
    uncovered: np.ndarray  # int64 rows of the snapshot the index does not hold
    file: str = ""  # its name in the host's snapshot folder, once stored

    @cached_property
    def outdated(self) -> int:
        """Keys of rows gone and rows not held: what exact search has to cover
        or the index hands out in vain."""
        return int((self.rows < 0).sum()) + len(self.uncovered)

    def nbytes(self) -> int:
        return int(self.index.memory_usage) + self.rows.nbytes + self.uncovered.nbytes


def build(
    matrix: np.ndarray,
    *,
    appended: np.ndarray | None = None,
    rows: np.ndarray | None = None,
) -> Approximate:
    """An index over `rows` of the matrix and the rows `appended` after it (all
    of them when None): key k stands for the k-th of `rows`, whose vectors are
    added a batch at a time rather than copied whole."""
    index = Index(
        ndim=matrix.shape[1],
        metric="ip",  # the embedder's rows have unit length: inner product = cosine
        dtype="i8",
        connectivity=CONNECTIVITY,
        expansion_add=EXPANSION_ADD,
        expansion_search=EXPANSION_SEARCH,
    )
    if rows is None:
        rows = np.arange(len(matrix) + (len(appended) if appended is not None else 0))
    for start in range(0, len(rows), BUILD_BATCH):
        batch = rows[start : start + BUILD_BATCH]
        keys = np.arange(start, start + len(batch), dtype=np.uint64)
        index.add(keys, _taken(matrix, appended, batch), threads=BUILD_THREADS)
    return Approximate(
        index=index,
        rows=np.arange(len(rows), dtype=np.int64),
        uncovered=np.zeros(0, dtype=np.int64),
    )


def carried(
    approximate: Approximate | None,
    new_row: np.ndarray,
    size: int,
    removed: np.ndarray | None = None,
) -> Approximate | None:
    """`approximate` for the next version of its snapshot, whose rows `new_row`
    maps the old ones to (-1: dropped) and which has `size` rows, of which
    `removed` (sorted) are no longer searched: neither held nor uncovered."""
    if approximate is None:
        return None
    rows = np.where(approximate.rows >= 0, new_row[approximate.rows], -1)
    held = np.zeros(size, dtype=bool)
    if removed is not None and len(removed):
        rows[np.isin(rows, removed)] = -1
        held[removed] = True  # not to be searched exactly either
    held[rows[rows >= 0]] = True
    return Approximate(
        index=approximate.index,
        rows=rows,
        uncovered=np.flatnonzero(~held).astype(np.int64),
        file=approximate.file,
    )


def due(approximate: Approximate | None, size: int) -> bool:
    """Whether a snapshot of `size` rows needs its index built (again): it has
    none, or exact search covers too much beside it."""
    return approximate is None or approximate.outdated > REBUILD_SHARE * max(size, 1)


def row_map(old_chunk_ids: np.ndarray, new_chunk_ids: np.ndarray) -> np.ndarray:
    """For each old row, the row of the same chunk among the new ones (-1: gone)."""
    old_chunk_ids = np.asarray(old_chunk_ids, dtype=np.int64)
    new_chunk_ids = np.asarray(new_chunk_ids, dtype=np.int64)
    if not len(new_chunk_ids):
        return np.full(len(old_chunk_ids), -1, dtype=np.int64)
    order = np.argsort(new_chunk_ids, kind="stable")
    place = np.searchsorted(new_chunk_ids, old_chunk_ids, sorter=order)
    place = order[np.minimum(place, len(order) - 1)]
    return np.where(new_chunk_ids[place] == old_chunk_ids, place, -1).astype(np.int64)


def nearest(
    matrix: np.ndarray,
    approximate: Approximate | None,
    query: np.ndarray,
    count: int,
    *,
    appended: np.ndarray | None = None,
    removed: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The rows of the `count` best cosine scores, and those scores, best first.
    `appended` holds the vectors of the rows after the matrix's; `removed`
    rows (sorted) are never returned."""
    query = query.astype(np.float32)
    removed = removed if removed is not None else np.zeros(0, dtype=np.int64)
    if approximate is None:
        scores = matrix @ query
        if appended is not None and len(appended):
            scores = np.concatenate([scores, appended @ query])
        rows = np.arange(len(scores))
        scores[removed] = -np.inf
    else:
        # Keys of rows gone take places among the results: ask for more.
        keys_count = len(approximate.rows)
        live = int((approximate.rows >= 0).sum())
        wanted = max(count, RESCORED)
        asked = (
            min(int(wanted * keys_count / live * 1.25) + 8, keys_count) if live else 0
        )
        keys = (
            approximate.index.search(query, asked).keys.astype(np.int64)
            if asked
            else np.zeros(0, dtype=np.int64)
        )
        found = approximate.rows[keys]
        rows = np.unique(np.concatenate([found[found >= 0], approximate.uncovered]))
        if len(removed):
            rows = rows[~np.isin(rows, removed)]
        scores = _taken(matrix, appended, rows) @ query
    searched = scores > -np.inf
    rows, scores = best(rows[searched], scores[searched], count)
    order = np.argsort(-scores, kind="stable")
    return rows[order], scores[order]


def _taken(
    matrix: np.ndarray, appended: np.ndarray | None, rows: np.ndarray
) -> np.ndarray:
    """The vectors of these rows (a copy): the matrix's, then those appended."""
    if appended is None or not len(appended):
        return np.asarray(matrix[rows])
    base = len(matrix)
    inside = rows < base
    vectors = np.empty((len(rows), matrix.shape[1]), dtype=np.float32)
    vectors[inside] = matrix[rows[inside]]
    vectors[~inside] = appended[rows[~inside] - base]
    return vectors


def store(approximate: Approximate, folder: Path) -> str:
    """Write the index into `folder` (once) and return its file name."""
    if not approximate.file:
        name = f"{FILE_PREFIX}{uuid.uuid4().hex}.usearch"
        scratch = folder / f".{name}.{os.getpid()}.tmp"
        approximate.index.save(str(scratch))
        scratch.rename(folder / name)
        approximate.file = name
    return approximate.file


def opened(path: Path, rows: np.ndarray, uncovered: np.ndarray) -> Approximate:
    """A stored index, memory-mapped read-only."""
    try:
        index = Index.restore(str(path), view=True)
    except ValueError as error:  # damaged
        raise OSError(f"not an index: {path.name}") from error
    if index is None:
        raise OSError(f"not an index: {path.name}")
    index.expansion_search = EXPANSION_SEARCH
    return Approximate(
        index=index,
        rows=np.asarray(rows, dtype=np.int64),
        uncovered=np.asarray(uncovered, dtype=np.int64),
        file=path.name,
    )
