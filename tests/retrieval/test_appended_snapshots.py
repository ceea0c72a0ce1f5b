"""Snapshots brought up to date by appending: a publish adds its rows after the
base's and leaves the rows no longer published out of every score, until
SEARCH_APPEND_SHARE of the rows are appended or removed; shared, such a version
is stored as its appended rows beside its base's files."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from django.db.models import F

from documents.models import Document, KnowledgeBase
from retrieval import bm25, vector_index
from retrieval.bm25 import Postings, Segments
from retrieval.index import SnapshotCache, snapshot_cache
from retrieval.models import Chunk
from retrieval.search import search
from retrieval.tokens import keyword_tokens
from tests.retrieval.test_bm25 import WORDS, random_index

pytestmark = pytest.mark.django_db

LEAVE = b"# Leave\n\nEvery employee receives 25 days of paid annual leave per year.\n"
LEAVE_2 = b"# Leave\n\nEvery employee receives 28 days of paid annual leave.\n"
HOTEL = b"# Hotels\n\nHotel costs are refunded up to 150 euros a night.\n"
TRAIN = b"# Trains\n\nTrain tickets are booked in second class.\n"
QUESTIONS = [
    "How many days of annual leave?",
    "hotel costs a night",
    "train tickets second class",
    "paid leave per year",
]


@pytest.fixture
def appending(settings):
    settings.SEARCH_APPEND_SHARE = 1.0


@pytest.fixture
def shared(settings, tmp_path):
    settings.SEARCH_SNAPSHOT_DIR = str(tmp_path / "snapshots")
    return tmp_path / "snapshots" / "kb-company"


def current():
    return snapshot_cache.snapshots(["kb-company"])[0]


def by_chunk(snapshot, rows, scores) -> dict[int, float]:
    return {
        int(snapshot.chunk_ids[row]): float(score)
        for row, score in zip(rows, scores, strict=True)
    }


def assert_searches_alike(appended, scratch):
    """The same chunks with the same scores, by keyword and by vector."""
    for question in QUESTIONS:
        tokens = keyword_tokens(question)
        ours = by_chunk(appended, *appended.keyword_top(tokens, 50))
        theirs = by_chunk(scratch, *scratch.keyword_top(tokens, 50))
        assert ours.keys() == theirs.keys()
        assert np.allclose([ours[k] for k in theirs], list(theirs.values()))
        vector = np.random.default_rng(len(question)).standard_normal(
            appended.dimension
        )
        ours = by_chunk(appended, *appended.nearest(vector, 50))
        theirs = by_chunk(scratch, *scratch.nearest(vector, 50))
        assert ours.keys() == theirs.keys()
        assert np.allclose([ours[k] for k in theirs], list(theirs.values()))
        for token in tokens:
            hashed = bm25.term_hash(token)
            assert appended.frequency(hashed) == scratch.frequency(hashed)


def stored_versions(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("v"))


def meta(folder, name) -> dict:
    return json.loads((folder / name / "meta.json").read_text())


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
    assert not scratch.segmented
    assert scratch.size == appended.size - len(appended.removed)
    assert_searches_alike(appended, scratch)


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


def test_a_shared_version_is_stored_as_its_appended_rows(
    appending, shared, ingest, knowledge_base
):
    first = ingest(knowledge_base, LEAVE, filename="leave.md")
    ingest(knowledge_base, HOTEL, filename="hotel.md")
    base = current()
    [base_name] = stored_versions(shared)

    ingest(knowledge_base, TRAIN, filename="train.md")
    appended = current()

    assert not appended.awaiting  # stored before the query was answered
    versions = stored_versions(shared)
    assert len(versions) == 2
    [delta] = [name for name in versions if name != base_name]
    assert meta(shared, delta)["base"] == base_name
    train_rows = Chunk.objects.filter(document__filename="train.md").count()
    assert np.load(shared / delta / "matrix.npy").shape[0] == train_rows
    assert appended.matrix is base.matrix

    other = SnapshotCache().snapshots(["kb-company"])[0]  # another process's
    assert isinstance(other.matrix, np.memmap)  # the base's files, mapped
    assert list(other.chunk_ids) == list(appended.chunk_ids)
    assert_searches_alike(other, appended)

    # The next one replaces the delta (its rows since the base), keeps the base.
    ingest(
        knowledge_base,
        LEAVE_2,
        filename="leave.md",
        family_id=first.family_id,
        version=2,
    )
    later = current()
    versions = stored_versions(shared)
    assert base_name in versions
    assert delta not in versions
    assert len(versions) == 2
    other = SnapshotCache().snapshots(["kb-company"])[0]
    assert_searches_alike(other, later)
    snapshot_cache.clear()
    scratch = current()
    assert_searches_alike(later, scratch)


def test_a_stored_delta_whose_base_is_gone_is_built_again(
    appending, shared, ingest, knowledge_base
):
    ingest(knowledge_base, LEAVE, filename="leave.md")
    current()
    [base_name] = stored_versions(shared)
    ingest(knowledge_base, HOTEL, filename="hotel.md")
    appended = current()
    shutil.rmtree(shared / base_name)

    other = SnapshotCache().snapshots(["kb-company"])[0]

    assert not other.segmented
    assert sorted(other.chunk_ids.tolist()) == sorted(appended.chunk_ids.tolist())
    assert_searches_alike(other, appended)


def split(postings: Postings, at: int) -> tuple[Postings, Postings]:
    """The postings of rows before `at`, and those of the rows from `at` on."""
    hashes, rows, counts = postings.entries()
    parts = []
    for inside in (rows < at, rows >= at):
        parts.append(
            Postings.merged(
                Postings().entries(), hashes[inside], rows[inside], counts[inside]
            )
        )
    return parts[0], parts[1]


def test_segments_score_as_the_index_of_the_rows_searched():
    postings, lengths = random_index(700, seed=8)
    base, appended = split(postings, 600)
    removed = np.arange(3, 700, 9, dtype=np.int64)
    segments = Segments(
        (base, appended),
        lengths,
        removed,
        tuple(
            bm25.removed_frequencies(part, removed, 700) for part in (base, appended)
        ),
    )
    # The index built anew: the rows searched, renumbered.
    keep = np.ones(700, dtype=bool)
    keep[removed] = False
    new_row = np.cumsum(keep) - 1
    hashes, rows, counts = postings.entries()
    inside = keep[rows]
    anew = Postings.merged(
        Postings().entries(),
        hashes[inside],
        new_row[rows[inside]].astype(np.int32),
        counts[inside],
    )
    rng = np.random.default_rng(9)
    for _ in range(100):
        question = [WORDS[w] for w in rng.integers(0, 80, size=rng.integers(1, 8))]
        question += ["w0"]
        expected = bm25.scores(anew, lengths[keep], question)

        scores = bm25.scores(segments, lengths, question)
        rows_found, top_scores = bm25.top(segments, lengths, question, 20)

        assert np.allclose(scores[keep], expected, rtol=1e-5)
        assert not scores[removed].any()
        assert not set(rows_found.tolist()) & set(removed.tolist())
        best = np.sort(expected)[::-1][:20]
        assert np.allclose(np.sort(top_scores)[::-1], best[best > 0], rtol=1e-5)
        some = np.flatnonzero(keep)[::13]
        assert np.allclose(
            bm25.at(segments, lengths, question, some), scores[some], rtol=1e-5
        )


def test_the_vector_list_covers_appended_rows_and_skips_removed_ones():
    rng = np.random.default_rng(4)
    vectors = rng.standard_normal((400, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    removed = np.arange(0, 400, 5, dtype=np.int64)
    searched = np.setdiff1d(np.arange(400), removed)
    approximate = vector_index.build(vectors[:300])
    approximate.uncovered = np.arange(300, 400, dtype=np.int64)
    found = 0
    for query in rng.standard_normal((20, 16)).astype(np.float32):
        expected = searched[np.argsort(-(vectors[searched] @ query))[:10]]
        for index in (None, approximate):
            rows, scores = vector_index.nearest(
                vectors[:300],
                index,
                query,
                10,
                appended=vectors[300:],
                removed=removed,
            )
            assert np.allclose(scores, vectors[rows] @ query)
            assert not set(rows.tolist()) & set(removed.tolist())
            # Appended rows are scored exactly beside the index: never missed.
            assert set(expected[expected >= 300].tolist()) <= set(rows.tolist())
            if index is None:
                assert rows.tolist() == expected.tolist()
            else:
                found += len(set(rows.tolist()) & set(expected.tolist()))
    assert found >= 0.9 * 20 * 10


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
    snapshot_cache.wait_for_index_builds()
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


def test_past_the_share_a_shared_snapshot_is_built_whole_in_the_background(
    settings, shared, ingest, knowledge_base
):
    settings.SEARCH_APPEND_SHARE = 0.4
    first = ingest(knowledge_base, LEAVE, filename="leave.md")
    ingest(knowledge_base, HOTEL, filename="hotel.md")
    ingest(knowledge_base, TRAIN, filename="train.md")
    current()
    [base_name] = stored_versions(shared)

    ingest(  # one row left out, one appended: past 0.4 of four
        knowledge_base,
        LEAVE_2,
        filename="leave.md",
        family_id=first.family_id,
        version=2,
    )
    appended = current()  # answered appended, before the whole is built
    assert appended.segmented
    snapshot_cache.wait_for_compactions()

    whole = current()
    assert not whole.segmented
    assert isinstance(whole.matrix, np.memmap)  # the stored whole version, mapped
    assert whole.version == appended.version
    assert whole.stored_as == appended.stored_as + "-whole"
    assert_searches_alike(whole, appended)

    # The next publish appends to it; the old base and the appended rows go.
    ingest(knowledge_base, b"# Taxis\n\nTaxis need a receipt.\n", filename="taxi.md")
    later = current()
    assert later.segmented
    assert later.base_name == whole.stored_as
    assert base_name not in stored_versions(shared)
    assert appended.stored_as not in stored_versions(shared)
    other = SnapshotCache().snapshots(["kb-company"])[0]
    assert_searches_alike(other, later)


def test_far_past_the_share_a_publish_builds_the_snapshot_whole(
    settings, shared, ingest, knowledge_base, monkeypatch
):
    settings.SEARCH_APPEND_SHARE = 0.1
    monkeypatch.setattr(snapshot_cache._compactions, "start", lambda *args: None)
    ingest(knowledge_base, LEAVE, filename="leave.md")
    ingest(knowledge_base, HOTEL, filename="hotel.md")
    current()

    ingest(knowledge_base, TRAIN, filename="train.md")  # a third of the rows

    snapshot = current()
    snapshot_cache.wait_for_saves()
    assert not current().segmented
    assert snapshot.size == Chunk.objects.count()
    assert len(stored_versions(shared)) == 1


def test_a_process_appends_to_the_version_another_one_built_whole(
    settings, shared, ingest, knowledge_base
):
    settings.SEARCH_APPEND_SHARE = 0.4
    first = ingest(knowledge_base, LEAVE, filename="leave.md")
    ingest(knowledge_base, HOTEL, filename="hotel.md")
    ingest(knowledge_base, TRAIN, filename="train.md")
    current()
    other = SnapshotCache()  # another process of the host
    ingest(
        knowledge_base,
        LEAVE_2,
        filename="leave.md",
        family_id=first.family_id,
        version=2,
    )
    appended = current()
    assert other.snapshots(["kb-company"])[0].segmented  # it read the rows appended
    snapshot_cache.wait_for_compactions()
    whole = current()
    assert not whole.segmented

    ingest(knowledge_base, b"# Taxis\n\nTaxis need a receipt.\n", filename="taxi.md")
    theirs = other.snapshots(["kb-company"])[0]  # this one stores the version

    assert theirs.base_name == whole.stored_as == f"{appended.stored_as}-whole"
    assert theirs.appended == 1
    assert_searches_alike(theirs, current())
    snapshot_cache.clear()
    assert_searches_alike(theirs, current())


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
