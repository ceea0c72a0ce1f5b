"""The search backend seam (`SEARCH_BACKEND`): a backend that is down answers
503 `search_unavailable`, never a 500; a backend that fails to hear of a
publish never undoes it; `/api/health/ready` is the backend's health."""

from __future__ import annotations

import logging

import pytest
from django.urls import reverse

from documents.models import Document, DocumentStatus
from retrieval.search_backends import (
    Health,
    SearchBackend,
    SearchUnavailable,
    get_search_backend,
)
from retrieval.search_backends.snapshots.backend import SnapshotBackend
from tests.retrieval.search_samples import HOTEL, LEAVE

pytestmark = pytest.mark.django_db

HERE = "tests.retrieval.test_search_seam"


class DownBackend:
    """A backend whose engine cannot be reached."""

    calls: list[tuple[str, str]] = []

    def searcher(self, knowledge_base_ids, versions=None):
        raise SearchUnavailable()

    def published(self, knowledge_base_id, document_id):
        DownBackend.calls.append(("published", str(document_id)))
        raise ConnectionError("search engine unreachable")

    def withdrawn(self, knowledge_base_id, document_id):
        DownBackend.calls.append(("withdrawn", str(document_id)))
        raise ConnectionError("search engine unreachable")

    def discard(self, knowledge_base_id):
        raise ConnectionError("search engine unreachable")

    def health(self):
        return Health("unavailable", "unreachable")


class WarmingBackend(DownBackend):
    def health(self):
        return Health("warming")


@pytest.fixture
def down(settings):
    DownBackend.calls = []
    settings.SEARCH_BACKEND = f"{HERE}.DownBackend"
    yield
    DownBackend.calls = []


def test_the_default_backend_is_the_snapshot_backend():
    backend = get_search_backend()
    assert isinstance(backend, SnapshotBackend)
    assert isinstance(backend, SearchBackend)
    assert get_search_backend() is backend  # one per process


def test_the_setting_chooses_the_backend(settings):
    settings.SEARCH_BACKEND = f"{HERE}.DownBackend"
    assert isinstance(get_search_backend(), DownBackend)


class TestSearchUnavailable:
    def assert_unavailable(self, response):
        assert response.status_code == 503, response.content
        assert response.json()["error_code"] == "search_unavailable"
        assert "unavailable" in response.json()["detail"]

    def test_search_answers_503(self, down, viewer, client_for, knowledge_base):
        response = client_for(viewer).post(
            "/api/search", {"question": "annual leave"}, format="json"
        )
        self.assert_unavailable(response)

    def test_debug_answers_503(self, down, reviewer, client_for, knowledge_base):
        response = client_for(reviewer).post(
            "/api/retrieval/debug", {"question": "annual leave"}, format="json"
        )
        self.assert_unavailable(response)

    def test_chat_answers_503(self, down, viewer, client_for, knowledge_base):
        response = client_for(viewer).post(
            "/api/chat", {"question": "How many days of annual leave?"}, format="json"
        )
        self.assert_unavailable(response)

    def test_the_chat_stream_ends_with_search_unavailable(
        self, down, viewer, client_for, knowledge_base
    ):
        response = client_for(viewer).post(
            "/api/chat/stream",
            {"question": "How many days of annual leave?"},
            format="json",
            HTTP_ACCEPT="text/event-stream",
        )
        assert response.status_code == 200
        body = b"".join(response.streaming_content).decode()
        assert "event: run.failed" in body
        assert '"error_code": "search_unavailable"' in body

    def test_the_ask_page_says_search_is_unavailable(self, viewer, client):
        client.force_login(viewer)
        page = client.get(reverse("web:ask")).content.decode()
        assert "search_unavailable" in page
        assert "Search is unavailable right now" in page


@pytest.mark.django_db(transaction=True)
def test_a_publish_commits_when_the_backend_cannot_hear_of_it(
    ingest, knowledge_base, down, caplog
):
    with caplog.at_level(logging.ERROR, logger="retrieval.search_backends"):
        first = ingest(knowledge_base, LEAVE)
        second = ingest(
            knowledge_base,
            HOTEL,
            family_id=first.family_id,
            version=first.version + 1,
        )

    first.refresh_from_db()
    assert first.status == DocumentStatus.ARCHIVED
    assert Document.objects.get(pk=second.pk).status == DocumentStatus.PUBLISHED
    # Told after the commit, the archive as it happened, and logged.
    assert ("withdrawn", str(first.pk)) in DownBackend.calls
    assert ("published", str(second.pk)) in DownBackend.calls
    assert "search backend not told: published" in caplog.text


@pytest.mark.django_db(transaction=True)
def test_a_deleted_published_document_is_withdrawn_after_the_commit(
    ingest, knowledge_base, down
):
    document = ingest(knowledge_base, LEAVE)
    DownBackend.calls = []
    Document.objects.filter(pk=document.pk).delete()
    assert DownBackend.calls == [("withdrawn", str(document.pk))]


def test_nothing_is_told_before_the_commit(
    ingest, knowledge_base, down, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        document = ingest(knowledge_base, LEAVE)
    assert DownBackend.calls == []
    for callback in callbacks:
        callback()
    assert DownBackend.calls == [("published", str(document.pk))]


class TestReadiness:
    def test_ready_reads_the_backends_health(self, api_client, settings):
        settings.SEARCH_BACKEND = f"{HERE}.DownBackend"
        response = api_client.get("/api/health/ready")
        assert response.status_code == 503
        assert response.json()["checks"]["search"] == "unavailable"

    def test_a_warming_backend_keeps_traffic_away(self, api_client, settings):
        settings.SEARCH_BACKEND = f"{HERE}.WarmingBackend"
        response = api_client.get("/api/health/ready")
        assert response.status_code == 503
        assert response.json()["status"] == "warming"
        assert response.json()["checks"]["search"] == "warming"
