"""Search snapshots stored as files that the processes of a host map and share."""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading

import numpy as np
import pytest
from django.db import connections

from retrieval.models import Chunk
from retrieval.search import search
from retrieval.search_backends.snapshots import bm25, files, refresh
from retrieval.search_backends.snapshots.cache import SnapshotCache, snapshot_cache
from tests.conftest import REPO
from tests.retrieval.snapshot_checks import (
    LEAVE_2,
    assert_searches_alike,
    current,
    mapped,
    meta,
)

pytestmark = pytest.mark.django_db

LEAVE = b"# Leave\n\nEvery employee receives 25 days of paid annual leave per year.\n"
HOTEL = b"# Hotels\n\nHotel costs are refunded up to 150 euros a night.\n"
TRAIN = b"# Trains\n\nTrain tickets are booked in second class.\n"


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

    monkeypatch.setattr(refresh, "rebuilt_at", refuse)
    other = SnapshotCache().snapshots(["kb-company"])[0]  # another process's cache

    assert mapped(other.matrix)
    assert mapped(other.postings.rows)
    assert not other.matrix.flags.writeable
    assert list(other.chunk_ids) == list(built.chunk_ids)
    assert list(other.document_ids) == list(built.document_ids)
    tokens = ["annual", "leave"]
    assert np.allclose(
        bm25.scores(other.segments, tokens), bm25.scores(built.segments, tokens)
    )


def test_a_publish_stores_the_next_version_and_drops_the_old(
    shared, ingest, viewer, knowledge_base
):
    ingest(knowledge_base, LEAVE)
    assert search(user=viewer, question="annual leave").passages
    first = stored_versions(shared)

    hotel = ingest(knowledge_base, HOTEL, filename="hotel.md")
    passages = search(user=viewer, question="hotel costs a night").passages
    snapshot_cache.wait_for("save")  # written in the background

    assert passages[0].document_id == hotel.pk
    assert len(stored_versions(shared)) == 1
    assert stored_versions(shared) != first
    snapshot = snapshot_cache.snapshots(["kb-company"])[0]
    assert snapshot.size == Chunk.objects.count()
    assert mapped(snapshot.matrix)  # its own copy is gone


def test_a_publish_is_answered_before_its_files_are_written(
    shared, ingest, viewer, knowledge_base, monkeypatch
):
    ingest(knowledge_base, LEAVE)
    assert search(user=viewer, question="annual leave").passages
    first = stored_versions(shared)
    writing, written = threading.Event(), threading.Event()
    save = files.store

    def slow_save(*args, **kwargs):
        writing.set()
        assert written.wait(10)
        save(*args, **kwargs)

    monkeypatch.setattr(files, "store", slow_save)
    hotel = ingest(knowledge_base, HOTEL, filename="hotel.md")

    passages = search(user=viewer, question="hotel costs a night").passages

    assert passages[0].document_id == hotel.pk
    assert writing.wait(10)
    assert stored_versions(shared) == first
    copy = snapshot_cache.snapshots(["kb-company"])[0]
    assert not mapped(copy.matrix)
    assert snapshot_cache.entry("kb-company").awaiting
    written.set()
    snapshot_cache.wait_for("save")
    handed = snapshot_cache.snapshots(["kb-company"])[0]
    assert stored_versions(shared) != first
    assert mapped(handed.matrix)  # handed over: the copy is gone
    assert list(handed.chunk_ids) == list(copy.chunk_ids)


@pytest.mark.django_db(transaction=True)  # the query's thread sees the rows
def test_a_query_waiting_for_this_processs_own_write_gets_its_answer(
    shared, ingest, viewer, knowledge_base, monkeypatch
):
    ingest(knowledge_base, LEAVE)
    assert search(user=viewer, question="annual leave").passages
    writing, written = threading.Event(), threading.Event()
    save = files.store

    def slow_save(*args, **kwargs):
        writing.set()
        assert written.wait(10)
        save(*args, **kwargs)

    monkeypatch.setattr(files, "store", slow_save)
    hotel = ingest(knowledge_base, HOTEL, filename="hotel.md")
    search(user=viewer, question="hotel costs a night")
    assert writing.wait(10)
    snapshot_cache.clear()  # no copy to bring up to date: the query waits
    answers = []

    def ask():
        try:
            answers.append(search(user=viewer, question="hotel costs a night"))
        finally:
            connections.close_all()

    query = threading.Thread(target=ask)
    query.start()

    written.set()
    query.join(10)

    assert not query.is_alive(), "the query and the write wait for each other"
    assert answers[0].passages[0].document_id == hotel.pk


