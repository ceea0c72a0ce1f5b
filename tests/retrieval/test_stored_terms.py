"""A chunk's search terms are made at ingestion and stored with it; a snapshot
reads them as arrays; chunks of an older tokenizer are noticed and reindexed."""

from __future__ import annotations

import io
import logging
import threading
from collections import Counter

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db.models import F

from documents.models import KnowledgeBase
from retrieval import terms
from retrieval.models import Chunk
from retrieval.search import search
from retrieval.search_backends.snapshots import bm25, refresh
from retrieval.search_backends.snapshots.cache import snapshot_cache
from retrieval.search_backends.snapshots.warmup import Warmup
from retrieval.services import chunks_needing_reindex, chunks_reindex

pytestmark = pytest.mark.django_db

LEAVE = b"# Leave\n\nEvery employee receives 25 days of paid annual leave per year.\n"
HOTEL = (
    "# 住宿标准\n\n一線城市住宿費每晚不超過 600 元；其他城市每晚 450 元。\n".encode()
)
DOCX_LIKE = b"# Travel\n\nKeep every receipt of the trip. " + b"Meals are paid. " * 200


def _make_stale(**fields) -> None:
    """Chunks as an older release left them, read by a process just started."""
    Chunk.objects.update(**fields)
    KnowledgeBase.objects.update(index_version=F("index_version") + 1)
    snapshot_cache.clear()


def test_ingested_chunks_carry_their_terms(ingest, knowledge_base):
    ingest(knowledge_base, LEAVE + b"\n" + DOCX_LIKE, filename="a.md")
    ingest(knowledge_base, HOTEL, filename="b.md")

    chunks = list(Chunk.objects.all())
    assert chunks
    for chunk in chunks:
        expected = terms.chunk_terms(chunk.text, chunk.heading_path)
        assert chunk.tokenizer == terms.TOKENIZER
        assert bytes(chunk.terms) == expected.terms
        assert chunk.term_count == expected.length
        assert chunk.folds == expected.folds
    assert Chunk.objects.get(document__filename="b.md").folds is True


def test_a_chunk_is_found_by_the_words_of_the_headings_above_it(
    ingest, viewer, knowledge_base
):
    faq = (
        b"# FAQ\n\n## Q: Why does loading a PDF fail with libGL.so.1 missing?\n\n"
        b"A: Install the system packages libgl1-mesa-glx and libglib2.0-0.\n\n"
        b"## Q: Which formats are supported?\n\nA: txt, docx, md, pdf and html.\n"
    )
    ingest(knowledge_base, faq, filename="faq.md")
    (chunk,) = Chunk.objects.filter(text__contains="libgl1")

    run = search(user=viewer, question="PDF loading fails: libGL missing")

    assert chunk.text.startswith("A: Install")  # the question is the heading
    assert run.keyword[0].chunk_id == chunk.pk


def test_a_snapshot_build_tokenizes_nothing(ingest, knowledge_base, monkeypatch):
    ingest(knowledge_base, LEAVE)
    ingest(knowledge_base, HOTEL, filename="hotel.md")
    snapshot_cache.clear()

    def refuse(text):
        raise AssertionError("a snapshot build tokenized a chunk")

    monkeypatch.setattr(refresh, "chunk_terms", refuse)
    snapshot = snapshot_cache.snapshots(["kb-company"])[0]

    assert snapshot.size == Chunk.objects.count()
    assert snapshot.stale == 0


def test_stored_terms_score_as_tokenizing_the_text_does(ingest, knowledge_base):
    ingest(knowledge_base, LEAVE)
    ingest(knowledge_base, HOTEL, filename="hotel.md")
    ingest(knowledge_base, DOCX_LIKE, filename="travel.md")
    snapshot_cache.clear()
    stored = snapshot_cache.snapshots(["kb-company"])[0]
    _make_stale(tokenizer="", terms=b"", term_count=0)
    remade = snapshot_cache.snapshots(["kb-company"])[0]

    assert remade.stale == remade.size
    for question in ("annual leave days", "一线城市 住宿费", "receipt of the trip"):
        tokens = terms.keyword_tokens(question)
        assert np.allclose(
            bm25.scores(stored.segments, tokens), bm25.scores(remade.segments, tokens)
        )
        assert bm25.scores(stored.segments, tokens).max() > 0


def test_chunks_of_an_older_tokenizer_are_still_found_and_reported(
    ingest, viewer, knowledge_base, caplog
):
    document = ingest(knowledge_base, LEAVE)
    _make_stale(tokenizer="", terms=b"", term_count=0)

    with caplog.at_level(
        logging.WARNING, logger="retrieval.search_backends.snapshots.refresh"
    ):
        passages = search(user=viewer, question="annual leave").passages

    assert [passage.document_id for passage in passages] == [document.pk]
    assert "made by another tokenizer" in caplog.text
    assert "reindex_chunks" in caplog.text


