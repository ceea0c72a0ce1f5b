"""Whether a backend answers as the scratch build does.

Scores agree within `TOLERANCE` (float32 arrays against float64 by the book).
Order agrees exactly, except that chunks whose scores are that close may trade
places, and at the end of a list one of them may stand for another: the scratch
build breaks ties by chunk id, an engine by what float32 gives it. For the same
reason a chunk scoring within `TOLERANCE` of 0 may be in one list and not in the
other (a cosine of 1e-8 in float32 is 0 or below in float64): lists end where
scores reach that band.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

from retrieval.search_backends import Candidate, Searcher
from retrieval.search_backends.scratch import ScratchSearcher
from retrieval.tokens import query_tokens

TOLERANCE = 1e-5
LIMITS = (3, 50)
EVERYTHING = 10**9


def close(ours: float, theirs: float) -> bool:
    return math.isclose(ours, theirs, rel_tol=TOLERANCE, abs_tol=TOLERANCE)


def assert_same_list(
    ours: Sequence[Candidate],
    theirs: Sequence[Candidate],
    book: dict[int, Candidate],
    what: str,
) -> None:
    """`ours` is the list `theirs` is, up to near ties; `book` holds every chunk
    the scratch build scores above 0."""
    ours, theirs = _above_zero(ours), _above_zero(theirs)
    assert len(ours) == len(theirs), f"{what}: {_show(ours)} != {_show(theirs)}"
    for at, (mine, right) in enumerate(zip(ours, theirs, strict=True)):
        assert mine.chunk_id in book, f"{what}: chunk {mine.chunk_id} is not a hit"
        truth = book[mine.chunk_id]
        assert close(mine.score, truth.score), (
            f"{what}: chunk {mine.chunk_id} scores {mine.score}, by the book "
            f"{truth.score}"
        )
        assert close(mine.score, right.score), (
            f"{what}: at {at}, {_show(ours)} != {_show(theirs)}"
        )
        assert _where(mine) == _where(truth), what
    for before, after in itertools.pairwise(ours):
        assert (-before.score, before.chunk_id) < (-after.score, after.chunk_id), (
            f"{what}: not best first, ties by chunk id: {_show(ours)}"
        )


def _above_zero(candidates: Sequence[Candidate]) -> list[Candidate]:
    """The list without its tail of scores within `TOLERANCE` of 0."""
    return [candidate for candidate in candidates if candidate.score > TOLERANCE]


def _where(candidate: Candidate) -> tuple:
    return (
        candidate.document_id,
        candidate.knowledge_base_id,
        candidate.ordinal,
        candidate.folds,
    )


def _show(candidates: Sequence[Candidate]) -> list[tuple[int, float]]:
    return [(candidate.chunk_id, round(candidate.score, 6)) for candidate in candidates]


def assert_agree(
    ours: Searcher,
    theirs: ScratchSearcher,
    questions: Sequence[str],
    vectors: Sequence[np.ndarray],
) -> None:
    """Keyword and nearest lists, keyword scores of candidates, and statistics."""
    for question in questions:
        terms = query_tokens(question)
        book = {c.chunk_id: c for c in theirs.keyword(terms, EVERYTHING)}
        for limit in LIMITS:
            assert_same_list(
                ours.keyword(terms, limit),
                theirs.keyword(terms, limit),
                book,
                f"keyword {question!r} limit {limit}",
            )
        assert ours.statistics.size == theirs.statistics.size
        for term in terms:
            assert ours.statistics.frequency(term) == theirs.statistics.frequency(
                term
            ), f"frequency of {term!r}"
    for index, vector in enumerate(vectors):
        book = {c.chunk_id: c for c in theirs.nearest(vector, EVERYTHING)}
        for limit in LIMITS:
            assert_same_list(
                ours.nearest(vector, limit),
                theirs.nearest(vector, limit),
                book,
                f"nearest to vector {index} limit {limit}",
            )
        candidates = ours.nearest(vector, max(LIMITS))
        for question in questions:
            terms = query_tokens(question)
            scores = ours.keyword_scores(terms, candidates)
            right = theirs.keyword_scores(terms, candidates)
            assert len(scores) == len(candidates)
            for candidate, mine, book_score in zip(
                candidates, scores, right, strict=True
            ):
                assert close(mine, book_score), (
                    f"keyword score of chunk {candidate.chunk_id} for {question!r}: "
                    f"{mine}, by the book {book_score}"
                )
