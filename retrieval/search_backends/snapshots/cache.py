"""Per-process, per-knowledge-base search snapshots of the published chunks, kept
current with each knowledge base's `index_version`: a query reads the versions
(one small query) and refreshes what moved first, so a publish in any process is
seen by every process on its next query. A refresh appends the newly published
rows until SEARCH_APPEND_SHARE, then builds in one piece (`refresh`). With
SEARCH_SNAPSHOT_DIR the processes of a host share each version as mapped files
(`files`); writing them, building an appended version whole (`_compact`) and
building approximate indexes (`_build_index`) run in the background. The
threads, locks and invariants: docs/architecture/search.md.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import logging
import threading
import time
from collections.abc import Iterator, Mapping
from functools import partial
from pathlib import Path

import numpy as np
from django.conf import settings
from django.db.models import Count, Max

from documents.models import Document, DocumentStatus, KnowledgeBase
from retrieval.embeddings import get_embedder
from retrieval.terms import TOKENIZER

from . import files, refresh, vector_index
from .background import Background
from .snapshot import Snapshot

logger = logging.getLogger(__name__)

# How often a snapshot that needs an index looks whether another process of the
# host has stored one.
INDEX_POLL_SECONDS = 2.0


@dataclasses.dataclass
class Entry:
    """What the cache keeps for a knowledge base: its snapshot of the current
    version and what it knows about it. Changed under the guard only; a new
    version is a new entry."""

    snapshot: Snapshot
    # The stored version it was read from or written as ("": not stored).
    stored_as: str = ""
    # The stored version being written for it in the background ("": none).
    awaiting: str = ""
    # When to look again whether the host stored an approximate index.
    next_index_look: float = 0.0


def wants_index(snapshot: Snapshot) -> bool:
    return snapshot.size >= settings.SEARCH_ANN_MIN_CHUNKS and vector_index.due(
        snapshot.approximate, snapshot.size
    )


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
    made_by = f"{_vectors_made_by()}-{TOKENIZER}-{newest}"
    digest = hashlib.blake2b(made_by.encode(), digest_size=6).hexdigest()
    return f"{count}-{digest}"


class SnapshotCache:
    """The snapshots of this process, refreshed when their index version moves."""

    def __init__(self) -> None:
        self._entries: dict[str, Entry] = {}
        self._guard = threading.Lock()
        self._process_locks: dict[str, threading.Lock] = {}
        self._background = Background()

    # The lock order. Locks that wait are taken through `_locked` only, in this
    # order: this process's lock of a knowledge base (one refresh at a time),
    # then the host's build lock of it (`files.lock`: one process of the host
    # writes its versions). `_guard` (the entries, the process locks) is held
    # to read or change one, never while waiting for another lock. The host's
    # index and compaction locks are only tried, never waited for.
    @contextlib.contextmanager
    def _locked(
        self, knowledge_base_id: str, *, process: bool = True, root: Path | None = None
    ) -> Iterator[None]:
        """This process's lock of the knowledge base (`process` off: its caller
        holds it, or must not wait for it), then with `root` the host's."""
        with contextlib.ExitStack() as held:
            if process:
                with self._guard:
                    lock = self._process_locks.setdefault(
                        knowledge_base_id, threading.Lock()
                    )
                held.enter_context(lock)
            if root is not None:
                held.enter_context(files.lock(root, knowledge_base_id))
            yield

    def snapshots(
        self, knowledge_base_ids: list[str], versions: Mapping[str, int] | None = None
    ) -> list[Snapshot]:
        if versions is None:
            versions = dict(
                KnowledgeBase.objects.filter(pk__in=knowledge_base_ids).values_list(
                    "id", "index_version"
                )
            )
        return [
            self._current(kb_id, versions[kb_id])
            for kb_id in sorted(set(knowledge_base_ids))
            if kb_id in versions
        ]

    def entry(self, knowledge_base_id: str) -> Entry | None:
        with self._guard:
            return self._entries.get(knowledge_base_id)

    def _current(self, knowledge_base_id: str, version: int) -> Snapshot:
        entry = self._entries.get(knowledge_base_id)
        if entry is None or entry.snapshot.version != version:
            with self._locked(knowledge_base_id):
                entry = self._entries.get(knowledge_base_id)
                if entry is None or entry.snapshot.version != version:
                    # Maybe put in place already (by `_shared`) and changed
                    # since by the work it started: the same entry.
                    entry = self._put(self._load(entry, knowledge_base_id, version))
        if wants_index(entry.snapshot):
            return self._with_index(entry)
        return entry.snapshot

    def _put(self, entry: Entry) -> Entry:
        with self._guard:
            self._entries[entry.snapshot.knowledge_base_id] = entry
        return entry

    def _swap(self, entry: Entry, old: Snapshot, new: Snapshot, **fields) -> bool:
        """Put `new` in place of `old` in `entry` (with `fields`), unless another
        snapshot took its place meanwhile, or `entry` is no longer current."""
        with self._guard:
            current = self._entries.get(old.knowledge_base_id)
            if current is not entry or entry.snapshot is not old:
                return False
            entry.snapshot = new
            for name, value in fields.items():
                setattr(entry, name, value)
            return True

    def _load(self, entry: Entry | None, knowledge_base_id: str, version: int) -> Entry:
        snapshot = entry.snapshot if entry is not None else None
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
        return Entry(refresh.next_version(snapshot, knowledge_base_id, version))

    def _shared(
        self,
        root: Path,
        snapshot: Snapshot | None,
        knowledge_base_id: str,
        version: int,
    ) -> Entry:
        """The host's stored snapshot of this version, mapped. A process that
        has a snapshot to bring up to date answers from its copy at once and
        writes the files in the background; the others wait for the files."""
        name = files.version_name(version, _fingerprint(knowledge_base_id))
        stored = files.load(root, knowledge_base_id, name, snapshot)
        if stored is not None:
            return Entry(stored, stored_as=name)
        if not refresh.refreshable(snapshot):
            return self._built_and_stored(
                root, snapshot, knowledge_base_id, version, name
            )
        saving = self._background.running("save", knowledge_base_id)
        if snapshot.base_name and not saving:
            appended = self._appended_and_stored(root, snapshot, version, name)
            if appended is not None:
                return appended
        if not saving:  # another process of the host writing it is waited for
            held = files.lock(root, knowledge_base_id, wait=False)  # tried only
            if held is None:
                return self._built_and_stored(
                    root, snapshot, knowledge_base_id, version, name
                )
            held.close()
        refreshed = refresh.next_version(
            snapshot, knowledge_base_id, version, append=False
        )
        if refreshed.stale:
            return Entry(refreshed)  # not to be shared until reindexed
        entry = self._put(Entry(refreshed, awaiting=name))  # before its write ends
        # After the write of an older version under way, if any.
        self._background.start(
            ("save", knowledge_base_id), partial(self._save, root, entry), queue=True
        )
        return entry

    def _built_and_stored(
        self,
        root: Path,
        snapshot: Snapshot | None,
        knowledge_base_id: str,
        version: int,
        name: str,
    ) -> Entry:
        """The stored version `name`, mapped; built and stored by this process
        unless another process of the host does it first (this one waits)."""
        with self._locked(knowledge_base_id, process=False, root=root):
            stored = files.load(root, knowledge_base_id, name, snapshot)
            if stored is not None:
                return Entry(stored, stored_as=name)
            built = refresh.next_version(
                snapshot, knowledge_base_id, version, append=False
            )
            if built.stale:
                return Entry(built)  # rebuilt at every version until reindexed
            files.store(root, knowledge_base_id, name, built)
            stored = files.load(root, knowledge_base_id, name)
            return Entry(stored, stored_as=name) if stored else Entry(built)

    def _save(self, root: Path, entry: Entry) -> None:
        """Write the version `entry` awaits, then put its mapped files in place
        of the copy (its memory goes); when they cannot be written, the copy
        stays, no longer awaiting."""
        private, name = entry.snapshot, entry.awaiting
        knowledge_base_id = private.knowledge_base_id
        try:
            with self._locked(knowledge_base_id, process=False, root=root):
                files.store(root, knowledge_base_id, name, private)
                stored = files.load(root, knowledge_base_id, name)
        except OSError as error:  # disk full, folder gone: the copy serves
            logger.warning(
                "search snapshot %s of knowledge base %s not stored in %s (%s)",
                name,
                knowledge_base_id,
                root,
                type(error).__name__,
            )
            stored = None
        while self.entry(knowledge_base_id) is entry:
            current, mapped = entry.snapshot, stored or entry.snapshot
            # An index handed over during the write is newer than the stored
            # one (maybe stored by another process: mapped by chunk).
            newer = current.approximate is not private.approximate
            if stored and current.approximate and (newer or not stored.approximate):
                mapped = _with_index(stored, current.chunk_ids, current.approximate)
            stored_as = name if stored else ""
            if self._swap(entry, current, mapped, awaiting="", stored_as=stored_as):
                return

    def _appended_and_stored(
        self, root: Path, snapshot: Snapshot, version: int, name: str
    ) -> Entry | None:
        """`snapshot` brought to `version` by appending, its appended rows
        stored as `name` (a few rows: written before answering); None when it is
        to be built whole now (far past SEARCH_APPEND_SHARE, or its base's files
        gone). Past the share it is built whole in the background."""
        knowledge_base_id = snapshot.knowledge_base_id
        with self._locked(knowledge_base_id, process=False, root=root):
            stored = files.load(root, knowledge_base_id, name, snapshot)
            if stored is not None:
                return Entry(stored, stored_as=name)
            snapshot = self._rebased(root, snapshot, version)
            if not files.stored(root, knowledge_base_id, snapshot.base_name):
                return None
            changes = refresh.changes(snapshot)
            if not refresh.appendable(snapshot, changes, limit=refresh.HARD_LIMIT):
                return None
            appended = refresh.appended(snapshot, version, changes)
            if appended.stale:
                return Entry(appended)  # not to be shared until reindexed
            files.store(root, knowledge_base_id, name, appended)
        entry = Entry(appended, stored_as=name)
        if refresh.past_share(appended):
            self._put(entry)  # before the compaction can put the whole one
            self._background.start(
                ("compaction", knowledge_base_id),
                partial(self._compact, root, entry),
            )
        return entry

    @staticmethod
    def _rebased(root: Path, snapshot: Snapshot, version: int) -> Snapshot:
        """The host's newest version built whole by a compaction, when it is
        newer than the snapshot's base (the changes since are appended to it);
        else `snapshot`."""
        knowledge_base_id = snapshot.knowledge_base_id
        newest = files.newest_whole(root, knowledge_base_id)
        # Not newer than the base; or newer than the version built: from
        # before a database restored from a backup.
        if not newest or not (
            files.version_of(snapshot.base_name) < files.version_of(newest) < version
        ):
            return snapshot
        whole = files.load(root, knowledge_base_id, newest)
        if whole is None or whole.dimension != snapshot.dimension:
            return snapshot
        return whole

    def _compact(self, root: Path, entry: Entry) -> None:
        """Build the appended version whole from the snapshot (no query), store
        it beside the appended one and name it the newest built whole (the next
        publish on the host appends to it); then put it in place of the appended
        one, unless a newer version took that one's place meanwhile. One process
        of the host at a time."""
        appended = entry.snapshot
        knowledge_base_id = appended.knowledge_base_id
        name = files.whole_name(entry.stored_as)
        held = files.lock(root, knowledge_base_id, "compaction", wait=False)
        if held is None:
            return  # another process of the host does it
        with held:
            newest = files.newest_whole(root, knowledge_base_id)
            # A newer one is from before a database restored from a backup.
            if newest and files.version_of(newest) == appended.version:
                return
            # Written under a scratch name and renamed, without the build lock:
            # the publishes that come meanwhile append as before.
            whole = refresh.compacted(appended)
            files.store(root, knowledge_base_id, name, whole, replacing=False)
            files.save_newest_whole(root, knowledge_base_id, name)
            whole = files.load(root, knowledge_base_id, name)
        if whole is not None:
            self._swap(entry, appended, whole, stored_as=name)

    # Approximate vector indexes are built in the background, never inside a
    # query (minutes at a million chunks). Meanwhile the snapshot is searched
    # exactly, or with its old index beside exact search of the rest; the index
    # then goes to whatever version is current by then (keys are mapped to rows
    # by chunk). With shared snapshots one process of the host builds and stores
    # it; the others look for it every `INDEX_POLL_SECONDS` and take it up.
    def _with_index(self, entry: Entry) -> Snapshot:
        """The snapshot with the index another process of the host has stored,
        if there is one; otherwise a build starts in the background and the
        snapshot serves as it is."""
        snapshot = entry.snapshot
        knowledge_base_id = snapshot.knowledge_base_id
        if self._background.running("index", knowledge_base_id):
            return snapshot
        now = time.monotonic()
        with self._guard:
            if now < entry.next_index_look:
                return snapshot
            entry.next_index_look = now + INDEX_POLL_SECONDS
        root = _shared_root()
        if root is not None:
            snapshot = self._taken_up(root, snapshot)
            if not wants_index(snapshot):
                return snapshot
        build = partial(self._build_index, snapshot, root)
        self._background.start(("index", knowledge_base_id), build)
        return snapshot

    def _build_index(self, snapshot: Snapshot, root: Path | None) -> None:
        """An index over the rows `snapshot` searches, handed over; with `root`,
        built by one process of the host and stored for the others. One that
        fails (`Background` logs it) is tried again by the next query."""
        knowledge_base_id = snapshot.knowledge_base_id
        held = contextlib.nullcontext()
        if root is not None:
            held = files.lock(root, knowledge_base_id, "index", wait=False)
            if held is None:
                return  # another process of the host builds it: taken up later
        with held:
            if root is not None:
                files.remove_index_leftovers(root, knowledge_base_id)
            rows = np.flatnonzero(snapshot.live)
            built = vector_index.build(
                snapshot.matrix, appended=snapshot.appended_matrix, rows=rows
            )
            chunk_ids = np.asarray(snapshot.chunk_ids)[rows]  # the chunk of each key
            if root is not None:
                folder = files.folder(root, knowledge_base_id)
                with self._locked(knowledge_base_id, process=False, root=root):
                    file = vector_index.store(built, folder)
                    made_by = _vectors_made_by()
                    files.save_index(root, knowledge_base_id, file, chunk_ids, made_by)
                    files.prune_indexes(root, knowledge_base_id)
                # Served from the stored file, mapped: one copy for the host.
                built = vector_index.opened(folder / file, built.rows, built.uncovered)
        self._hand_over(knowledge_base_id, chunk_ids, built)

    def _taken_up(self, root: Path, snapshot: Snapshot) -> Snapshot:
        """The current snapshot with the host's newest stored index, when that
        is another one than the snapshot's own."""
        knowledge_base_id = snapshot.knowledge_base_id
        file, chunk_ids, made_by = files.newest_index(root, knowledge_base_id)
        own = snapshot.approximate.file if snapshot.approximate else ""
        if not file or file == own or made_by != _vectors_made_by():
            return snapshot
        try:
            stored = vector_index.opened(
                files.folder(root, knowledge_base_id) / file,
                np.arange(len(chunk_ids), dtype=np.int64),
                np.zeros(0, dtype=np.int64),
            )
        except OSError:
            return snapshot  # replaced meanwhile: the next look reads the newer one
        return self._hand_over(knowledge_base_id, chunk_ids, stored) or snapshot

    def _hand_over(
        self,
        knowledge_base_id: str,
        chunk_ids: np.ndarray,
        approximate: vector_index.Approximate,
    ) -> Snapshot | None:
        """Give an index whose key k stands for the chunk `chunk_ids[k]` to the
        knowledge base's current snapshot, its keys mapped to that snapshot's rows."""
        with self._locked(knowledge_base_id):
            while (entry := self.entry(knowledge_base_id)) is not None:
                current = entry.snapshot
                given = _with_index(current, chunk_ids, approximate)
                if self._swap(entry, current, given):
                    return given
        return None  # discarded meanwhile

    def busy(self, kind: str) -> bool:
        """Whether background work of `kind` ("index", "save", "compaction") runs."""
        return self._background.running(kind)

    def wait_for(self, kind: str | None = None, timeout: float | None = None) -> None:
        """Until the background work of `kind` ("index": built and handed over,
        "save", "compaction": stored; all of it when None) under way is done."""
        self._background.wait(kind, timeout)

    def discard(self, knowledge_base_id: str) -> None:
        """Forget one knowledge base's snapshot (it was deleted)."""
        with self._guard:
            self._entries.pop(knowledge_base_id, None)
            self._process_locks.pop(knowledge_base_id, None)
        root = _shared_root()
        if root is not None:
            # A write under way would bring its folder back.
            self.wait_for("save")
            self.wait_for("compaction")
            files.discard(root, knowledge_base_id)

    def clear(self) -> None:
        with self._guard:
            self._entries.clear()


def _with_index(
    snapshot: Snapshot, chunk_ids: np.ndarray, approximate: vector_index.Approximate
) -> Snapshot:
    """`snapshot` with an index whose key k stands for the chunk `chunk_ids[k]`."""
    new_row = vector_index.row_map(chunk_ids, snapshot.chunk_ids)
    carried = vector_index.carried(
        approximate, new_row, snapshot.size, snapshot.removed
    )
    return dataclasses.replace(snapshot, approximate=carried)


def _vectors_made_by() -> str:
    embedder = get_embedder()
    return f"{embedder.name}-{embedder.dimension}"


snapshot_cache = SnapshotCache()
