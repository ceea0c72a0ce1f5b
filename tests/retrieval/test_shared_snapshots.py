"""Search snapshots stored as files that the processes of a host map and share."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from retrieval import index, snapshot_files
from retrieval.index import SnapshotCache, snapshot_cache
from retrieval.models import Chunk
from retrieval.search import search
from tests.conftest import REPO

pytestmark = pytest.mark.django_db

LEAVE = b"# Leave\n\nEvery employee receives 25 days of paid annual leave per year.\n"
HOTEL = b"# Hotels\n\nHotel costs are refunded up to 150 euros a night.\n"


@pytest.fixture
def shared(settings, tmp_path):
    settings.SEARCH_SNAPSHOT_DIR = str(tmp_path / "snapshots")
    return tmp_path / "snapshots" / "kb-company"


def stored_versions(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("v"))


def test_a_second_process_maps_the_first_ones_snapshot(
    shared, ingest, knowledge_base, monkeypatch
):
    ingest(knowledge_base, LEAVE)
    built = snapshot_cache.snapshots(["kb-company"])[0]
    assert len(stored_versions(shared)) == 1

    def refuse(snapshot, version):
        raise AssertionError("the stored snapshot was built again")

    monkeypatch.setattr(index, "_refreshed", refuse)
    other = SnapshotCache().snapshots(["kb-company"])[0]  # another process's cache

    assert isinstance(other.matrix, np.memmap)
    assert isinstance(other.postings.rows, np.memmap)
    assert not other.matrix.flags.writeable
    assert list(other.chunk_ids) == list(built.chunk_ids)
    assert list(other.document_ids) == list(built.document_ids)
    tokens = ["annual", "leave"]
    assert np.allclose(other.bm25(tokens), built.bm25(tokens))


def test_a_publish_stores_the_next_version_and_drops_the_old(
    shared, ingest, viewer, knowledge_base
):
    ingest(knowledge_base, LEAVE)
    assert search(user=viewer, question="annual leave").passages
    first = stored_versions(shared)

    hotel = ingest(knowledge_base, HOTEL, filename="hotel.md")
    passages = search(user=viewer, question="hotel costs a night").passages
    snapshot_cache.wait_for_saves()  # written in the background

    assert passages[0].document_id == hotel.pk
    assert len(stored_versions(shared)) == 1
    assert stored_versions(shared) != first
    snapshot = snapshot_cache.snapshots(["kb-company"])[0]
    assert snapshot.size == Chunk.objects.count()
    assert isinstance(snapshot.matrix, np.memmap)  # its own copy is gone


def test_a_publish_is_searched_at_once_while_another_process_writes(
    shared, ingest, viewer, knowledge_base
):
    ingest(knowledge_base, LEAVE)
    assert search(user=viewer, question="annual leave").passages
    first = stored_versions(shared)
    writer = snapshot_files.try_build_lock(shared.parent, "kb-company")

    hotel = ingest(knowledge_base, HOTEL, filename="hotel.md")
    passages = search(user=viewer, question="hotel costs a night").passages

    assert passages[0].document_id == hotel.pk
    snapshot_cache.wait_for_saves()
    assert stored_versions(shared) == first  # the other process holds the lock
    assert not isinstance(snapshot_cache.snapshots(["kb-company"])[0].matrix, np.memmap)

    writer.release()  # it died before writing: this process writes it
    search(user=viewer, question="hotel costs a night")
    snapshot_cache.wait_for_saves()
    snapshot = snapshot_cache.snapshots(["kb-company"])[0]
    assert stored_versions(shared) != first
    assert isinstance(snapshot.matrix, np.memmap)
    assert snapshot.size == Chunk.objects.count()


def test_a_version_that_cannot_be_written_is_searched_from_memory(
    shared, ingest, viewer, knowledge_base, monkeypatch, caplog
):
    ingest(knowledge_base, LEAVE)
    assert search(user=viewer, question="annual leave").passages

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(snapshot_files, "save", full)
    hotel = ingest(knowledge_base, HOTEL, filename="hotel.md")
    passages = search(user=viewer, question="hotel costs a night").passages
    snapshot_cache.wait_for_saves()

    assert passages[0].document_id == hotel.pk
    assert "not stored" in caplog.text
    assert search(user=viewer, question="hotel costs a night").passages


def test_a_snapshot_of_chunks_needing_reindex_is_not_stored(
    shared, ingest, knowledge_base
):
    ingest(knowledge_base, LEAVE)
    Chunk.objects.update(tokenizer="", terms=b"")
    snapshot_cache.clear()

    snapshot = snapshot_cache.snapshots(["kb-company"])[0]

    assert snapshot.stale == snapshot.size
    assert stored_versions(shared) == []


MAPPED = """
from django.contrib.auth.models import User
from retrieval.search import search
passages = search(user=User.objects.get(username="vera"), question="annual leave")
assert passages.passages
print("\\n".join(sorted({line.split()[-1] for line in open("/proc/self/maps")
                         if "/snapshots/" in line and line.endswith(".npy\\n")})))
"""


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
def test_processes_of_a_host_map_the_same_files(
    ingest, viewer, knowledge_base, process_env
):
    ingest(knowledge_base, LEAVE)

    def mapped_files() -> list[str]:
        out = subprocess.run(
            [sys.executable, str(REPO / "manage.py"), "shell", "-c", MAPPED],
            env=process_env,
            cwd=REPO,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        return out.split()

    first, second = mapped_files(), mapped_files()

    assert first
    assert any(name.endswith("matrix.npy") for name in first)
    assert first == second


def test_a_folder_that_cannot_be_written_leaves_search_working(
    settings, tmp_path, ingest, viewer, knowledge_base, caplog
):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the folder should be")
    settings.SEARCH_SNAPSHOT_DIR = str(blocked)
    ingest(knowledge_base, LEAVE)

    passages = search(user=viewer, question="annual leave").passages

    assert passages
    assert "cannot be shared" in caplog.text
