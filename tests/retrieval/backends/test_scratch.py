"""The scratch build, the oracle of the conformance suite, against scores worked
out by hand."""

from __future__ import annotations

import math

import pytest

from retrieval.embeddings import get_embedder
from retrieval.models import Chunk
from retrieval.search_backends import SearchBackend

pytestmark = pytest.mark.django_db


def by_hand(idf: float, count: int, length: int, average: float) -> float:
    """BM25 of one term, k1 1.2 and b 0.75."""
    return idf * count * 2.2 / (count + 1.2 * (0.25 + 0.75 * length / average))


def test_bm25_is_that_of_the_book(oracle, library):
    short = library.published("kb-company", ["alpha beta"])
    long = library.published("kb-company", ["alpha alpha gamma delta"])
    library.ingested("kb-company", ["beta beta beta"])  # not published
    (short_id,), (long_id,) = library.chunk_ids(short), library.chunk_ids(long)
    searcher = oracle.searcher(["kb-company"])

    beta = searcher.keyword(["beta"], 10)
    alpha = searcher.keyword(["alpha"], 10)
    both = searcher.keyword_scores(["alpha", "beta", "beta"], alpha)

    # Two chunks of 2 and 4 terms: average 3; "beta" in one, "alpha" in both.
    assert [(c.chunk_id, c.document_id) for c in beta] == [(short_id, short.pk)]
    assert beta[0].score == pytest.approx(by_hand(math.log(2), 1, 2, 3))
    assert [c.chunk_id for c in alpha] == [long_id, short_id]
    assert [c.score for c in alpha] == pytest.approx(
        [by_hand(math.log(1.2), 2, 4, 3), by_hand(math.log(1.2), 1, 2, 3)]
    )
    # A term asked twice weighs twice.
    assert both == pytest.approx(
        [
            by_hand(math.log(1.2), 2, 4, 3),
            by_hand(math.log(1.2), 1, 2, 3) + 2 * by_hand(math.log(2), 1, 2, 3),
        ]
    )
    assert searcher.statistics.size == 2
    assert searcher.statistics.frequency("alpha") == 2
    assert searcher.statistics.frequency("beta") == 1


def test_statistics_are_those_of_each_knowledge_base(oracle, library):
    """Another team's chunks never move a score (tests/retrieval/test_search.py
    says the same of search)."""
    mine = library.published("kb-company", ["alpha beta"])
    library.published("kb-company", ["gamma"])
    alone = oracle.searcher(["kb-company"]).keyword(["alpha"], 10)[0].score
    library.published("kb-other", ["alpha", "alpha alpha", "alpha delta"])

    together = oracle.searcher(["kb-company", "kb-other"])
    (found,) = [c for c in together.keyword(["alpha"], 10) if c.document_id == mine.pk]

    assert found.score == alone
    assert together.statistics.size == 5
    assert together.statistics.frequency("alpha") == 4


def test_nearest_is_cosine_over_vectors_of_this_embedder(oracle, library):
    seen = library.published("kb-company", ["hotel costs a night"])
    foreign = library.ingested("kb-company", ["hotel costs a night"])
    Chunk.objects.filter(document=foreign).update(embedding_model="another-model")
    library.publish(foreign)
    (seen_id,) = library.chunk_ids(seen)
    vector = get_embedder().embed(["hotel costs a night"])[0] * 3  # any length

    nearest = oracle.searcher(["kb-company"]).nearest(vector, 10)

    assert [c.chunk_id for c in nearest] == [seen_id]
    assert nearest[0].score == pytest.approx(1.0, abs=1e-6)


def test_it_is_a_search_backend(oracle):
    assert isinstance(oracle, SearchBackend)
    assert oracle.health().status == "ready"
