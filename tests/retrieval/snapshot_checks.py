"""Checks shared by the tests of appended search snapshots."""

from __future__ import annotations

import json
import mmap

import numpy as np

from retrieval.search_backends.snapshots import bm25
from retrieval.search_backends.snapshots.cache import snapshot_cache
from retrieval.tokens import keyword_tokens

LEAVE = b"# Leave\n\nEvery employee receives 25 days of paid annual leave per year.\n"
LEAVE_2 = b"# Leave\n\nEvery employee receives 28 days of paid annual leave.\n"
HOTEL = b"# Hotels\n\nHotel costs are refunded up to 150 euros a night.\n"
TRAIN = b"# Trains\n\nTrain tickets are booked in second class.\n"
TAXI = b"# Taxis\n\nTaxis need a receipt.\n"
QUESTIONS = [
    "How many days of annual leave?",
    "hotel costs a night",
    "train tickets second class",
    "paid leave per year",
]


def current():
    return snapshot_cache.snapshots(["kb-company"])[0]


def entry():
    """What the cache knows about the current snapshot (where it is stored)."""
    return snapshot_cache.entry("kb-company")


def indexed(timeout: float = 10):
    """The current snapshot once its approximate index is handed over: a build
    of an older version still running when the version moved on is waited
    for, and so is the build the next look starts for the newest one."""
    snapshot = current()
    while snapshot_cache.busy("index"):
        snapshot_cache.wait_for("index", timeout)
        snapshot = current()
    return snapshot


def by_chunk(snapshot, rows, scores) -> dict[int, float]:
    return {
        int(snapshot.chunk_ids[row]): float(score)
        for row, score in zip(rows, scores, strict=True)
    }


def assert_searches_alike(appended, scratch):
    """The same chunks with the same scores, by keyword and by vector."""
    for question in QUESTIONS:
        tokens = keyword_tokens(question)
        ours = by_chunk(appended, *appended.keyword_top(tokens, 50))
        theirs = by_chunk(scratch, *scratch.keyword_top(tokens, 50))
        assert ours.keys() == theirs.keys()
        assert np.allclose([ours[k] for k in theirs], list(theirs.values()))
        vector = np.random.default_rng(len(question)).standard_normal(
            appended.dimension
        )
        ours = by_chunk(appended, *appended.nearest(vector, 50))
        theirs = by_chunk(scratch, *scratch.nearest(vector, 50))
        assert ours.keys() == theirs.keys()
        assert np.allclose([ours[k] for k in theirs], list(theirs.values()))
        for token in tokens:
            hashed = bm25.term_hash(token)
            assert appended.frequency(hashed) == scratch.frequency(hashed)


def stored_versions(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("v"))


def meta(folder, name) -> dict:
    return json.loads((folder / name / "meta.json").read_text())


def mapped(array: np.ndarray) -> bool:
    """Whether the array's memory is a file's mapping (a memmap or a view of one)."""
    while array is not None:
        if isinstance(array, np.memmap | mmap.mmap):
            return True
        array = getattr(array, "base", None)
    return False
