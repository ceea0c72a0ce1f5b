"""BM25 over a snapshot's postings: the pruned top rows equal scoring every row,
found by numpy or by the compiled top-k (`test_bm25_native.py` holds the two
equal to the bit)."""

from __future__ import annotations

import numpy as np
import pytest

from retrieval.search_backends.snapshots import bm25, bm25_native
from retrieval.search_backends.snapshots.bm25 import Postings, Segments
from retrieval.terms import term_hash

WORDS = [f"w{i}" for i in range(200)]


def random_index(rows: int, seed: int) -> tuple[Postings, np.ndarray]:
    """Postings of `rows` rows whose words follow a Zipf law: a few words are in
    nearly every row, most in a few, as in real text."""
    rng = np.random.default_rng(seed)
    hashes, row_ids, counts, lengths = [], [], [], []
    for row in range(rows):
        words = np.minimum(rng.zipf(1.3, size=rng.integers(5, 60)) - 1, len(WORDS) - 1)
        found, times = np.unique(words, return_counts=True)
        hashes += [term_hash(WORDS[w]) for w in found]
        row_ids += [row] * len(found)
        counts += times.tolist()
        lengths.append(times.sum())
    postings = Postings.merged(
        Postings().entries(),
        np.array(hashes, dtype=np.int64),
        np.array(row_ids, dtype=np.int32),
        np.array(counts, dtype=np.uint16),
    )
    return postings, np.array(lengths, dtype=np.float32)


def assert_best_rows(
    rows: np.ndarray, found: np.ndarray, scores: np.ndarray, count: int
) -> None:
    """`rows` (scored `found`) are the `count` best positive rows of `scores`,
    and every row tied with the count-th (the seam breaks those ties)."""
    positive = np.sort(scores[scores > 0])[::-1]
    if len(positive) <= count:
        assert sorted(rows.tolist()) == np.flatnonzero(scores > 0).tolist()
        return
    kth = positive[count - 1]
    assert len(rows) >= count
    assert np.allclose(found, scores[rows], rtol=1e-5)
    assert min(found) >= kth * (1 - 1e-5)
    assert set(np.flatnonzero(scores > kth * (1 + 1e-5)).tolist()) <= set(rows.tolist())


@pytest.fixture(params=["compiled", "numpy"])
def scorer(request, monkeypatch) -> str:
    """`bm25.top` through the compiled top-k, or through numpy alone."""
    if request.param == "numpy":
        monkeypatch.setattr(bm25_native, "_LIBRARY", None)
    elif not bm25_native.available():
        pytest.fail("the compiled BM25 top-k is not built: run make venv-dev")
    return request.param


def test_numpy_finishes_only_the_rows_that_can_reach_the_top(monkeypatch):
    monkeypatch.setattr(bm25_native, "_LIBRARY", None)
    postings, lengths = random_index(3000, seed=1)
    index = Segments((postings,), lengths)
    rng = np.random.default_rng(2)
    pruned = []
    scores_at = bm25._scores_at

    def spy(*args):
        pruned.append(True)  # the common words went to the candidates only
        return scores_at(*args)

    monkeypatch.setattr(bm25, "_scores_at", spy)
    for _ in range(200):
        question = [WORDS[w] for w in rng.integers(0, 60, size=rng.integers(1, 8))]
        question += ["w0", "w1"]  # words in most rows, as a question's particles
        full = bm25.scores(index, question)

        rows, scores = bm25.top(index, question, 20)

        assert_best_rows(rows, scores, full, 20)
    assert len(pruned) > 20


def test_scores_of_some_rows_are_those_of_every_row():
    postings, lengths = random_index(1000, seed=3)
    index = Segments((postings,), lengths)
    question = ["w0", "w3", "w17", "w150", "unknown"]
    rows = np.array([0, 5, 17, 999, 400])

    assert np.allclose(
        bm25.at(index, question, rows),
        bm25.scores(index, question)[rows],
        rtol=1e-5,
    )


def test_rows_stay_ascending_within_a_term_through_publishes():
    postings, _ = random_index(500, seed=4)
    hashes, rows, counts = postings.entries()
    keep = np.ones(500, dtype=bool)
    keep[::7] = False  # documents archived
    new_row = np.cumsum(keep) - 1
    survivors = keep[rows]
    more, _ = random_index(50, seed=5)
    added_hashes, added_rows, added_counts = more.entries()

    merged = Postings.merged(
        (
            hashes[survivors],
            new_row[rows[survivors]].astype(np.int32),
            counts[survivors],
        ),
        added_hashes,
        added_rows + int(keep.sum()),
        added_counts,
    )

    for term in range(len(merged.hashes)):
        term_rows = merged.rows[merged.starts[term] : merged.starts[term + 1]]
        assert np.all(np.diff(term_rows) > 0)


def split(postings: Postings, at: int) -> tuple[Postings, Postings]:
    """The postings of rows before `at`, and those of the rows from `at` on."""
    hashes, rows, counts = postings.entries()
    parts = []
    for inside in (rows < at, rows >= at):
        parts.append(
            Postings.merged(
                Postings().entries(), hashes[inside], rows[inside], counts[inside]
            )
        )
    return parts[0], parts[1]


def test_the_top_rows_are_those_of_scoring_every_row(scorer):
    postings, lengths = random_index(3000, seed=1)
    index = Segments((postings,), lengths)
    rng = np.random.default_rng(2)
    for _ in range(200):
        question = [WORDS[w] for w in rng.integers(0, 60, size=rng.integers(1, 8))]
        question += ["w0", "w1"]
        full = bm25.scores(index, question)

        rows, scores = bm25.top(index, question, 20)

        assert_best_rows(rows, scores, full, 20)


def test_segments_score_as_the_index_of_the_rows_searched(scorer):
    postings, lengths = random_index(700, seed=8)
    base, appended = split(postings, 600)
    removed = np.arange(3, 700, 9, dtype=np.int64)
    segments = Segments((base, appended), lengths, removed)
    # The index built anew: the rows searched, renumbered.
    keep = np.ones(700, dtype=bool)
    keep[removed] = False
    new_row = np.cumsum(keep) - 1
    hashes, rows, counts = postings.entries()
    inside = keep[rows]
    anew = Postings.merged(
        Postings().entries(),
        hashes[inside],
        new_row[rows[inside]].astype(np.int32),
        counts[inside],
    )
    # Each term's rows searched, counted exactly: as in the index built anew.
    built_anew = Segments((anew,), lengths[keep])
    for hashed in postings.hashes.tolist():
        assert segments.frequency(hashed) == built_anew.frequency(hashed)
    rng = np.random.default_rng(9)
    for _ in range(100):
        question = [WORDS[w] for w in rng.integers(0, 80, size=rng.integers(1, 8))]
        question += ["w0"]
        expected = bm25.scores(built_anew, question)

        scores = bm25.scores(segments, question)
        rows_found, top_scores = bm25.top(segments, question, 20)

        assert np.allclose(scores[keep], expected, rtol=1e-5)
        assert not scores[removed].any()
        assert not set(rows_found.tolist()) & set(removed.tolist())
        assert_best_rows(rows_found, top_scores, scores, 20)
        some = np.flatnonzero(keep)[::13]
        assert np.allclose(bm25.at(segments, question, some), scores[some], rtol=1e-5)
