"""`retrieval/refresh.py`: a publish appends its rows to a snapshot and leaves the
rows no longer published out of every score, until SEARCH_APPEND_SHARE of the
rows are appended or left out; then the snapshot is built in one piece again."""

from __future__ import annotations

import uuid

import numpy as np
import pytest
from django.db.models import F

from documents.models import Document, KnowledgeBase
from retrieval.models import Chunk
from retrieval.search import search
from retrieval.search_backends.snapshots import vector_index
from retrieval.search_backends.snapshots.cache import SnapshotCache, snapshot_cache
from tests.retrieval.snapshot_checks import (
    HOTEL,
    LEAVE,
    LEAVE_2,
    TRAIN,
    assert_searches_alike,
    current,
    indexed,
)

pytestmark = pytest.mark.django_db


def test_a_publish_appends_its_rows_and_scores_as_a_build_from_scratch(
    appending, ingest, knowledge_base
):
    first = ingest(knowledge_base, LEAVE, filename="leave.md")
    ingest(knowledge_base, HOTEL, filename="hotel.md")
    before = current()

    ingest(knowledge_base, TRAIN, filename="train.md")
    ingest(
        knowledge_base,
        LEAVE_2,
        filename="leave.md",
        family_id=first.family_id,
        version=2,
    )
    appended = current()

    assert appended.segmented
    assert appended.matrix is before.matrix  # the base is not copied
    assert appended.postings is before.postings
    old_rows = set(Chunk.objects.filter(document=first).values_list("id", flat=True))
    assert {int(appended.chunk_ids[row]) for row in appended.removed} == old_rows
    snapshot_cache.clear()
    scratch = current()
    # Every term's statistics, not only the questions': those of a build anew.
    for postings in (appended.postings, appended.appended_postings):
        for hashed in postings.hashes.tolist():
            assert appended.frequency(hashed) == scratch.frequency(hashed)
    assert not scratch.segmented
    assert scratch.size == appended.size - len(appended.removed)
    assert_searches_alike(appended, scratch)


def test_rows_of_a_deleted_document_are_left_out_too(appending, ingest, knowledge_base):
    ingest(knowledge_base, LEAVE, filename="leave.md")
    hotel = ingest(knowledge_base, HOTEL, filename="hotel.md")
    current()
    ingest(knowledge_base, TRAIN, filename="train.md")
    Document.objects.filter(pk=hotel.pk).delete()  # its chunks and terms go with it
    KnowledgeBase.objects.filter(pk="kb-company").update(
        index_version=F("index_version") + 1
    )

    appended = current()

    assert appended.segmented
    assert hotel.pk not in {
        uuid.UUID(bytes=appended.document_ids[row].tobytes())
        for row in range(appended.size)
        if row not in set(appended.removed.tolist())
    }
    snapshot_cache.clear()
    assert_searches_alike(appended, current())


def test_rows_no_longer_published_are_never_found(
    appending, ingest, viewer, knowledge_base
):
    first = ingest(knowledge_base, LEAVE, filename="leave.md")
    ingest(knowledge_base, HOTEL, filename="hotel.md")
    search(user=viewer, question="annual leave")
    second = ingest(
        knowledge_base,
        LEAVE_2,
        filename="leave.md",
        family_id=first.family_id,
        version=2,
    )

    for profile in ("keyword", "vector", "hybrid-v1"):
        run = search(user=viewer, question="days of paid annual leave", profile=profile)
        found = {passage.document_id for passage in run.passages}
        assert first.pk not in found
        assert second.pk in found
    assert current().segmented


def test_past_the_share_a_publish_builds_the_snapshot_whole(
    settings, appending, ingest, knowledge_base
):
    first = ingest(knowledge_base, LEAVE, filename="leave.md")
    ingest(knowledge_base, HOTEL, filename="hotel.md")
    current()
    ingest(
        knowledge_base,
        LEAVE_2,
        filename="leave.md",
        family_id=first.family_id,
        version=2,
    )
    assert current().segmented

    settings.SEARCH_APPEND_SHARE = 0.1
    ingest(knowledge_base, TRAIN, filename="train.md")
    whole = current()

    assert not whole.segmented
    assert whole.size == Chunk.objects.filter(document__status="published").count()
    assert (np.diff(whole.postings.hashes) > 0).all()
    snapshot_cache.clear()
    assert_searches_alike(whole, current())


