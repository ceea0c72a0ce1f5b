"""The second line of defence: whatever the index finds, search and chat serve only
chunks whose version is published in one of the caller's knowledge bases.

The index is deceived behind its back, as a bookkeeping bug would leave it: a
document's status or knowledge base is changed with a queryset `.update()`, which
moves no `index_version`, so the snapshot built before still holds its chunks.
"""

from __future__ import annotations

import json
import logging

import pytest

from documents.models import Document, DocumentStatus
from retrieval import search
from retrieval.models import Chunk
from tests.retrieval.search_samples import LEAVE

pytestmark = pytest.mark.django_db

QUESTION = "How many days of paid annual leave per year?"


def served(client, user) -> list[str]:
    """Everything search (each profile) and chat give `user` to read, as text."""
    texts = []
    for profile in search.PROFILES:
        response = client.post(
            "/api/search", {"question": QUESTION, "profile": profile}, format="json"
        )
        assert response.status_code == 200
        texts.append(json.dumps(response.json(), ensure_ascii=False))
    response = client.post("/api/chat", {"question": QUESTION}, format="json")
    assert response.status_code == 200
    texts.append(json.dumps(response.json(), ensure_ascii=False))
    return texts


def assert_found_by_the_index_but_not_served(user, client, caplog):
    run = search.search(user=user, question=QUESTION, profile="keyword")
    assert run.keyword, "the index no longer finds the chunk: the test proves nothing"
    assert run.passages == []
    assert not any("25 days" in text for text in served(client, user))
    assert "not published in the searched knowledge bases" in caplog.text


@pytest.mark.parametrize(
    "status", [DocumentStatus.ARCHIVED, DocumentStatus.REVIEW_PENDING]
)
def test_a_version_no_longer_published_is_never_served(
    status, ingest, viewer, client_for, knowledge_base, caplog
):
    document = ingest(knowledge_base, LEAVE, filename="leave.md")
    client = client_for(viewer)
    assert all("25 days" in text for text in served(client, viewer))

    Document.objects.filter(pk=document.pk).update(status=status)

    with caplog.at_level(logging.WARNING, logger="retrieval.search"):
        assert_found_by_the_index_but_not_served(viewer, client, caplog)


def test_a_version_of_another_knowledge_base_is_never_served(
    ingest, viewer, client_for, knowledge_base, other_knowledge_base, caplog
):
    document = ingest(knowledge_base, LEAVE, filename="leave.md")
    client = client_for(viewer)
    assert all("25 days" in text for text in served(client, viewer))

    Document.objects.filter(pk=document.pk).update(knowledge_base=other_knowledge_base)
    Chunk.objects.filter(document=document).update(knowledge_base=other_knowledge_base)

    with caplog.at_level(logging.WARNING, logger="retrieval.search"):
        assert_found_by_the_index_but_not_served(viewer, client, caplog)
