"""Per-process, per-knowledge-base search snapshots of the published chunks.

A snapshot holds, for one knowledge base, the rows needed to score every published
chunk without touching the database: the embedding matrix (float32) and a BM25
inverted index (postings sorted by term). It is tied to the knowledge base's
`index_version`, which grows on every publish and archive; each query reads the
current versions (one small query) and refreshes stale snapshots first, so a publish
in any process is visible to every process on its next query.

Refreshing is incremental (`refresh`): only chunks of newly published documents
are read, and appended to the snapshot, until the rows appended and left out pass
`SEARCH_APPEND_SHARE`; then it is built in one piece again. Nothing is tokenized
here: each chunk's terms and vector were made at ingestion and are read as arrays
(`retrieval.terms`); only chunks made by another tokenizer are tokenized again,
until `reindex_chunks` rewrites them. Only published chunks ever enter a
snapshot, so visibility is decided before anything is scored.

With `SEARCH_SNAPSHOT_DIR` set, the processes of a host share each version of a
snapshot as memory-mapped files (`files`): one of them builds it, all of
them map it. A version brought up to date by appending is stored as its
appended rows beside the base's files, before the query is answered (they are
few); past the share, the process that stored it builds the same version whole
in the background (`compactions`), and the next publish appends to that. A
version built in one piece in a query is written whole: the process that writes
it does not make its query wait for the files, it answers from its own copy
while a thread writes them (`saves`).

Past `SEARCH_ANN_MIN_CHUNKS` a refresh carries the approximate vector index of
the old snapshot; building one is `index_builds`' job, in the background.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import threading
from pathlib import Path

import numpy as np
from django.conf import settings
from django.db.models import Count, Max

from documents.models import Document, DocumentStatus, KnowledgeBase
from retrieval.embeddings import get_embedder
from retrieval.terms import TOKENIZER

from . import files, refresh, vector_index
from .compactions import Compactions
from .index_builds import IndexBuilds, wants_index
from .saves import SnapshotSaves
from .snapshot import Snapshot

logger = logging.getLogger(__name__)


def _refreshed(snapshot: Snapshot, version: int) -> Snapshot:
    """`snapshot` at `version`, built in one piece."""
    return refresh.rebuilt(snapshot, version, refresh.changes(snapshot))


def _next(
    snapshot: Snapshot | None,
    knowledge_base_id: str,
    version: int,
    *,
    append: bool = True,
) -> Snapshot:
    """`snapshot` brought to `version`: by appending when `append` and it stays
    within SEARCH_APPEND_SHARE, else built in one piece (anew when it cannot
    be brought up to date)."""
    if not _refreshable(snapshot):
        empty = refresh.empty_snapshot(knowledge_base_id, -1, get_embedder().dimension)
        return _refreshed(empty, version)
    if not append:
        return _refreshed(snapshot, version)
    changes = refresh.changes(snapshot)
    if refresh.appendable(snapshot, changes):
        return refresh.appended(snapshot, version, changes)
    return refresh.rebuilt(snapshot, version, changes)


def _shared_root() -> Path | None:
    directory = settings.SEARCH_SNAPSHOT_DIR
    return Path(directory) if directory else None


def _fingerprint(knowledge_base_id: str) -> str:
    """What is published, beside the version (a database restored from a backup
    may give a version number again), and what made the chunks' terms and
    vectors. Read from the documents, a twentieth of the chunk rows."""
    count, newest = (
        Document.objects.filter(
            knowledge_base_id=knowledge_base_id, status=DocumentStatus.PUBLISHED
        )
        .aggregate(count=Count("id"), newest=Max("published_at"))
        .values()
    )
    embedder = get_embedder()
    made_by = f"{embedder.name}-{embedder.dimension}-{TOKENIZER}-{newest}"
    digest = hashlib.blake2b(made_by.encode(), digest_size=6).hexdigest()
    return f"{count}-{digest}"


def _refreshable(snapshot: Snapshot | None) -> bool:
    """Whether `_next` brings `snapshot` up to date rather than building anew."""
    return (
        snapshot is not None
        and not snapshot.stale
        and snapshot.dimension == get_embedder().dimension
    )


def _built_and_stored(
    root: Path,
    snapshot: Snapshot | None,
    knowledge_base_id: str,
    version: int,
    name: str,
) -> Snapshot:
    """The stored version `name`, mapped; built and stored by this process
    unless another process of the host does it first (this one waits for it)."""
    with files.build_lock(root, knowledge_base_id):
        stored = files.load(root, knowledge_base_id, name, snapshot)
        if stored is not None:
            return stored
        built = _next(snapshot, knowledge_base_id, version, append=False)
        if built.stale:
            return built  # rebuilt at every version until reindexed: not shared
        folder = files.folder(root, knowledge_base_id)
        ann_file = (
            vector_index.store(built.approximate, folder) if built.approximate else ""
        )
        files.save(root, knowledge_base_id, name, built, ann_file)
        files.prune(root, knowledge_base_id, keep=name, keep_file=ann_file)
        return files.load(root, knowledge_base_id, name) or built


class SnapshotCache:
    """The snapshots of this process, refreshed when their index version moves."""

    def __init__(self) -> None:
        self._snapshots: dict[str, Snapshot] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()
        self._index_builds = IndexBuilds(self._hand_over)
        self._saves = SnapshotSaves()
        self._compactions = Compactions(self._compacted)

    def snapshots(self, knowledge_base_ids: list[str]) -> list[Snapshot]:
        versions = dict(
            KnowledgeBase.objects.filter(pk__in=knowledge_base_ids).values_list(
                "id", "index_version"
            )
        )
        return [
            self._current(kb_id, version) for kb_id, version in sorted(versions.items())
        ]

    def _current(self, knowledge_base_id: str, version: int) -> Snapshot:
        snapshot = self._snapshots.get(knowledge_base_id)
        if snapshot is None or snapshot.version != version:
            with self._lock(knowledge_base_id):
                snapshot = self._snapshots.get(knowledge_base_id)
                if snapshot is None or snapshot.version != version:
                    snapshot = self._load(snapshot, knowledge_base_id, version)
                    with self._guard:
                        # A copy being written was put in place by `_shared`,
                        # and may have been replaced by its files already.
                        put = self._snapshots.get(knowledge_base_id)
                        if put is not None and put.version == version:
                            snapshot = put
                        else:
                            self._snapshots[knowledge_base_id] = snapshot
                    self._index_builds.look_again(knowledge_base_id)
        if wants_index(snapshot):
            snapshot = self._index_builds.wanted(snapshot, _shared_root())
        return snapshot

    def _lock(self, knowledge_base_id: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(knowledge_base_id, threading.Lock())

    def _hand_over(
        self,
        knowledge_base_id: str,
        chunk_ids: np.ndarray,
        approximate: vector_index.Approximate,
    ) -> Snapshot | None:
        """Give an index whose key k stands for the chunk `chunk_ids[k]` to the
        knowledge base's current snapshot, its keys mapped to that snapshot's rows."""
        with self._lock(knowledge_base_id):
            while True:
                current = self._snapshots.get(knowledge_base_id)
                if current is None:
                    return None  # discarded meanwhile
                new_row = vector_index.row_map(chunk_ids, current.chunk_ids)
                given = dataclasses.replace(
                    current,
                    approximate=vector_index.carried(
                        approximate, new_row, current.size, current.removed
                    ),
                )
                if self._replaced(knowledge_base_id, current, given):
                    return given

    def _replaced(self, knowledge_base_id: str, old: Snapshot, new: Snapshot) -> bool:
        """Put `new` in place of `old`, unless another snapshot took its place
        meanwhile (the writes of `saves` do not take `_lock`: they may
        end while a query holds it, waiting for their build lock)."""
        with self._guard:
            if self._snapshots.get(knowledge_base_id) is not old:
                return False
            self._snapshots[knowledge_base_id] = new
            return True

    def building_indexes(self) -> bool:
        """Whether an approximate index is being built in the background."""
        return self._index_builds.building()

    def wait_for_index_builds(self, timeout: float | None = None) -> None:
        """Until the approximate indexes being built are handed over."""
        self._index_builds.wait(timeout)

    def _load(
        self, snapshot: Snapshot | None, knowledge_base_id: str, version: int
    ) -> Snapshot:
        root = _shared_root()
        if root is not None:
            try:
                return self._shared(root, snapshot, knowledge_base_id, version)
            except OSError as error:  # not writable, disk full: search goes on
                logger.warning(
                    "search snapshots cannot be shared through %s (%s); this "
                    "process keeps its own",
                    root,
                    type(error).__name__,
                )
        return _next(snapshot, knowledge_base_id, version)

    def _shared(
        self,
        root: Path,
        snapshot: Snapshot | None,
        knowledge_base_id: str,
        version: int,
    ) -> Snapshot:
        """The host's stored snapshot of this version, mapped. The process that
        writes it, when it has a snapshot to bring up to date, answers from that
        copy at once and writes the files in the background; the others wait for
        the files and map them."""
        name = files.version_name(version, _fingerprint(knowledge_base_id))
        stored = files.load(root, knowledge_base_id, name, snapshot)
        if stored is not None:
            return stored
        if not _refreshable(snapshot):
            return _built_and_stored(root, snapshot, knowledge_base_id, version, name)
        if snapshot.base_name and not self._saves.writing(knowledge_base_id):
            appended = self._appended_and_stored(root, snapshot, version, name)
            if appended is not None:
                return appended
        if self._saves.writing(knowledge_base_id):
            # This process writes an older version: this one is written next.
            refreshed = _next(snapshot, knowledge_base_id, version, append=False)
            refreshed.awaiting = "" if refreshed.stale else name
            self._put(refreshed)
            if refreshed.stale or self._saves.queue(refreshed, self._saved):
                return refreshed
            snapshot = refreshed  # that write ended meanwhile
        held = files.try_build_lock(root, knowledge_base_id)
        if held is None:
            return _built_and_stored(root, snapshot, knowledge_base_id, version, name)
        try:
            stored = files.load(root, knowledge_base_id, name, snapshot)
            refreshed = stored or _next(
                snapshot, knowledge_base_id, version, append=False
            )
        except BaseException:
            held.release()
            raise
        if stored is not None or refreshed.stale:
            held.release()
            return refreshed  # stored meanwhile; or not to be shared until reindexed
        refreshed.awaiting = name
        self._put(refreshed)  # before its write can end
        self._saves.start(held, root, refreshed, self._saved)
        return refreshed

    def _appended_and_stored(
        self, root: Path, snapshot: Snapshot, version: int, name: str
    ) -> Snapshot | None:
        """`snapshot` brought to `version` by appending, its appended rows
        stored as `name` (a few rows: written before answering); None when it is
        to be built whole now (far past SEARCH_APPEND_SHARE, or its base's files
        gone). Past the share it is built whole in the background."""
        knowledge_base_id = snapshot.knowledge_base_id
        with files.build_lock(root, knowledge_base_id):
            stored = files.load(root, knowledge_base_id, name, snapshot)
            if stored is not None:
                return stored
            snapshot = self._rebased(root, snapshot, version)
            if not files.stored(root, knowledge_base_id, snapshot.base_name):
                return None
            changes = refresh.changes(snapshot)
            if not refresh.appendable(snapshot, changes, limit=refresh.HARD_LIMIT):
                return None
            appended = refresh.appended(snapshot, version, changes)
            if appended.stale:
                return appended  # not to be shared until reindexed
            folder = files.folder(root, knowledge_base_id)
            approximate = appended.approximate
            ann_file = vector_index.store(approximate, folder) if approximate else ""
            files.save(root, knowledge_base_id, name, appended, ann_file)
            files.prune(root, knowledge_base_id, keep=name, keep_file=ann_file)
            appended.stored_as = name
        if refresh.past_share(appended):
            self._put(appended)  # before the compaction can hand over
            self._compactions.start(root, appended)
        return appended

    @staticmethod
    def _rebased(root: Path, snapshot: Snapshot, version: int) -> Snapshot:
        """The host's newest version built whole by a compaction, when it is
        newer than the snapshot's base (the changes since are appended to it);
        else `snapshot`."""
        knowledge_base_id = snapshot.knowledge_base_id
        newest = files.newest_whole(root, knowledge_base_id)
        if (
            not newest
            or not snapshot.base_name
            or newest == snapshot.base_name
            # Older than the base; or newer than the version built: from
            # before a database restored from a backup.
            or not files.version_of(snapshot.base_name)
            < files.version_of(newest)
            < version
        ):
            return snapshot
        whole = files.load(root, knowledge_base_id, newest)
        if whole is None or whole.dimension != snapshot.dimension:
            return snapshot
        return whole

    def _compacted(self, appended: Snapshot, whole: Snapshot) -> None:
        """Put the stored whole version in place of the appended one it was
        built from, unless a newer snapshot took that one's place meanwhile."""
        self._replaced(appended.knowledge_base_id, appended, whole)

    def wait_for_compactions(self, timeout: float | None = None) -> None:
        """Until the snapshots being built whole in the background are stored."""
        self._compactions.wait(timeout)

    def _put(self, snapshot: Snapshot) -> None:
        with self._guard:
            self._snapshots[snapshot.knowledge_base_id] = snapshot

    def _saved(self, private: Snapshot, stored: Snapshot | None) -> None:
        """Put the mapped files written for `private` in its place (its memory
        goes); when they could not be written, it stays, no longer awaiting."""
        knowledge_base_id = private.knowledge_base_id
        while True:
            current = self._snapshots.get(knowledge_base_id)
            if current is None or current.awaiting != private.awaiting:
                return  # a newer version meanwhile
            if stored is None:
                current.awaiting = ""
                return
            mapped = stored
            # An index handed over during the write is newer than the stored one.
            newer = current.approximate is not private.approximate
            if current.approximate is not None and (newer or not stored.approximate):
                new_row = vector_index.row_map(current.chunk_ids, stored.chunk_ids)
                mapped = dataclasses.replace(
                    stored,
                    approximate=vector_index.carried(
                        current.approximate, new_row, stored.size, stored.removed
                    ),
                )
            if self._replaced(knowledge_base_id, current, mapped):
                return

    def wait_for_saves(self, timeout: float | None = None) -> None:
        """Until the snapshots being written for the host are written."""
        self._saves.wait(timeout)

    def wait_for_background(self, timeout: float | None = None) -> None:
        """Until every background job (index builds, saves, compactions) is done."""
        self.wait_for_index_builds(timeout)
        self.wait_for_compactions(timeout)
        self.wait_for_saves(timeout)

    def discard(self, knowledge_base_id: str) -> None:
        """Forget one knowledge base's snapshot (it was deleted)."""
        with self._guard:
            self._snapshots.pop(knowledge_base_id, None)
            self._locks.pop(knowledge_base_id, None)
        root = _shared_root()
        if root is not None:
            # A write under way would bring its folder back.
            self._saves.wait()
            self._compactions.wait()
            files.discard(root, knowledge_base_id)

    def clear(self) -> None:
        with self._guard:
            self._snapshots.clear()
        self._index_builds.clear()


snapshot_cache = SnapshotCache()