def test_a_version_published_during_a_write_is_written_next(
    shared, ingest, viewer, knowledge_base, monkeypatch
):
    ingest(knowledge_base, LEAVE)
    assert search(user=viewer, question="annual leave").passages
    written = threading.Event()
    names = []
    save = files.store

    def slow_save(root, knowledge_base_id, name, *args, **kwargs):
        names.append(name)
        assert written.wait(10)
        save(root, knowledge_base_id, name, *args, **kwargs)

    monkeypatch.setattr(files, "store", slow_save)
    ingest(knowledge_base, HOTEL, filename="hotel.md")
    search(user=viewer, question="hotel costs a night")
    train = ingest(knowledge_base, TRAIN, filename="train.md")

    passages = search(user=viewer, question="train tickets").passages

    assert passages[0].document_id == train.pk  # not waiting for the first write
    written.set()
    snapshot_cache.wait_for("save")
    snapshot = snapshot_cache.snapshots(["kb-company"])[0]
    assert len(names) == 2
    assert stored_versions(shared) == [names[-1]]
    assert mapped(snapshot.matrix)
    assert snapshot.size == Chunk.objects.count()


def test_a_version_that_cannot_be_written_is_searched_from_memory(
    shared, ingest, viewer, knowledge_base, monkeypatch, caplog
):
    ingest(knowledge_base, LEAVE)
    assert search(user=viewer, question="annual leave").passages
    attempts = []

    def full(*args, **kwargs):
        attempts.append(args)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files, "store", full)
    hotel = ingest(knowledge_base, HOTEL, filename="hotel.md")
    passages = search(user=viewer, question="hotel costs a night").passages
    snapshot_cache.wait_for("save")

    assert passages[0].document_id == hotel.pk
    assert "not stored" in caplog.text
    again = search(user=viewer, question="hotel costs a night").passages
    snapshot_cache.wait_for("save")
    assert again[0].document_id == hotel.pk
    assert len(attempts) == 1  # not written again at every query
    assert not snapshot_cache.entry("kb-company").awaiting


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


def test_a_version_left_half_written_by_a_killed_process_is_deleted(
    shared, ingest, viewer, knowledge_base
):
    ingest(knowledge_base, LEAVE)
    assert search(user=viewer, question="annual leave").passages
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    dead = shared / f".v9-1-abc.{gone.stdout.strip()}.tmp"
    alive = shared / ".v9-1-abc.1.tmp"  # pid 1 lives: its writer may go on
    for scratch in (dead, alive):
        scratch.mkdir()
        (scratch / "matrix.npy").write_bytes(b"half")

    ingest(knowledge_base, HOTEL, filename="hotel.md")
    assert search(user=viewer, question="hotel costs a night").passages
    snapshot_cache.wait_for("save")

    assert not dead.exists()
    assert alive.exists()


def test_a_shared_version_is_stored_as_its_appended_rows(
    appending, shared, ingest, knowledge_base
):
    first = ingest(knowledge_base, LEAVE, filename="leave.md")
    ingest(knowledge_base, HOTEL, filename="hotel.md")
    base = current()
    [base_name] = stored_versions(shared)

    ingest(knowledge_base, TRAIN, filename="train.md")
    appended = current()

    assert not snapshot_cache.entry("kb-company").awaiting  # stored before answering
    versions = stored_versions(shared)
    assert len(versions) == 2
    [delta] = [name for name in versions if name != base_name]
    assert meta(shared, delta)["base"] == base_name
    train_rows = Chunk.objects.filter(document__filename="train.md").count()
    assert np.load(shared / delta / "matrix.npy").shape[0] == train_rows
    assert appended.matrix is base.matrix

    other = SnapshotCache().snapshots(["kb-company"])[0]  # another process's
    assert mapped(other.matrix)  # the base's files, mapped
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
