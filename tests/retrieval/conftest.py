from __future__ import annotations

import pytest

from documents import services as document_services
from documents.models import Document, Role
from ingestion import services as ingestion_services
from ingestion.worker import Worker
from retrieval.embeddings import get_embedder
from retrieval.search_backends.snapshots.cache import snapshot_cache
from tests.factories import DocumentFactory
from tests.retrieval.stub_provider import StubProvider


@pytest.fixture(autouse=True)
def _fresh_snapshots():
    """Snapshots are per process; test data is rolled back under them. Work a
    test left running in the background would hand its index or whole version
    to the next test's snapshot, so it is waited for."""
    snapshot_cache.clear()
    yield
    snapshot_cache.wait_for(None, 60)
    snapshot_cache.clear()


@pytest.fixture
def shared(settings, tmp_path):
    """Snapshots shared through files, as the processes of a host share them;
    returns the knowledge base `kb-company`'s folder."""
    settings.SEARCH_SNAPSHOT_DIR = str(tmp_path / "snapshots")
    return tmp_path / "snapshots" / "kb-company"


@pytest.fixture
def appending(settings):
    """Every publish appends to the snapshot, however many rows it adds."""
    settings.SEARCH_APPEND_SHARE = 1.0


@pytest.fixture
def ingest(member):
    """Ingest `content` into `kb` through the real worker; publish unless told not to.

    Returns the document in its final state (published, or review_pending).
    """
    staff = {}

    def people(kb):
        if kb.pk not in staff:
            staff[kb.pk] = (
                member(Role.EDITOR, kb=kb, username=f"editor-{kb.pk}"),
                member(Role.REVIEWER, kb=kb, username=f"reviewer-{kb.pk}"),
            )
        return staff[kb.pk]

    def make(kb, content: bytes, *, filename="doc.md", publish=True, **fields):
        editor, reviewer = people(kb)
        document = DocumentFactory(
            knowledge_base=kb, content=content, filename=filename, **fields
        )
        task = ingestion_services.document_submit(user=editor, document_id=document.pk)
        Worker(worker_id="test", write=lambda line: None).run(task.pk)
        document = Document.objects.get(pk=document.pk)
        assert document.status == "review_pending", task
        if publish:
            document = document_services.document_publish(
                user=reviewer,
                document_id=document.pk,
                expected_lock_version=document.lock_version,
            )
        return document

    return make


@pytest.fixture
def stub_provider():
    """A running OpenAI-compatible HTTP server on 127.0.0.1 (see stub_provider.py)."""
    stub = StubProvider().start()
    yield stub
    stub.stop()


@pytest.fixture
def use_stub(settings, stub_provider):
    """Point chat and/or embeddings at the stub; the embedder is rebuilt after."""

    def configure(*, chat: bool = True, embeddings: bool = False, timeout=0.5):
        settings.OPENAI_BASE_URL = stub_provider.url
        settings.OPENAI_API_KEY = "stub-key"
        settings.OPENAI_CHAT_MODEL = "stub-chat"
        settings.OPENAI_EMBEDDING_MODEL = "stub-embed"
        settings.OPENAI_EMBEDDING_DIMENSION = 0
        settings.OPENAI_TIMEOUT_SECONDS = timeout
        if chat:
            settings.CHAT_PROVIDER = "openai-compatible"
        if embeddings:
            settings.EMBEDDING_PROVIDER = "openai-compatible"
        get_embedder.cache_clear()
        snapshot_cache.clear()
        return stub_provider

    yield configure
    get_embedder.cache_clear()
    snapshot_cache.clear()
