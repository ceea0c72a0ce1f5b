"""Per-process, per-knowledge-base search snapshots of the published chunks.

A snapshot holds, for one knowledge base, the rows needed to score every published
chunk without touching the database: the embedding matrix (float32) and a BM25
inverted index (postings sorted by term). It is tied to the knowledge base's
`index_version`, which grows on every publish and archive; each query reads the
current versions (one small query) and refreshes stale snapshots first, so a publish
in any process is visible to every process on its next query.

Refreshing is incremental: chunks of documents no longer published are dropped
from the arrays, and only chunks of newly published documents are read. Nothing is
tokenized here: each chunk's terms and vector were made at ingestion and are read
as arrays (`retrieval.terms`); only chunks made by another tokenizer are tokenized
again, until `reindex_chunks` rewrites them. Only published chunks ever enter a
snapshot, so visibility is decided before anything is scored.

With `SEARCH_SNAPSHOT_DIR` set, the processes of a host share each version of a
snapshot as memory-mapped files (`snapshot_files`): one of them builds it, all of
them map it. The process that writes a new version does not make its query wait
for the files: it answers from its own snapshot brought up to date in memory
while a thread writes them (`snapshot_saves`).

Past `SEARCH_ANN_MIN_CHUNKS` a refresh carries the approximate vector index of
the old snapshot; building one is `index_builds`' job, in the background.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from django.conf import settings
from django.db.models import Count, Max

from documents.models import Document, DocumentStatus, KnowledgeBase

from . import snapshot_files, vector_index
from .bm25 import Postings
from .embeddings import get_embedder
from .index_builds import IndexBuilds, wants_index
from .models import Chunk
from .snapshot import Snapshot, document_runs
from .snapshot_saves import SnapshotSaves
from .terms import TOKENIZER, chunk_terms, decode

logger = logging.getLogger(__name__)


def _empty_snapshot(knowledge_base_id: str, version: int, dimension: int) -> Snapshot:
    return Snapshot(
        knowledge_base_id=knowledge_base_id,
        version=version,
        dimension=dimension,
        chunk_ids=np.zeros(0, dtype=np.int64),
        document_ids=np.zeros(0, dtype=object),
        ordinals=np.zeros(0, dtype=np.int32),
        lengths=np.zeros(0, dtype=np.float32),
        folds=np.zeros(0, dtype=bool),
        matrix=np.zeros((0, dimension), dtype=np.float32),
        postings=Postings(),
    )


def _refreshed(snapshot: Snapshot, version: int) -> Snapshot:
    """A new snapshot at `version`: drop unpublished documents, add new ones."""
    published = set(
        Document.objects.filter(
            knowledge_base_id=snapshot.knowledge_base_id,
            status=DocumentStatus.PUBLISHED,
        ).values_list("id", flat=True)
    )
    starts, documents = document_runs(snapshot.document_ids)
    kept = np.fromiter(
        (document_id in published for document_id in documents),
        dtype=bool,
        count=len(documents),
    )
    keep = np.repeat(kept, np.diff(np.append(starts, snapshot.size)))
    known = set(documents[kept])
    added = _added_rows(snapshot.knowledge_base_id, published - known)

    # Keep the surviving rows, renumbered; add the new ones after them. When
    # none goes (a new document published), the rows are copied once, not twice.
    dropped = not keep.all()

    def kept_rows(array: np.ndarray) -> np.ndarray:
        return array[keep] if dropped else array

    new_index = np.full(snapshot.size, -1, dtype=np.int64)
    new_index[keep] = np.arange(int(keep.sum()))
    entries = snapshot.postings.entries()
    if dropped:
        hashes, rows, counts = entries
        survivors = keep[rows] if len(rows) else np.zeros(0, dtype=bool)
        entries = (
            hashes[survivors],
            new_index[rows[survivors]].astype(np.int32),
            counts[survivors],
        )
    base = int(keep.sum())
    refreshed = Snapshot(
        knowledge_base_id=snapshot.knowledge_base_id,
        version=version,
        dimension=snapshot.dimension,
        chunk_ids=np.concatenate([kept_rows(snapshot.chunk_ids), added.chunk_ids]),
        document_ids=np.concatenate(
            [kept_rows(snapshot.document_ids), added.document_ids]
        ),
        ordinals=np.concatenate([kept_rows(snapshot.ordinals), added.ordinals]),
        lengths=np.concatenate([kept_rows(snapshot.lengths), added.lengths]),
        folds=np.concatenate([kept_rows(snapshot.folds), added.folds]),
        matrix=np.concatenate(
            [kept_rows(snapshot.matrix), added.matrix(snapshot.dimension)]
        ),
        postings=Postings.merged(
            entries, added.hashes, added.rows + base, added.counts
        ),
        stale=snapshot.stale + added.stale,
    )
    if refreshed.size >= settings.SEARCH_ANN_MIN_CHUNKS:
        refreshed.approximate = vector_index.carried(
            snapshot.approximate, new_index, refreshed.size
        )
    return refreshed


@dataclass
class _Added:
    """The published chunks a refresh adds, as arrays (rows numbered from 0)."""

    chunk_ids: np.ndarray
    document_ids: np.ndarray
    ordinals: np.ndarray
    lengths: np.ndarray
    folds: np.ndarray
    hashes: np.ndarray
    rows: np.ndarray
    counts: np.ndarray
    embeddings: list[bytes]
    models: list[str]
    stale: int

    def matrix(self, dimension: int) -> np.ndarray:
        """Their vectors. Vectors of another embedder are never compared: those
        rows score 0 by cosine (and are still found by keyword) until the
        document is ingested again or `reindex_chunks` embeds them anew."""
        model = get_embedder().name
        size = dimension * 4
        usable = [
            embedding if name == model and len(embedding) == size else bytes(size)
            for embedding, name in zip(self.embeddings, self.models, strict=True)
        ]
        joined = b"".join(usable)
        return (
            np.frombuffer(joined, dtype="<f4").astype(np.float32).reshape(-1, dimension)
        )


def _added_rows(knowledge_base_id: str, document_ids: set) -> _Added:
    """The chunks of these published documents, read as stored: their terms were
    made at ingestion; chunks made by another tokenizer are tokenized here."""
    rows = list(
        Chunk.objects.filter(
            knowledge_base_id=knowledge_base_id,
            document_id__in=document_ids,
            document__status=DocumentStatus.PUBLISHED,
        )
        .order_by("document_id", "ordinal")
        .values_list(
            "id",
            "document_id",
            "ordinal",
            "embedding",
            "embedding_model",
            "terms",
            "term_count",
            "folds",
            "tokenizer",
        )
    )
    model = get_embedder().name
    stale = [row[0] for row in rows if row[8] != TOKENIZER]
    remade = {}
    if stale:
        logger.warning(
            "%s chunks of knowledge base %s were made by another tokenizer and are "
            "tokenized at every snapshot build; run manage.py reindex_chunks",
            len(stale),
            knowledge_base_id,
        )
        texts = Chunk.objects.filter(pk__in=stale).values_list(
            "id", "text", "heading_path"
        )
        remade = {
            pk: chunk_terms(text, headings) for pk, text, headings in texts.iterator()
        }
    hash_parts, count_parts, sizes, lengths, folded = [], [], [], [], []
    for pk, _, _, _, _, blob, length, folds_flag, _ in rows:
        if pk in remade:
            blob, length, folds_flag = (
                remade[pk].terms,
                remade[pk].length,
                remade[pk].folds,
            )
        hashes, counts = decode(bytes(blob))
        hash_parts.append(hashes)
        count_parts.append(counts)
        sizes.append(len(hashes))
        lengths.append(length)
        folded.append(folds_flag)
    return _Added(
        chunk_ids=np.array([row[0] for row in rows], dtype=np.int64),
        document_ids=np.array([row[1] for row in rows], dtype=object),
        ordinals=np.array([row[2] for row in rows], dtype=np.int32),
        lengths=np.array(lengths, dtype=np.float32),
        folds=np.array(folded, dtype=bool),
        hashes=np.concatenate(hash_parts) if hash_parts else np.zeros(0, np.int64),
        rows=np.repeat(np.arange(len(rows), dtype=np.int32), sizes),
        counts=np.concatenate(count_parts) if count_parts else np.zeros(0, np.uint16),
        embeddings=[bytes(row[3]) for row in rows],
        models=[row[4] for row in rows],
        stale=sum(pk in remade or name != model for pk, _, _, _, name, *_ in rows),
    )


def _next(snapshot: Snapshot | None, knowledge_base_id: str, version: int) -> Snapshot:
    """`snapshot` brought to `version`, or built anew when it cannot be."""
    dimension = get_embedder().dimension
    if snapshot is None or snapshot.dimension != dimension or snapshot.stale:
        snapshot = _empty_snapshot(knowledge_base_id, -1, dimension)
    return _refreshed(snapshot, version)


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
    with snapshot_files.build_lock(root, knowledge_base_id):
        stored = snapshot_files.load(root, knowledge_base_id, name)
        if stored is not None:
            return stored
        built = _next(snapshot, knowledge_base_id, version)
        if built.stale:
            return built  # rebuilt at every version until reindexed: not shared
        folder = snapshot_files.folder(root, knowledge_base_id)
        ann_file = (
            vector_index.store(built.approximate, folder) if built.approximate else ""
        )
        snapshot_files.save(root, knowledge_base_id, name, built, ann_file)
        snapshot_files.prune(root, knowledge_base_id, keep=name, keep_file=ann_file)
        return snapshot_files.load(root, knowledge_base_id, name) or built


class SnapshotCache:
    """The snapshots of this process, refreshed when their index version moves."""

    def __init__(self) -> None:
        self._snapshots: dict[str, Snapshot] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()
        self._index_builds = IndexBuilds(self._hand_over)
        self._saves = SnapshotSaves()

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
                        approximate, new_row, current.size
                    ),
                )
                if self._replaced(knowledge_base_id, current, given):
                    return given

    def _replaced(self, knowledge_base_id: str, old: Snapshot, new: Snapshot) -> bool:
        """Put `new` in place of `old`, unless another snapshot took its place
        meanwhile (the writes of `snapshot_saves` do not take `_lock`: they may
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
        name = snapshot_files.version_name(version, _fingerprint(knowledge_base_id))
        stored = snapshot_files.load(root, knowledge_base_id, name)
        if stored is not None:
            return stored
        if not _refreshable(snapshot):
            return _built_and_stored(root, snapshot, knowledge_base_id, version, name)
        if self._saves.writing(knowledge_base_id):
            # This process writes an older version: this one is written next.
            refreshed = _next(snapshot, knowledge_base_id, version)
            refreshed.awaiting = "" if refreshed.stale else name
            self._put(refreshed)
            if refreshed.stale or self._saves.queue(refreshed, self._saved):
                return refreshed
            snapshot = refreshed  # that write ended meanwhile
        held = snapshot_files.try_build_lock(root, knowledge_base_id)
        if held is None:
            return _built_and_stored(root, snapshot, knowledge_base_id, version, name)
        try:
            stored = snapshot_files.load(root, knowledge_base_id, name)
            refreshed = stored or _next(snapshot, knowledge_base_id, version)
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
                        current.approximate, new_row, stored.size
                    ),
                )
            if self._replaced(knowledge_base_id, current, mapped):
                return

    def wait_for_saves(self, timeout: float | None = None) -> None:
        """Until the snapshots being written for the host are written."""
        self._saves.wait(timeout)

    def discard(self, knowledge_base_id: str) -> None:
        """Forget one knowledge base's snapshot (it was deleted)."""
        with self._guard:
            self._snapshots.pop(knowledge_base_id, None)
            self._locks.pop(knowledge_base_id, None)
        root = _shared_root()
        if root is not None:
            self._saves.wait()  # a write under way would bring its folder back
            snapshot_files.discard(root, knowledge_base_id)

    def clear(self) -> None:
        with self._guard:
            self._snapshots.clear()
        self._index_builds.clear()


snapshot_cache = SnapshotCache()
