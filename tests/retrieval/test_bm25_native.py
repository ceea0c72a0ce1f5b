"""The compiled top-k (`native/bm25_top.c`) finds the rows numpy finds, with the
same score bits, whatever it prunes on the way."""

from __future__ import annotations

import numpy as np
import pytest

from retrieval.search_backends.snapshots import bm25, bm25_native
from retrieval.search_backends.snapshots.bm25 import Postings, Segments
from retrieval.terms import term_hash
from tests.retrieval.test_bm25 import WORDS, random_index, split


def test_the_compiled_top_k_is_built() -> None:
    assert bm25_native.available(), (
        f"{bm25_native.LIBRARY_PATH} is missing or old: `make venv-dev` builds it "
        "(it needs a C compiler, cc)"
    )


@pytest.fixture
def numpy_top(monkeypatch):
    """`bm25.top` with numpy alone, for the same arguments."""
    if not bm25_native.available():
        pytest.fail("the compiled BM25 top-k is not built: run make venv-dev")
    library = bm25_native._LIBRARY

    def top(segments: Segments, question: list[str], count: int):
        monkeypatch.setattr(bm25_native, "_LIBRARY", None)
        try:
            return bm25.top(segments, question, count)
        finally:
            monkeypatch.setattr(bm25_native, "_LIBRARY", library)

    return top


def assert_same(found, expected) -> None:
    """Same rows in the same order, same float32 bits."""
    (rows, scores), (expected_rows, expected_scores) = found, expected
    assert rows.tolist() == expected_rows.tolist()
    assert scores.dtype == expected_scores.dtype == np.float32
    assert scores.view(np.uint32).tolist() == expected_scores.view(np.uint32).tolist()