def test_reindex_rewrites_stale_chunks_and_resumes_after_an_interruption(
    ingest, viewer, knowledge_base
):
    ingest(knowledge_base, LEAVE, filename="a.md")
    ingest(knowledge_base, DOCX_LIKE, filename="b.md")
    ingest(knowledge_base, HOTEL, filename="c.md")
    expected = {c.pk: bytes(c.terms) for c in Chunk.objects.all()}
    _make_stale(tokenizer="", terms=b"", term_count=0, embedding_model="older")
    total = Chunk.objects.count()
    assert chunks_needing_reindex().count() == total
    assert snapshot_cache.snapshots(["kb-company"])[0].stale == total

    def interrupt(progress):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        chunks_reindex(batch_size=1, on_progress=interrupt)
    assert chunks_needing_reindex().count() == total - 1  # the first batch stays

    out = io.StringIO()
    call_command("reindex_chunks", "--batch-size", "2", stdout=out)

    assert chunks_needing_reindex().count() == 0
    assert f"reindexed {total - 1}/{total - 1}" in out.getvalue()
    assert {c.pk: bytes(c.terms) for c in Chunk.objects.all()} == expected
    snapshot = snapshot_cache.snapshots(["kb-company"])[0]
    assert snapshot.stale == 0  # rebuilt, not patched
    assert np.abs(snapshot.matrix).sum(axis=1).min() > 0  # vectors compared again
    assert search(user=viewer, question="annual leave").passages


def test_reindex_check_and_bad_arguments(ingest, knowledge_base):
    ingest(knowledge_base, LEAVE)
    out = io.StringIO()
    call_command("reindex_chunks", "--check", stdout=out)
    assert "chunks needing reindex=0" in out.getvalue()

    _make_stale(tokenizer="")
    with pytest.raises(CommandError, match="1 chunks need reindex_chunks"):
        call_command("reindex_chunks", "--check", stdout=io.StringIO())
    with pytest.raises(CommandError, match="No knowledge base"):
        call_command("reindex_chunks", "--knowledge-base", "nope")
    with pytest.raises(CommandError):
        call_command("reindex_chunks", "--batch-size", "0")


@pytest.mark.django_db(transaction=True)
def test_warm_up_builds_every_snapshot_and_a_first_query_waits_for_it(
    ingest, viewer, knowledge_base, other_knowledge_base, api_client, monkeypatch
):
    ingest(knowledge_base, LEAVE)
    ingest(other_knowledge_base, HOTEL)
    snapshot_cache.clear()
    release = threading.Event()
    builds = []
    real = refresh.rebuilt_at

    def slow_refresh(snapshot, version):
        builds.append(snapshot.knowledge_base_id)
        release.wait(10)
        return real(snapshot, version)

    monkeypatch.setattr(refresh, "rebuilt_at", slow_refresh)
    warmup = Warmup()
    monkeypatch.setattr("retrieval.search_backends.snapshots.warmup.warmup", warmup)
    warmup.start()

    ready = api_client.get("/api/health/ready")
    assert ready.status_code == 503
    assert ready.json()["status"] == "warming"
    assert ready.json()["checks"]["search"] == "warming"

    answers = []
    asker = threading.Thread(
        target=lambda: answers.append(search(user=viewer, question="annual leave"))
    )
    asker.start()
    release.set()
    asker.join(10)
    assert warmup.wait(10)

    assert answers
    assert answers[0].passages
    # One build per knowledge base: the query waited for the warm-up's.
    assert sorted(builds) == sorted([knowledge_base.pk, other_knowledge_base.pk])
    ready = api_client.get("/api/health/ready")
    assert ready.status_code == 200
    assert ready.json()["checks"]["search"] == "ok"


def test_an_incremental_refresh_equals_a_build_from_scratch(ingest, knowledge_base):
    first = ingest(knowledge_base, LEAVE, filename="a.md")
    ingest(knowledge_base, DOCX_LIKE, filename="b.md")
    snapshot_cache.snapshots(["kb-company"])
    ingest(knowledge_base, HOTEL, filename="c.md")  # added
    ingest(  # and one replaced: its old rows dropped
        knowledge_base,
        b"# Leave\n\nEvery employee receives 28 days of paid annual leave.\n",
        filename="a.md",
        family_id=first.family_id,
        version=2,
    )
    refreshed = snapshot_cache.snapshots(["kb-company"])[0]
    snapshot_cache.clear()
    scratch = snapshot_cache.snapshots(["kb-company"])[0]

    def postings(snapshot):
        hashes, rows, counts = snapshot.postings.entries()
        return sorted(
            zip(
                hashes.tolist(),
                snapshot.chunk_ids[rows].tolist(),
                counts.tolist(),
                strict=True,
            )
        )

    assert refreshed is not scratch
    assert sorted(refreshed.chunk_ids.tolist()) == sorted(scratch.chunk_ids.tolist())
    assert postings(refreshed) == postings(scratch)
    assert (np.diff(refreshed.postings.hashes) > 0).all()


def test_terms_a_parser_sends_must_be_as_counted_terms_makes_them():
    made = terms.counted_terms(Counter(["leave", "annual", "leave"]), False).terms
    hashes, counts = terms.decode(made)

    def blob(hashes, counts) -> bytes:
        return np.asarray(hashes, "<i8").tobytes() + np.asarray(counts, "<u2").tobytes()

    assert terms.valid_terms(made)
    assert terms.valid_terms(b"")  # a chunk of no words
    assert not terms.valid_terms(made[:-1])
    assert not terms.valid_terms(blob(hashes[::-1], counts[::-1]))  # unsorted
    assert not terms.valid_terms(blob([hashes[0]] * 2, [1, 1]))  # a term twice
    assert not terms.valid_terms(blob(hashes, [0] * len(counts)))  # counted 0 times
    assert not terms.valid_terms("not bytes")
