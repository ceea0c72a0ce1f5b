"""`SnapshotCache._compact`: a shared snapshot past SEARCH_APPEND_SHARE is built
in one piece again in the background, and the next publish appends to it."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from documents.models import KnowledgeBase
from retrieval.models import Chunk
from retrieval.search_backends.snapshots import refresh
from retrieval.search_backends.snapshots.cache import SnapshotCache, snapshot_cache
from tests.conftest import REPO
from tests.retrieval.snapshot_checks import (
    HOTEL,
    LEAVE,
    LEAVE_2,
    TAXI,
    TRAIN,
    assert_searches_alike,
    current,
    entry,
    mapped,
    stored_versions,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def held_compaction(monkeypatch) -> threading.Event:
    """Compactions wait until the test sets the event: what the appended version
    was is read before the whole one can take its place."""
    go_on = threading.Event()
    compacted = refresh.compacted

    def held(snapshot):
        assert go_on.wait(10), "the test never let the compaction go on"
        return compacted(snapshot)

    monkeypatch.setattr(refresh, "compacted", held)
    return go_on


def test_past_the_share_a_shared_snapshot_is_built_whole_in_the_background(
    settings, shared, ingest, knowledge_base, held_compaction
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
    appended_name = entry().stored_as
    assert appended.segmented
    held_compaction.set()
    snapshot_cache.wait_for("compaction")

    whole = current()
    whole_name = entry().stored_as
    assert not whole.segmented
    assert mapped(whole.matrix)  # the stored whole version, mapped
    assert whole.version == appended.version
    assert whole_name == appended_name + "-whole"
    assert_searches_alike(whole, appended)

    # The next publish appends to it; the old base and the appended rows go.
    ingest(knowledge_base, TAXI, filename="taxi.md")
    later = current()
    assert later.segmented
    assert later.base_name == whole_name
    assert base_name not in stored_versions(shared)
    assert appended_name not in stored_versions(shared)
    other = SnapshotCache().snapshots(["kb-company"])[0]
    assert_searches_alike(other, later)


def test_far_past_the_share_a_publish_builds_the_snapshot_whole(
    settings, shared, ingest, knowledge_base, monkeypatch
):
    settings.SEARCH_APPEND_SHARE = 0.1
    monkeypatch.setattr(snapshot_cache, "_compact", lambda *args: None)
    ingest(knowledge_base, LEAVE, filename="leave.md")
    ingest(knowledge_base, HOTEL, filename="hotel.md")
    current()

    ingest(knowledge_base, TRAIN, filename="train.md")  # a third of the rows

    snapshot = current()
    snapshot_cache.wait_for("save")
    assert not current().segmented
    assert snapshot.size == Chunk.objects.count()
    assert len(stored_versions(shared)) == 1


def test_a_process_appends_to_the_version_another_one_built_whole(
    settings, shared, ingest, knowledge_base, held_compaction
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
    current()
    appended_name = entry().stored_as
    assert other.snapshots(["kb-company"])[0].segmented  # it read the rows appended
    held_compaction.set()
    snapshot_cache.wait_for("compaction")
    assert not current().segmented
    whole_name = entry().stored_as

    ingest(knowledge_base, TAXI, filename="taxi.md")
    theirs = other.snapshots(["kb-company"])[0]  # this one stores the version

    assert theirs.base_name == whole_name == f"{appended_name}-whole"
    assert theirs.appended == 1
    assert_searches_alike(theirs, current())
    snapshot_cache.clear()
    assert_searches_alike(theirs, current())


HOLD_COMPACTION_LOCK = """
import os, sys, time
from pathlib import Path
from retrieval.search_backends.snapshots import files
root = Path(sys.argv[1])
held = files.lock(root, "kb-company", "compaction", wait=False)
folder = files.folder(root, "kb-company")
scratch = folder / f".v9-1-abc-whole.{os.getpid()}.tmp"
scratch.mkdir()
(scratch / "matrix.npy").write_bytes(b"half a version")
print("held" if held else "not held", scratch, flush=True)
time.sleep(120)
"""


def test_a_compaction_killed_on_the_way_is_taken_over_by_another_process(
    settings, shared, ingest, knowledge_base
):
    settings.SEARCH_APPEND_SHARE = 0.4
    first = ingest(knowledge_base, LEAVE, filename="leave.md")
    ingest(knowledge_base, HOTEL, filename="hotel.md")
    ingest(knowledge_base, TRAIN, filename="train.md")
    current()
    builder = subprocess.Popen(
        [sys.executable, "-c", HOLD_COMPACTION_LOCK, str(shared.parent)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        held, scratch = builder.stdout.readline().split()
        assert held == "held"
        ingest(
            knowledge_base,
            LEAVE_2,
            filename="leave.md",
            family_id=first.family_id,
            version=2,
        )
        current()  # past the share: the whole version is the other process's
        snapshot_cache.wait_for("compaction", 10)
        assert current().segmented
    finally:
        builder.send_signal(signal.SIGKILL)
        builder.wait(10)
        builder.stdout.close()

    ingest(knowledge_base, TAXI, filename="taxi.md")
    current()  # its lock died with it: this process builds it
    snapshot_cache.wait_for("compaction", 10)

    assert not current().segmented
    assert not Path(scratch).exists()  # what it was writing, deleted
    snapshot_cache.clear()
    assert_searches_alike(current(), SnapshotCache().snapshots(["kb-company"])[0])


def test_a_version_built_whole_is_dropped_once_a_newer_base_replaces_it(
    settings, shared, ingest, knowledge_base
):
    settings.SEARCH_APPEND_SHARE = 0.4
    first = ingest(knowledge_base, LEAVE, filename="leave.md")
    ingest(knowledge_base, HOTEL, filename="hotel.md")
    ingest(knowledge_base, TRAIN, filename="train.md")
    current()
    ingest(
        knowledge_base,
        LEAVE_2,
        filename="leave.md",
        family_id=first.family_id,
        version=2,
    )
    current()
    snapshot_cache.wait_for("compaction")
    current()
    whole = entry().stored_as
    assert whole in stored_versions(shared)

    settings.SEARCH_APPEND_SHARE = 0.01  # far past it: the next is built whole
    ingest(knowledge_base, TAXI, filename="taxi.md")
    current()
    snapshot_cache.wait_for("save")
    ingest(knowledge_base, b"# Meals\n\nMeals are paid.\n", filename="meals.md")
    current()
    snapshot_cache.wait_for("save")

    assert whole not in stored_versions(shared)
    assert len(stored_versions(shared)) == 1


def test_a_version_built_whole_before_a_restore_is_not_appended_to(
    settings, shared, ingest, knowledge_base
):
    settings.SEARCH_APPEND_SHARE = 0.4
    first = ingest(knowledge_base, LEAVE, filename="leave.md")
    ingest(knowledge_base, HOTEL, filename="hotel.md")
    ingest(knowledge_base, TRAIN, filename="train.md")
    current()
    ingest(
        knowledge_base,
        LEAVE_2,
        filename="leave.md",
        family_id=first.family_id,
        version=2,
    )
    current()
    snapshot_cache.wait_for("compaction")
    current()
    whole = entry().stored_as
    other = SnapshotCache()
    other.snapshots(["kb-company"])

    # A database restored from a backup: the version numbers go back.
    KnowledgeBase.objects.filter(pk="kb-company").update(index_version=1)
    ingest(knowledge_base, TAXI, filename="taxi.md")
    theirs = other.snapshots(["kb-company"])[0]

    assert theirs.base_name != whole
    snapshot_cache.clear()
    assert_searches_alike(theirs, current())
