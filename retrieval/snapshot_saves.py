"""Versions of a snapshot written to the host's shared files in the background.

A publish is brought into a process's snapshot in memory at once; writing the
new version's arrays for the other processes takes longer than that (the whole
version is written again), so it is done by a thread, holding the knowledge
base's build lock, while the search that needed the version is answered.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from . import snapshot_files, vector_index
from .snapshot import Snapshot

logger = logging.getLogger(__name__)


class SnapshotSaves:
    """The writes of one process under way, one per knowledge base at most."""

    def __init__(self) -> None:
        self._threads: dict[str, threading.Thread] = {}
        self._guard = threading.Lock()

    def saving(self, knowledge_base_id: str) -> bool:
        with self._guard:
            return knowledge_base_id in self._threads

    def start(
        self,
        held: snapshot_files.HeldLock,
        root: Path,
        knowledge_base_id: str,
        name: str,
        snapshot: Snapshot,
    ) -> None:
        """Write `snapshot` as the stored version `name`, then release `held`."""
        thread = threading.Thread(
            target=self._save,
            args=(held, root, knowledge_base_id, name, snapshot),
            name=f"search-snapshot-{knowledge_base_id}",
            daemon=True,
        )
        with self._guard:
            self._threads[knowledge_base_id] = thread
        thread.start()

    def wait(self, timeout: float | None = None) -> None:
        with self._guard:
            threads = list(self._threads.values())
        for thread in threads:
            thread.join(timeout)

    def _save(
        self,
        held: snapshot_files.HeldLock,
        root: Path,
        knowledge_base_id: str,
        name: str,
        snapshot: Snapshot,
    ) -> None:
        try:
            directory = snapshot_files.folder(root, knowledge_base_id)
            approximate = snapshot.approximate
            ann_file = vector_index.store(approximate, directory) if approximate else ""
            snapshot_files.save(root, knowledge_base_id, name, snapshot, ann_file)
            snapshot_files.prune(root, knowledge_base_id, keep=name, keep_file=ann_file)
        except OSError as error:  # disk full, folder gone: each process keeps its own
            logger.warning(
                "search snapshot %s of knowledge base %s not stored in %s (%s)",
                name,
                knowledge_base_id,
                root,
                type(error).__name__,
            )
        finally:
            held.release()
            with self._guard:
                self._threads.pop(knowledge_base_id, None)