def questions(seed: int, count: int, vocabulary: int = 120):
    """Questions of 1 to 30 words, repeats included (a word asked twice weighs
    twice, which reorders the terms by bound against their rarity), most with
    the particles that nearly every row holds."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        words = [
            WORDS[w] for w in rng.integers(0, vocabulary, size=rng.integers(1, 30))
        ]
        if rng.random() < 0.7:
            words += ["w0", "w1", "w0"]
        yield words, int(rng.choice([1, 3, 10, 20, 50]))


def test_it_finds_numpys_rows_and_score_bits(numpy_top):
    postings, lengths = random_index(4000, seed=21)
    index = Segments((postings,), lengths)
    for question, count in questions(22, 400):
        assert_same(bm25.top(index, question, count), numpy_top(index, question, count))


def test_it_finds_numpys_rows_over_segments_with_removed_rows(numpy_top):
    postings, lengths = random_index(3000, seed=23)
    base, appended = split(postings, 2400)
    removed = np.arange(5, 3000, 7, dtype=np.int64)
    index = Segments((base, appended), lengths, removed)
    for question, count in questions(24, 300):
        found = bm25.top(index, question, count)

        assert_same(found, numpy_top(index, question, count))
        assert not set(found[0].tolist()) & set(removed.tolist())


def test_every_row_tied_with_the_count_th_stays(numpy_top):
    """Rows alike score alike: all of them stay, and past the room the compiled
    top-k has for them, numpy answers."""
    for rows in (300, 5000):  # under and over bm25_native.MIN_CAPACITY
        hashes = np.array([term_hash("tie")] * rows, dtype=np.int64)
        postings = Postings.merged(
            Postings().entries(),
            hashes,
            np.arange(rows, dtype=np.int32),
            np.ones(rows, dtype=np.uint16),
        )
        index = Segments((postings,), np.full(rows, 10, dtype=np.float32))

        found = bm25.top(index, ["tie"], 5)

        assert len(found[0]) == rows
        assert_same(found, numpy_top(index, ["tie"], 5))


def test_a_question_of_more_terms_than_it_takes_is_scored_by_numpy(numpy_top):
    words = [f"t{i}" for i in range(bm25_native.MAX_TERMS + 10)]
    hashes = np.array([term_hash(w) for w in words], dtype=np.int64)
    postings = Postings.merged(
        Postings().entries(),
        hashes,
        np.arange(len(words), dtype=np.int32),
        np.ones(len(words), dtype=np.uint16),
    )
    index = Segments((postings,), np.ones(len(words), dtype=np.float32))

    found = bm25.top(index, words, 3)

    assert len(found[0]) == len(words)  # one word a row: all tied
    assert_same(found, numpy_top(index, words, 3))


def test_the_scores_per_row_it_borrows_stay_zero():
    postings, lengths = random_index(2000, seed=25)
    index = Segments((postings,), lengths)
    for question, count in questions(26, 50):
        bm25.top(index, question, count)

    assert not bm25_native._zeros(len(lengths)).any()


def test_unknown_words_and_an_empty_question_find_nothing():
    postings, lengths = random_index(500, seed=27)
    index = Segments((postings,), lengths)

    for question in ([], ["nowhere"], ["nowhere", "nothing"]):
        rows, scores = bm25.top(index, question, 10)
        assert len(rows) == len(scores) == 0


def test_an_old_build_is_not_used(tmp_path, monkeypatch, caplog):
    """A library without the ABI it expects, or none, leaves numpy to score."""
    monkeypatch.setattr(bm25_native, "LIBRARY_PATH", tmp_path / "bm25_top.so")
    assert bm25_native._load() is None
    monkeypatch.setattr(bm25_native, "ABI", bm25_native.ABI + 1)
    monkeypatch.setattr(
        bm25_native,
        "LIBRARY_PATH",
        bm25_native.Path(bm25_native.__file__).parent / "native" / "bm25_top.so",
    )

    assert bm25_native._load() is None
    assert "old build" in caplog.text


def reference(lists, weights, norms, count):
    """Every row scored in float32, the terms added in their order, as numpy's
    `bm25.scores`; then `bm25.best` of the positive ones."""
    scores = np.zeros(len(norms), dtype=np.float32)
    k1_plus_one = np.float32(bm25.BM25_K1 + 1)
    for (rows, counts), weight in zip(lists, weights, strict=True):
        held = counts.astype(np.float32)
        scores[rows] += (np.float32(weight) * held * k1_plus_one) / (held + norms[rows])
    positive = np.flatnonzero(scores > 0)
    return bm25.best(positive.astype(np.int32), scores[positive], count)


def compiled(lists, weights, norms, count):
    return bm25_native.top(lists, weights, bm25.BM25_K1 + 1, norms, None, count)


def test_a_row_an_ulp_below_the_floor_that_a_weak_term_lifts_to_a_tie_stays():
    """Row 0 trails row 1 by one ulp until a term too weak to count in the
    bounds adds its share: numpy then ties them, and so must the top-k."""
    contribution = lambda norm: (  # noqa: E731
        np.float32(1) * np.float32(1) * np.float32(2.2) / (np.float32(1) + norm)
    )
    norms = np.array([1.0, 1.0, 0.3, 0.3], dtype=np.float32)
    above = np.nextafter(contribution(norms[0]), np.float32(np.inf))
    while contribution(norms[1]) < above:
        norms[1] = np.nextafter(norms[1], np.float32(0))
    weak = float(0.95 * (above - contribution(norms[0])) / 2.2)
    lists = [
        (np.array([0, 1], np.int32), np.array([1, 1], np.uint16)),
        (np.array([0, 2, 3], np.int32), np.array([10, 1, 1], np.uint16)),
    ]
    weights = [1.0, weak]

    found = compiled(lists, weights, norms, 1)

    assert_same(found, reference(lists, weights, norms, 1))
    assert found[0].tolist() == [0, 1]


def test_weak_terms_over_many_rows_find_numpys_rows():
    """Terms whose bounds are a millionth of the scores (a particle in a very
    large knowledge base): their rounding decides ties and close calls."""
    rng = np.random.default_rng(31)
    for _ in range(300):
        size = int(rng.integers(20, 200))
        norms = rng.choice([0.3, 0.9, 1.0, 1.7], size=size).astype(np.float32)
        lists, weights = [], []
        for _ in range(int(rng.integers(2, 6))):
            rows = np.sort(rng.choice(size, size=rng.integers(1, size), replace=False))
            lists.append(
                (
                    rows.astype(np.int32),
                    rng.integers(1, 4, size=len(rows)).astype(np.uint16),
                )
            )
            weights.append(float(rng.choice([1.0, 0.9, 2**-20, 2**-24, 2**-14])))
        count = int(rng.choice([1, 2, 5]))

        assert_same(
            compiled(lists, weights, norms, count),
            reference(lists, weights, norms, count),
        )


def test_postings_counted_zero_times_add_nothing_and_stay_in_bounds():
    """Refused from parsers (`terms.valid_terms`), but a row stored before then
    must not be listed once per term: one row, three terms, all counted 0."""
    norms = np.ones(1, dtype=np.float32)
    lists = [(np.array([0], np.int32), np.array([0], np.uint16))] * 3

    rows, scores = compiled(lists, [1.0, 1.0, 1.0], norms, 1)

    assert len(rows) == len(scores) == 0
    assert not bm25_native._zeros(1).any()
