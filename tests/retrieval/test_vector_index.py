"""The approximate vector index: the vector list of knowledge bases past
SEARCH_ANN_MIN_CHUNKS."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from retrieval.search import search
from retrieval.search_backends.snapshots import cache, vector_index
from retrieval.search_backends.snapshots.cache import SnapshotCache, snapshot_cache

REPO = Path(__file__).resolve().parents[2]
LEAVE = b"# Leave\n\nEvery employee receives 25 days of paid annual leave per year.\n"
HOTEL = b"# Hotels\n\nHotel costs are refunded up to 150 euros a night.\n"
TRAIN = b"# Trains\n\nSecond-class train tickets are refunded in full.\n"


def unit_rows(count: int, dimension: int = 32, seed: int = 7) -> np.ndarray:
    rows = np.random.default_rng(seed).standard_normal((count, dimension))
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows.astype(np.float32)


def exact_top(matrix: np.ndarray, query: np.ndarray, count: int) -> set[int]:
    return set(np.argsort(-(matrix @ query))[:count].tolist())


def test_the_approximate_list_matches_exact_search_with_exact_scores():
    matrix = unit_rows(3000)
    approximate = vector_index.build(matrix)
    queries = unit_rows(50, seed=11)

    found = 0
    for query in queries:
        rows, scores = vector_index.nearest(matrix, approximate, query, 10)
        assert np.allclose(scores, matrix[rows] @ query)  # scored exactly
        assert list(scores) == sorted(scores, reverse=True)
        found += len(set(rows.tolist()) & exact_top(matrix, query, 10))

    assert found / (10 * len(queries)) >= 0.98


def test_exact_search_is_used_without_an_index():
    matrix = unit_rows(500)
    query = unit_rows(1, seed=3)[0]

    rows, _ = vector_index.nearest(matrix, None, query, 10)

    assert set(rows.tolist()) == exact_top(matrix, query, 10)


def test_a_carried_index_skips_dropped_rows_and_searches_new_ones_exactly():
    # Few rows: the candidates asked for are most of them, so the top ten
    # found is exact search's whatever the graph (its build is threaded).
    matrix = unit_rows(200)
    approximate = vector_index.build(matrix)
    query = matrix[5]
    # Row 5 goes (its document was archived); everything after it moves up one,
    # and a new row equal to the query joins at the end.
    new_row = np.arange(200) - 1
    new_row[:5] += 1
    new_row[5] = -1
    new_matrix = np.concatenate([np.delete(matrix, 5, axis=0), matrix[5:6]])

    carried = vector_index.carried(approximate, new_row, len(new_matrix))
    rows, scores = vector_index.nearest(new_matrix, carried, query, 10)

    assert carried is not None
    assert carried.index is approximate.index
    assert list(carried.uncovered) == [199]
    assert rows[0] == 199
    assert scores[0] == pytest.approx(1.0)
    assert set(rows.tolist()) == exact_top(new_matrix, query, 10)


def test_an_index_too_far_behind_is_due_to_be_built_again():
    approximate = vector_index.build(unit_rows(100))
    new_row = np.arange(100)

    assert not vector_index.due(vector_index.carried(approximate, new_row, 110), 110)
    assert vector_index.due(vector_index.carried(approximate, new_row, 112), 112)
    assert vector_index.due(None, 100)


def test_an_index_whose_rows_are_all_gone_leaves_exact_search_of_the_new_ones():
    matrix = unit_rows(200)
    approximate = vector_index.build(matrix[:100])
    carried = vector_index.carried(approximate, np.full(100, -1), 100)
    query = matrix[150]

    rows, scores = vector_index.nearest(matrix[100:], carried, query, 10)

    assert set(rows.tolist()) == exact_top(matrix[100:], query, 10)
    assert scores[0] == pytest.approx(1.0)


def test_rows_are_mapped_by_chunk_across_versions():
    old = np.array([7, 3, 9, 12])
    new = np.array([12, 5, 7, 20, 3])

    assert vector_index.row_map(old, new).tolist() == [2, 4, -1, 0]
    assert vector_index.row_map(old, np.zeros(0)).tolist() == [-1, -1, -1, -1]


@pytest.fixture
def approximate_from_one_chunk(settings):
    settings.SEARCH_ANN_MIN_CHUNKS = 1
    snapshot_cache.clear()
    yield
    snapshot_cache.clear()


@pytest.mark.django_db
def test_search_finds_what_a_publish_adds_and_never_what_it_archives(
    approximate_from_one_chunk, ingest, viewer, knowledge_base, monkeypatch
):
    monkeypatch.setattr(vector_index, "REBUILD_SHARE", 1.0)  # carry, never rebuild
    leave = ingest(knowledge_base, LEAVE, filename="leave.md")
    hotel = ingest(knowledge_base, HOTEL, filename="hotel.md")
    snapshot_cache.snapshots(["kb-company"])
    snapshot_cache.wait_for("index")
    first = snapshot_cache.snapshots(["kb-company"])[0]
    assert first.approximate is not None

    newer = ingest(
        knowledge_base,
        b"# Leave\n\nEvery employee receives 30 days of paid annual leave per year.\n",
        filename="leave.md",
        family_id=leave.family_id,
        version=2,
    )
    passages = search(
        user=viewer, question="days of annual leave", profile="vector"
    ).passages

    snapshot = snapshot_cache.snapshots(["kb-company"])[0]
    assert passages[0].document_id == newer.pk
    assert leave.pk not in {p.document_id for p in passages}
    hotels = search(user=viewer, question="hotel costs", profile="vector").passages
    assert hotels[0].document_id == hotel.pk
    assert snapshot.approximate.index is first.approximate.index
    assert len(snapshot.approximate.uncovered) == 1


@pytest.mark.django_db
def test_processes_of_a_host_share_one_stored_index(
    approximate_from_one_chunk, settings, tmp_path, ingest, viewer, knowledge_base
):
    settings.SEARCH_SNAPSHOT_DIR = str(tmp_path / "snapshots")
    folder = tmp_path / "snapshots" / "kb-company"
    ingest(knowledge_base, LEAVE)
    snapshot_cache.snapshots(["kb-company"])
    snapshot_cache.wait_for("index")
    built = snapshot_cache.snapshots(["kb-company"])[0]
    [stored] = [p.name for p in folder.iterdir() if p.name.endswith(".usearch")]

    other = SnapshotCache().snapshots(["kb-company"])[0]  # another process's cache
    rows, _ = other.nearest(built.matrix[0], 1)

    assert other.approximate.file == stored == built.approximate.file
    assert list(rows) == [0]

    # A publish carries the index; one built again replaces the stored file.
    ingest(knowledge_base, HOTEL, filename="hotel.md")
    ingest(knowledge_base, TRAIN, filename="train.md")
    search(user=viewer, question="train tickets", profile="vector")
    snapshot_cache.wait_for("index")
    search(user=viewer, question="train tickets", profile="vector")
    current = snapshot_cache.snapshots(["kb-company"])[0]
    stem = current.approximate.file.removesuffix(".usearch")
    files = sorted(p.name for p in folder.iterdir() if p.name.startswith("ann-"))
    assert current.approximate.file != stored
    assert files == [f"{stem}.keys.npy", f"{stem}.usearch"]
    assert search(user=viewer, question="train tickets", profile="vector").passages


class HeldBuild:
    """`vector_index.build` that waits until the test lets it go on."""

    def __init__(self, monkeypatch) -> None:
        self.started = threading.Event()
        self.go_on = threading.Event()
        self.calls = 0
        self._build = vector_index.build
        monkeypatch.setattr(vector_index, "build", self)

    def __call__(self, matrix, **options):
        self.calls += 1
        self.started.set()
        assert self.go_on.wait(30), "the test never let the build go on"
        return self._build(matrix, **options)


@pytest.mark.django_db
def test_a_search_never_waits_for_the_index_it_needs(
    approximate_from_one_chunk, monkeypatch, ingest, viewer, knowledge_base
):
    held = HeldBuild(monkeypatch)
    hotel = ingest(knowledge_base, HOTEL, filename="hotel.md")
    ingest(knowledge_base, LEAVE, filename="leave.md")

    # The build is under way and held: the search is answered by exact search.
    passages = search(user=viewer, question="hotel costs", profile="vector").passages
    assert held.started.wait(10)
    assert passages[0].document_id == hotel.pk
    assert snapshot_cache.snapshots(["kb-company"])[0].approximate is None

    held.go_on.set()
    snapshot_cache.wait_for("index", 10)

    snapshot = snapshot_cache.snapshots(["kb-company"])[0]
    assert snapshot.approximate is not None
    assert len(snapshot.approximate.uncovered) == 0
    again = search(user=viewer, question="hotel costs", profile="vector").passages
    assert [p.chunk_id for p in again] == [p.chunk_id for p in passages]
    assert held.calls == 1


@pytest.mark.django_db
def test_an_index_built_while_a_publish_lands_goes_to_the_new_version(
    approximate_from_one_chunk, monkeypatch, ingest, viewer, knowledge_base
):
    monkeypatch.setattr(vector_index, "REBUILD_SHARE", 1.0)
    held = HeldBuild(monkeypatch)
    leave = ingest(knowledge_base, LEAVE, filename="leave.md")
    search(user=viewer, question="annual leave", profile="vector")
    assert held.started.wait(10)

    train = ingest(knowledge_base, TRAIN, filename="train.md")
    newer = ingest(
        knowledge_base,
        b"# Leave\n\nEvery employee receives 30 days of paid annual leave per year.\n",
        filename="leave.md",
        family_id=leave.family_id,
        version=2,
    )
    search(user=viewer, question="train tickets", profile="vector")
    held.go_on.set()
    snapshot_cache.wait_for("index", 10)

    snapshot = snapshot_cache.snapshots(["kb-company"])[0]
    rows_of = {
        document: {
            row
            for row in range(snapshot.size)
            if snapshot.document_ids[row].tobytes() == document.pk.bytes
        }
        for document in (train, newer)
    }
    assert snapshot.approximate is not None
    assert (
        set(snapshot.approximate.uncovered.tolist()) == rows_of[train] | rows_of[newer]
    )
    assert (snapshot.approximate.rows < 0).sum() == 1  # the archived version 1
    leave_found = search(user=viewer, question="annual leave", profile="vector")
    assert leave_found.passages[0].document_id == newer.pk
    assert leave.pk not in {p.document_id for p in leave_found.passages}
    trains = search(user=viewer, question="train tickets", profile="vector")
    assert trains.passages[0].document_id == train.pk


@pytest.mark.django_db
def test_one_process_of_a_host_builds_the_index_and_the_others_take_it_up(
    approximate_from_one_chunk,
    monkeypatch,
    settings,
    tmp_path,
    ingest,
    viewer,
    knowledge_base,
):
    settings.SEARCH_SNAPSHOT_DIR = str(tmp_path / "snapshots")
    monkeypatch.setattr(cache, "INDEX_POLL_SECONDS", 0.0)
    held = HeldBuild(monkeypatch)
    ingest(knowledge_base, LEAVE)
    snapshot_cache.snapshots(["kb-company"])
    assert held.started.wait(10)

    other = SnapshotCache()  # another process: the build is not its to start
    assert other.snapshots(["kb-company"])[0].approximate is None
    other.wait_for("index", 10)
    assert held.calls == 1

    held.go_on.set()
    snapshot_cache.wait_for("index", 10)
    built = snapshot_cache.snapshots(["kb-company"])[0].approximate
    taken_up = other.snapshots(["kb-company"])[0].approximate

    assert built is not None
    assert taken_up is not None
    assert taken_up.file == built.file
    assert held.calls == 1


@pytest.mark.django_db
def test_a_failed_index_build_leaves_exact_search_and_is_tried_again(
    approximate_from_one_chunk, monkeypatch, ingest, viewer, knowledge_base, caplog
):
    monkeypatch.setattr(cache, "INDEX_POLL_SECONDS", 0.0)
    real_build = vector_index.build
    calls = []

    def failing_once(matrix, **options):
        calls.append(len(matrix))
        if len(calls) == 1:
            raise MemoryError
        return real_build(matrix, **options)

    monkeypatch.setattr(vector_index, "build", failing_once)
    hotel = ingest(knowledge_base, HOTEL, filename="hotel.md")

    first = search(user=viewer, question="hotel costs", profile="vector")
    snapshot_cache.wait_for("index", 10)
    assert "search index of knowledge base kb-company failed" in caplog.text
    assert snapshot_cache.snapshots(["kb-company"])[0].approximate is None
    assert first.passages[0].document_id == hotel.pk

    snapshot_cache.snapshots(["kb-company"])  # the next query tries again
    snapshot_cache.wait_for("index", 10)
    assert snapshot_cache.snapshots(["kb-company"])[0].approximate is not None
    assert len(calls) == 2


HOLD_INDEX_LOCK = """
import sys, time
from pathlib import Path
from retrieval.search_backends.snapshots import files
held = files.lock(Path(sys.argv[1]), "kb-company", "index", wait=False)
print("held" if held else "not held", flush=True)
time.sleep(120)
"""


@pytest.mark.django_db
def test_an_index_build_killed_on_the_way_is_taken_over_by_another_process(
    approximate_from_one_chunk, monkeypatch, settings, tmp_path, ingest, knowledge_base
):
    root = tmp_path / "snapshots"
    settings.SEARCH_SNAPSHOT_DIR = str(root)
    monkeypatch.setattr(cache, "INDEX_POLL_SECONDS", 0.0)
    ingest(knowledge_base, LEAVE)
    builder = subprocess.Popen(
        [sys.executable, "-c", HOLD_INDEX_LOCK, str(root)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert builder.stdout.readline().strip() == "held"

        snapshot_cache.snapshots(["kb-company"])  # the build is the other's
        snapshot_cache.wait_for("index", 10)
        assert snapshot_cache.snapshots(["kb-company"])[0].approximate is None
        # What it is writing when it dies (written before the kill: a build
        # waiting for the lock may take it over at once).
        leftover = root / "kb-company" / ".ann-0123.4242.tmp"
        leftover.write_bytes(b"half an index")
    finally:
        builder.send_signal(signal.SIGKILL)
        builder.wait(10)
        builder.stdout.close()

    snapshot_cache.snapshots(["kb-company"])  # its lock died with it
    snapshot_cache.wait_for("index", 10)
    assert snapshot_cache.snapshots(["kb-company"])[0].approximate is not None
    assert not leftover.exists()


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
