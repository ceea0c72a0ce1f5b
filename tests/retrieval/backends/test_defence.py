"""The second line of defence stands above the seam: whatever a backend finds,
search serves only chunks whose version is published in one of the caller's
knowledge bases (retrieval/search.py, `_published_chunks`)."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import pytest

from retrieval import search
from retrieval.search_backends import Health
from retrieval.search_backends.scratch import ScratchSearcher

pytestmark = pytest.mark.django_db

LEAVE = ["Every employee receives 25 days of paid annual leave per year."]
QUESTION = "How many days of paid annual leave per year?"


class Remembering:
    """A backend that answers as it did the first time, whatever was archived
    since: the bookkeeping bug the second line is there for."""

    def __init__(self) -> None:
        self.first: dict[tuple[str, ...], ScratchSearcher] = {}

    def searcher(
        self, knowledge_base_ids: Sequence[str], versions=None
    ) -> ScratchSearcher:
        key = tuple(sorted(knowledge_base_ids))
        return self.first.setdefault(key, ScratchSearcher(knowledge_base_ids))

    def published(self, knowledge_base_id: str, document_id: object) -> None:
        pass

    def withdrawn(self, knowledge_base_id: str, document_id: object) -> None:
        pass

    def discard(self, knowledge_base_id: str) -> None:
        pass

    def health(self) -> Health:
        return Health("ready")


@pytest.mark.parametrize("profile", search.PROFILES)
def test_an_archived_version_a_backend_still_finds_is_not_served(
    profile, settings, library, caplog
):
    settings.SEARCH_BACKEND = f"{__name__}.Remembering"
    leave = library.published("kb-company", LEAVE)
    user = library.reviewer
    before = search.search(user=user, question=QUESTION, profile=profile)
    assert [p.document_id for p in before.passages] == [leave.pk]

    library.archive(leave)
    with caplog.at_level(logging.WARNING, logger="retrieval.search"):
        after = search.search(user=user, question=QUESTION, profile=profile)

    assert after.keyword or after.vector, "the backend no longer finds it"
    assert after.passages == []
    assert "not published in the searched knowledge bases" in caplog.text
