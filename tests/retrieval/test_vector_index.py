"""The approximate vector index: the vector list of knowledge bases past
SEARCH_ANN_MIN_CHUNKS."""

from __future__ import annotations

import numpy as np
import pytest

from retrieval import vector_index
from retrieval.index import SnapshotCache, snapshot_cache
from retrieval.search import search

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
    matrix = unit_rows(1000)
    approximate = vector_index.build(matrix)
    query = matrix[5]
    # Row 5 goes (its document was archived); everything after it moves up one,
    # and a new row equal to the query joins at the end.
    new_row = np.arange(1000) - 1
    new_row[:5] += 1
    new_row[5] = -1
    new_matrix = np.concatenate([np.delete(matrix, 5, axis=0), matrix[5:6]])

    carried = vector_index.carried(approximate, new_row, len(new_matrix))
    rows, scores = vector_index.nearest(new_matrix, carried, query, 10)

    assert carried is not None
    assert carried.index is approximate.index
    assert list(carried.uncovered) == [999]
    assert rows[0] == 999
    assert scores[0] == pytest.approx(1.0)
    assert set(rows.tolist()) == exact_top(new_matrix, query, 10)


def test_an_index_too_far_behind_is_built_again():
    approximate = vector_index.build(unit_rows(100))
    new_row = np.arange(100)

    assert vector_index.carried(approximate, new_row, 110) is not None
    assert vector_index.carried(approximate, new_row, 112) is None


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
    built = snapshot_cache.snapshots(["kb-company"])[0]
    [stored] = [p.name for p in folder.iterdir() if p.name.startswith("ann-")]

    other = SnapshotCache().snapshots(["kb-company"])[0]  # another process's cache
    rows, _ = other.nearest(built.matrix[0], 1)

    assert other.approximate.file == stored == built.approximate.file
    assert list(rows) == [0]

    # A publish carries the index; one built again replaces the stored file.
    ingest(knowledge_base, HOTEL, filename="hotel.md")
    ingest(knowledge_base, TRAIN, filename="train.md")
    search(user=viewer, question="train tickets", profile="vector")
    files = [p.name for p in folder.iterdir() if p.name.startswith("ann-")]
    current = snapshot_cache.snapshots(["kb-company"])[0]
    assert files == [current.approximate.file]
    assert search(user=viewer, question="train tickets", profile="vector").passages
