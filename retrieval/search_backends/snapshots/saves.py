"""Versions of a snapshot written to the host's shared files in the background.

The process that writes a new version for the host brings its own snapshot up
to date in memory and answers from it at once; writing the arrays (the whole
version again) takes longer than that, so a thread does it, holding the
knowledge base's build lock, and then hands the mapped files over. A version
published while the thread writes is written next by the same thread.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

from . import files, vector_index
from .snapshot import Snapshot

logger = logging.getLogger(__name__)

# Called with the snapshot written and the stored version mapped (None: not
# written).
Done = Callable[[Snapshot, Snapshot | None], None]


class SnapshotSaves:
    """The writes of one process, one thread per knowledge base at most."""

    def __init__(self) -> None:
        self._threads: dict[str, threading.Thread] = {}
        self._queued: dict[str, tuple[Snapshot, Done]] = {}
        self._guard = threading.Lock()

    def writing(self, knowledge_base_id: str) -> bool:
        with self._guard:
            return knowledge_base_id in self._threads

    def start(
        self, held: files.HeldLock, root: Path, snapshot: Snapshot, done: Done
    ) -> None:
        """Write `snapshot` as the stored version it awaits, then call `done`;
        `held` is released when nothing more is queued."""
        thread = threading.Thread(
            target=self._write,
            args=(held, root, snapshot, done),
            name=f"search-snapshot-{snapshot.knowledge_base_id}",
            daemon=True,
        )
        with self._guard:
            self._threads[snapshot.knowledge_base_id] = thread
        thread.start()

    def queue(self, snapshot: Snapshot, done: Done) -> bool:
        """Write `snapshot` after the write of its knowledge base under way in
        this process (it replaces one queued before); False when there is none."""
        with self._guard:
            if snapshot.knowledge_base_id not in self._threads:
                return False
            self._queued[snapshot.knowledge_base_id] = (snapshot, done)
            return True

    def wait(self, timeout: float | None = None) -> None:
        with self._guard:
            threads = list(self._threads.values())
        for thread in threads:
            thread.join(timeout)

    def _write(
        self, held: files.HeldLock, root: Path, snapshot: Snapshot, done: Done
    ) -> None:
        knowledge_base_id = snapshot.knowledge_base_id
        try:
            while True:
                done(snapshot, _stored(root, snapshot))
                with self._guard:
                    queued = self._queued.pop(knowledge_base_id, None)
                    if queued is None:
                        held.release()
                        del self._threads[knowledge_base_id]
                        return
                snapshot, done = queued
        except BaseException:
            with self._guard:
                held.release()
                self._threads.pop(knowledge_base_id, None)
            raise


def _stored(root: Path, snapshot: Snapshot) -> Snapshot | None:
    knowledge_base_id, name = snapshot.knowledge_base_id, snapshot.awaiting
    try:
        directory = files.folder(root, knowledge_base_id)
        approximate = snapshot.approximate
        ann_file = vector_index.store(approximate, directory) if approximate else ""
        files.save(root, knowledge_base_id, name, snapshot, ann_file)
        files.prune(root, knowledge_base_id, keep=name, keep_file=ann_file)
        return files.load(root, knowledge_base_id, name)
    except OSError as error:  # disk full, folder gone: this process keeps its own
        logger.warning(
            "search snapshot %s of knowledge base %s not stored in %s (%s)",
            name,
            knowledge_base_id,
            root,
            type(error).__name__,
        )
        return None
