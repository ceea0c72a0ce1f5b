"""A backend scores and orders as the scratch build does: keyword and nearest
lists, the keyword scores of candidates, the statistics."""

from __future__ import annotations

import pytest

from retrieval.embeddings import get_embedder
from retrieval.models import Chunk
from tests.retrieval.backends.agreement import assert_agree

pytestmark = pytest.mark.django_db

LEAVE = [
    "Every employee receives 25 days of paid annual leave per year.",
    "Annual leave not taken by March is lost; ask your manager first.",
]
HOTEL = ["Hotel costs are refunded up to 150 euros a night with a receipt."]
TRAIN = ["Train tickets are booked in second class.", "Trains: book early."]
CHINESE = [
    "员工每年享有二十五天带薪年假。",
    "出差住宿费用凭发票报销，每晚不超过一千元。",
]
TRADITIONAL = ["員工每年享有二十五天帶薪年假，出差住宿憑發票報銷。"]
LEAVE_2 = ["Every employee receives 28 days of paid annual leave."]
OTHER = ["Annual leave in the other team: 30 days, hotel refunds in full."]

QUESTIONS = [
    "How many days of annual leave?",
    "hotel costs a night receipt",
    "train tickets second class",
    "年假有几天",
    "出差住宿报销",
    "leave leave hotel 年假",
]


def question_vectors() -> list:
    return list(get_embedder().embed_queries(QUESTIONS))


def publish_mixed(library) -> dict:
    """Two knowledge bases, English and Chinese in both scripts, a version
    replaced, a chunk whose vector another embedder made and one whose terms
    another tokenizer made."""
    leave = library.published("kb-company", LEAVE)
    hotel = library.published("kb-company", HOTEL)
    library.published("kb-company", TRAIN)
    library.published("kb-company", CHINESE)
    mixed = library.ingested("kb-company", TRADITIONAL)
    Chunk.objects.filter(document=mixed).update(tokenizer="")
    library.publish(mixed)
    foreign = library.ingested("kb-other", OTHER)
    Chunk.objects.filter(document=foreign).update(embedding_model="another-model")
    library.publish(foreign)
    return {"leave": leave, "hotel": hotel}


def assert_agree_everywhere(backend, oracle) -> None:
    vectors = question_vectors()
    for kb_ids in (["kb-company"], ["kb-other"], ["kb-company", "kb-other"]):
        assert_agree(
            backend.searcher(kb_ids), oracle.searcher(kb_ids), QUESTIONS, vectors
        )


def test_a_first_search_scores_as_the_scratch_build(backend, oracle, library):
    publish_mixed(library)

    assert_agree_everywhere(backend, oracle)


def test_scores_stay_those_of_the_scratch_build_as_versions_come_and_go(
    backend, backend_under_test, oracle, library, settings
):
    settings.SEARCH_APPEND_SHARE = 1.0  # every publish appends
    documents = publish_mixed(library)
    assert_agree_everywhere(backend, oracle)

    library.published("kb-company", LEAVE_2, family_id=documents["leave"].family_id)
    library.archive(documents["hotel"])
    assert_agree_everywhere(backend, oracle)

    library.published("kb-company", HOTEL)
    assert_agree_everywhere(backend, oracle)
    assert_agree_everywhere(backend_under_test.started(), oracle)


def test_ties_at_the_limit_are_broken_by_chunk_id(backend, library):
    """Chunks of the same text score alike: the first ones by chunk id make
    the cut, whatever rows the backend keeps them in (else which of them the
    50 candidates of a search hold changes with a compaction)."""
    copies = [library.published("kb-company", ["alpha beta"]) for _ in range(8)]
    first = sorted(pk for copy in copies for pk in library.chunk_ids(copy))[:3]
    searcher = backend.searcher(["kb-company"])
    vector = get_embedder().embed(["alpha beta"])[0]

    assert [c.chunk_id for c in searcher.keyword(["alpha"], 3)] == first
    assert [c.chunk_id for c in searcher.nearest(vector, 3)] == first
