"""A backend finds only the published chunks of the knowledge bases asked for: a
version waiting for review, a rejected one, an archived one and another
knowledge base's never come back, by keyword, by vector, nor in statistics."""

from __future__ import annotations

import pytest

from retrieval.embeddings import get_embedder
from retrieval.tokens import keyword_tokens, query_tokens

pytestmark = pytest.mark.django_db

SHOWN = ["Annual leave is 25 days a year.", "年假每年二十五天。"]
# One word of each hidden version is its own: found only if it is served.
HIDDEN = {
    "pending": ["Pending leave rules: bereavement leave is 5 days."],
    "rejected": ["Rejected leave rules: sabbatical leave is 60 days."],
    "replaced": ["Obsolete leave rules: annual leave is 20 days."],
    "archived": ["Withdrawn leave rules: 病假 leave is 10 days."],
    "elsewhere": ["Elsewhere the annual leave is 30 days, 年假三十天。"],
}
HIDDEN_WORDS = ["bereavement", "sabbatical", "obsolete", "withdrawn", "elsewhere"]


@pytest.fixture
def versions(library) -> dict[str, set[int]]:
    """The chunk ids of the shown version and of each hidden one."""
    replaced = library.published("kb-company", HIDDEN["replaced"])
    shown = library.published("kb-company", SHOWN, family_id=replaced.family_id)
    pending = library.ingested("kb-company", HIDDEN["pending"])
    rejected = library.rejected("kb-company", HIDDEN["rejected"])
    archived = library.published("kb-company", HIDDEN["archived"])
    library.archive(archived)
    elsewhere = library.published("kb-other", HIDDEN["elsewhere"])
    documents = {
        "shown": shown,
        "pending": pending,
        "rejected": rejected,
        "replaced": replaced,
        "archived": archived,
        "elsewhere": elsewhere,
    }
    return {name: library.chunk_ids(document) for name, document in documents.items()}


def hidden_from_company(versions) -> set[int]:
    return set().union(*(ids for name, ids in versions.items() if name != "shown"))


def test_keyword_finds_only_published_chunks_of_the_knowledge_bases_asked(
    backend, versions
):
    searcher = backend.searcher(["kb-company"])

    found = {
        candidate.chunk_id
        for question in ["annual leave days", "年假", *HIDDEN_WORDS]
        for candidate in searcher.keyword(query_tokens(question), 50)
    }

    assert found == versions["shown"]
    assert found.isdisjoint(hidden_from_company(versions))


def test_nearest_finds_only_published_chunks_of_the_knowledge_bases_asked(
    backend, versions
):
    searcher = backend.searcher(["kb-company"])
    vectors = get_embedder().embed(
        [text for texts in HIDDEN.values() for text in texts]
    )

    found = {
        candidate.chunk_id
        for vector in vectors
        for candidate in searcher.nearest(vector, 50)
    }

    assert found  # the shown version is near every hidden one
    assert found <= versions["shown"]


def test_statistics_count_only_published_chunks_of_the_knowledge_bases_asked(
    backend, versions
):
    statistics = backend.searcher(["kb-company"]).statistics

    assert statistics.size == len(versions["shown"])
    assert statistics.frequency("leave") == 1
    for term in keyword_tokens(SHOWN[1]):
        assert statistics.frequency(term) == 1, term
    for word in HIDDEN_WORDS:
        assert statistics.frequency(word) == 0, word


def test_the_knowledge_bases_asked_for_together_are_found_together(backend, versions):
    both = backend.searcher(["kb-company", "kb-other"])
    other = backend.searcher(["kb-other"])

    found = {c.chunk_id for c in both.keyword(query_tokens("annual leave 年假"), 50)}
    theirs = {c.chunk_id for c in other.keyword(query_tokens("annual leave"), 50)}

    assert found == versions["shown"] | versions["elsewhere"]
    assert theirs == versions["elsewhere"]
    assert both.statistics.size == len(versions["shown"]) + len(versions["elsewhere"])
    assert both.statistics.frequency("elsewhere") == 1
    assert {c.knowledge_base_id for c in both.keyword(query_tokens("年假"), 50)} == {
        "kb-company",
        "kb-other",
    }


def test_a_knowledge_base_that_does_not_exist_holds_nothing(backend, versions):
    searcher = backend.searcher(["kb-none"])

    assert searcher.keyword(query_tokens("annual leave"), 50) == []
    assert searcher.statistics.size == 0
