"""Appended snapshots built in one piece again, in the background.

A snapshot brought up to date by appending is built whole again once its rows
appended and left out pass SEARCH_APPEND_SHARE. With shared snapshots that would
make one publish wait for the whole version, built and then written, so a
thread does it once the publish is answered: it builds the same version in one
piece from the snapshot in memory (no query), stores it beside the appended one
(`files.whole_name`) and hands the mapped files to the cache. The next
publish on the host appends to it (`whole.json` names it). One process of the
host does it at a time (a non-blocking lock file).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

from . import files, refresh, vector_index
from .snapshot import Snapshot

logger = logging.getLogger(__name__)

# Called with the appended snapshot and the stored whole one, mapped.
Done = Callable[[Snapshot, Snapshot], None]


class Compactions:
    """The compactions of one process, one thread per knowledge base at most."""

    def __init__(self, done: Done) -> None:
        self._done = done
        self._threads: dict[str, threading.Thread] = {}
        self._guard = threading.Lock()

    def start(self, root: Path, snapshot: Snapshot) -> None:
        """Build `snapshot` (stored as appended rows) whole, unless this process
        builds one of its knowledge base already."""
        knowledge_base_id = snapshot.knowledge_base_id
        with self._guard:
            if knowledge_base_id in self._threads:
                return
            thread = threading.Thread(
                target=self._compact,
                args=(root, snapshot),
                name=f"search-compaction-{knowledge_base_id}",
                daemon=True,
            )
            self._threads[knowledge_base_id] = thread
        thread.start()

    def wait(self, timeout: float | None = None) -> None:
        with self._guard:
            threads = list(self._threads.values())
        for thread in threads:
            thread.join(timeout)

    def _compact(self, root: Path, snapshot: Snapshot) -> None:
        knowledge_base_id = snapshot.knowledge_base_id
        started = time.monotonic()
        try:
            with files.compaction_lock(root, knowledge_base_id) as ours:
                if not ours or not _newer(root, snapshot):
                    return  # another process of the host does (or did) it
                stored = _stored_whole(root, snapshot)
            if stored is not None:
                self._done(snapshot, stored)
            logger.info(
                "search snapshot built whole again knowledge_base=%s version=%s "
                "chunks=%s seconds=%.2f",
                knowledge_base_id,
                snapshot.version,
                snapshot.searched,
                time.monotonic() - started,
            )
        except Exception:
            logger.exception(
                "search snapshot of knowledge base %s not built whole again; "
                "publishes go on appending",
                knowledge_base_id,
            )
        finally:
            with self._guard:
                self._threads.pop(knowledge_base_id, None)


def _newer(root: Path, snapshot: Snapshot) -> bool:
    """Whether the host's newest version built whole is not `snapshot`'s."""
    newest = files.newest_whole(root, snapshot.knowledge_base_id)
    # A newer one is from before a database restored from a backup.
    return not newest or files.version_of(newest) != snapshot.version


def _stored_whole(root: Path, snapshot: Snapshot) -> Snapshot | None:
    """`snapshot` built whole, stored beside it and named the newest, mapped."""
    knowledge_base_id = snapshot.knowledge_base_id
    whole = refresh.compacted(snapshot)
    name = files.whole_name(snapshot.stored_as)
    folder = files.folder(root, knowledge_base_id)
    ann_file = (
        vector_index.store(whole.approximate, folder) if whole.approximate else ""
    )
    # Written under a scratch name and renamed, without the build lock: the
    # publishes that come meanwhile append as before.
    files.save(root, knowledge_base_id, name, whole, ann_file)
    files.save_newest_whole(root, knowledge_base_id, name)
    return files.load(root, knowledge_base_id, name)