def test_a_document_published_again_is_appended_once(
    appending, shared, ingest, viewer, knowledge_base
):
    # Archived is final for a document; a restored database can still bring one back.
    ingest(knowledge_base, LEAVE, filename="leave.md")
    current()
    hotel = ingest(knowledge_base, HOTEL, filename="hotel.md")
    assert current().appended  # its rows and those it comes back with: adjacent

    def publish_as(status, cache=snapshot_cache):
        Document.objects.filter(pk=hotel.pk).update(status=status)
        KnowledgeBase.objects.filter(pk="kb-company").update(
            index_version=F("index_version") + 1
        )
        return cache.snapshots(["kb-company"])[0]

    publish_as("archived")
    again = publish_as("published")
    other = SnapshotCache()  # reads the stored rows: their runs made anew
    assert other.snapshots(["kb-company"])[0].appended == again.appended
    later = publish_as("published", other)  # nothing changed but the version

    hotel_rows = Chunk.objects.filter(document=hotel).count()
    assert again.appended == 2 * hotel_rows
    assert later.appended == again.appended  # not appended at every version
    found = search(user=viewer, question="hotel costs a night").passages
    assert found[0].document_id == hotel.pk
    snapshot_cache.clear()
    assert_searches_alike(later, current())


@pytest.mark.parametrize("sharing", [False, True])
def test_an_approximate_index_is_carried_across_appends(
    sharing, settings, tmp_path, appending, ingest, viewer, knowledge_base, monkeypatch
):
    settings.SEARCH_ANN_MIN_CHUNKS = 1
    if sharing:
        settings.SEARCH_SNAPSHOT_DIR = str(tmp_path / "snapshots")
    monkeypatch.setattr(vector_index, "REBUILD_SHARE", 1.0)  # carry, never rebuild
    leave = ingest(knowledge_base, LEAVE, filename="leave.md")
    hotel = ingest(knowledge_base, HOTEL, filename="hotel.md")
    current()
    snapshot_cache.wait_for("index")
    first = current()
    assert first.approximate is not None

    train = ingest(knowledge_base, TRAIN, filename="train.md")
    newer = ingest(
        knowledge_base,
        LEAVE_2,
        filename="leave.md",
        family_id=leave.family_id,
        version=2,
    )
    snapshot = current()

    assert snapshot.segmented
    assert snapshot.approximate.index is first.approximate.index
    uncovered = {int(snapshot.chunk_ids[row]) for row in snapshot.approximate.uncovered}
    assert uncovered == set(
        Chunk.objects.filter(document__in=[train, newer]).values_list("id", flat=True)
    )
    for question, document in (
        ("days of annual leave", newer),
        ("hotel costs", hotel),
        ("train tickets second class", train),
    ):
        passages = search(user=viewer, question=question, profile="vector").passages
        assert passages[0].document_id == document.pk
        assert leave.pk not in {passage.document_id for passage in passages}
    if sharing:
        other = SnapshotCache().snapshots(["kb-company"])[0]
        assert other.approximate.file == first.approximate.file
        assert list(other.approximate.uncovered) == list(snapshot.approximate.uncovered)


def test_an_index_built_over_appended_rows_holds_only_the_rows_searched(
    appending, settings, ingest, knowledge_base, monkeypatch
):
    settings.SEARCH_ANN_MIN_CHUNKS = 1
    monkeypatch.setattr(vector_index, "REBUILD_SHARE", 0.0)  # built again at once
    ingest(knowledge_base, LEAVE, filename="leave.md")
    current()
    hotel = ingest(knowledge_base, HOTEL, filename="hotel.md")
    current()
    for status in ("archived", "published"):  # its chunks twice in the rows
        Document.objects.filter(pk=hotel.pk).update(status=status)
        KnowledgeBase.objects.filter(pk="kb-company").update(
            index_version=F("index_version") + 1
        )
        current()
    snapshot = indexed()

    assert snapshot.segmented
    assert len(snapshot.approximate.rows) == snapshot.searched
    held = snapshot.approximate.rows[snapshot.approximate.rows >= 0]
    assert not set(held.tolist()) & set(snapshot.removed.tolist())
    rows, _ = snapshot.nearest(snapshot.appended_matrix[-1], 10)
    assert len(set(rows.tolist())) == len(rows) == snapshot.searched
