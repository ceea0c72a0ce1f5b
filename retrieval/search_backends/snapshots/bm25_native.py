"""The compiled top-k of BM25 (`native/bm25_top.c`), where it was built.

`make` builds it next to its source; without a C compiler it is absent and
`bm25.top` scores in numpy, to the same rows and score bits (tests hold the two
equal). It visits a document at a time and skips the rows the weak terms alone
cannot lift into the top, instead of numpy's passes over a score per row. An old
build (another `CURATOR_BM25_ABI`) is not used. No Django here.
"""

from __future__ import annotations

import ctypes
import logging
import threading
from pathlib import Path

import numpy as np

logger = logging.getLogger(__name__)

LIBRARY_PATH = Path(__file__).resolve().parent / "native" / "bm25_top.so"
ABI = 1  # the C file's CURATOR_BM25_ABI
MAX_TERMS = 256  # the C file's
# Room for the rows at or above the count-th best score; more rows tied than
# this and the C file answers -1 (numpy scores the question then).
MIN_CAPACITY = 1024


def _load() -> ctypes.CDLL | None:
    if not LIBRARY_PATH.is_file():
        return None
    try:
        library = ctypes.CDLL(str(LIBRARY_PATH))
        library.curator_bm25_abi.restype = ctypes.c_int
        abi = library.curator_bm25_abi()
    except (OSError, AttributeError) as exc:
        logger.warning("the compiled BM25 top-k does not load: %s", exc)
        return None
    if abi != ABI:
        logger.warning("the compiled BM25 top-k is an old build: run make")
        return None
    library.curator_bm25_top.argtypes = (
        ctypes.c_int32,  # terms
        ctypes.c_void_p,  # their rows (pointers)
        ctypes.c_void_p,  # their counts (pointers)
        ctypes.c_void_p,  # their lengths (int64)
        ctypes.c_void_p,  # their weights (float32)
        ctypes.c_float,  # BM25_K1 + 1
        ctypes.c_void_p,  # each row's length normalisation (float32)
        ctypes.c_void_p,  # removed rows' flags (uint8), or NULL
        ctypes.c_int32,  # count
        ctypes.c_void_p,  # a zero score per row (float32), left so
        ctypes.c_int64,  # rows
        ctypes.c_void_p,  # out: rows (int32)
        ctypes.c_void_p,  # out: scores (float32)
        ctypes.c_int32,  # capacity
    )
    library.curator_bm25_top.restype = ctypes.c_int32
    return library


_LIBRARY = _load()


def available() -> bool:
    """Whether the compiled top-k was built and loads."""
    return _LIBRARY is not None


_scratch = threading.local()


def _zeros(size: int) -> np.ndarray:
    """This thread's score per row, all zero (the C file leaves them so)."""
    scores = getattr(_scratch, "scores", None)
    if scores is None or len(scores) < size:
        scores = _scratch.scores = np.zeros(size, dtype=np.float32)
    return scores


def top(
    lists: list[tuple[np.ndarray, np.ndarray]],
    weights: list[float],
    k1_plus_one: float,
    norms: np.ndarray,
    gone: np.ndarray | None,
    count: int,
) -> tuple[np.ndarray, np.ndarray] | None:
    """The rows (ascending) of the `count` best scores and those scores, as
    `bm25.top` finds them, from each term's (rows, counts), rarest first. None
    where the compiled top-k is absent or cannot answer (numpy does then)."""
    if _LIBRARY is None or len(lists) > MAX_TERMS:
        return None
    lists = [
        (np.ascontiguousarray(rows, np.int32), np.ascontiguousarray(counts, np.uint16))
        for rows, counts in lists
    ]
    rows_at = np.array([rows.ctypes.data for rows, _ in lists], dtype=np.uintp)
    counts_at = np.array([counts.ctypes.data for _, counts in lists], dtype=np.uintp)
    sizes = np.array([len(rows) for rows, _ in lists], dtype=np.int64)
    weights_array = np.array(weights, dtype=np.float32)
    scores = _zeros(len(norms))
    capacity = max(MIN_CAPACITY, 4 * count)
    found_rows = np.empty(capacity, dtype=np.int32)
    found_scores = np.empty(capacity, dtype=np.float32)
    written = _LIBRARY.curator_bm25_top(
        len(lists),
        rows_at.ctypes.data,
        counts_at.ctypes.data,
        sizes.ctypes.data,
        weights_array.ctypes.data,
        k1_plus_one,
        norms.ctypes.data,
        None if gone is None else gone.ctypes.data,
        count,
        scores.ctypes.data,
        len(norms),
        found_rows.ctypes.data,
        found_scores.ctypes.data,
        capacity,
    )
    if written < 0:
        return None
    return found_rows[:written], found_scores[:written]
