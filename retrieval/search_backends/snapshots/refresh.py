"""A snapshot brought to a new version: what a publish changed, read from the
database, then appended to the snapshot (the base's arrays are not copied; rows
no longer published are `removed`) or built with it in one piece (removed rows
dropped, rows renumbered, postings merged): `next_version`.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field

import numpy as np
from django.conf import settings

from documents.models import Document, DocumentStatus
from retrieval.embeddings import get_embedder
from retrieval.models import Chunk
from retrieval.terms import TOKENIZER, chunk_terms, decode

from . import vector_index
from .bm25 import Postings
from .snapshot import ROW_FIELDS, Snapshot, empty

logger = logging.getLogger(__name__)


@dataclass
class Changes:
    """What a publish changes in a snapshot: the rows it still searches
    (`keep`), and the rows of newly published documents."""

    keep: np.ndarray  # bool per row: not removed and still published
    added: Added


def changes(snapshot: Snapshot) -> Changes:
    published = {
        document_id.bytes: document_id
        for document_id in Document.objects.filter(
            knowledge_base_id=snapshot.knowledge_base_id,
            status=DocumentStatus.PUBLISHED,
        ).values_list("id", flat=True)
    }
    # Looked up by run of one document's rows (rows are added a document at a
    # time): thousands of documents, not every row. A document removed and
    # published again may have rows on either side of a removed run.
    ids, searched = snapshot.document_ids, snapshot.live
    first = np.ones(snapshot.size, dtype=bool)
    first[1:] = (ids[1:] != ids[:-1]) | (searched[1:] != searched[:-1])
    starts = np.flatnonzero(first)
    documents = ids[starts]
    kept = searched[starts] & np.fromiter(
        (document in published for document in documents.tolist()),  # bytes
        dtype=bool,
        count=len(documents),
    )
    keep = np.repeat(kept, np.diff(np.append(starts, snapshot.size)))
    known = set(documents[kept].tolist())
    new = {document_id for key, document_id in published.items() if key not in known}
    added = added_rows(snapshot.knowledge_base_id, new)
    return Changes(keep, added)


def rebuilt_at(snapshot: Snapshot, version: int) -> Snapshot:
    """`snapshot` at `version`, built in one piece."""
    return rebuilt(snapshot, version, changes(snapshot))


def next_version(
    snapshot: Snapshot | None,
    knowledge_base_id: str,
    version: int,
    *,
    append: bool = True,
) -> Snapshot:
    """`snapshot` brought to `version`: by appending when `append` and it stays
    within SEARCH_APPEND_SHARE, else built in one piece (anew when it cannot
    be brought up to date)."""
    if not refreshable(snapshot):
        dimension = get_embedder().dimension
        empty = Snapshot(
            knowledge_base_id, -1, dimension, np.zeros((0, dimension), np.float32)
        )
        return rebuilt_at(empty, version)
    if not append:
        return rebuilt_at(snapshot, version)
    changed = changes(snapshot)
    if appendable(snapshot, changed):
        return appended(snapshot, version, changed)
    return rebuilt(snapshot, version, changed)


def refreshable(snapshot: Snapshot | None) -> bool:
    """Whether `next_version` brings `snapshot` up to date rather than building anew."""
    return (
        snapshot is not None
        and not snapshot.stale
        and snapshot.dimension == get_embedder().dimension
    )


# With shared snapshots a publish still appends up to this many times the
# share while the snapshot is built whole in the background (`cache._compact`).
HARD_LIMIT = 3


def appendable(snapshot: Snapshot, changes: Changes, *, limit: float = 1) -> bool:
    """Whether the snapshot stays within `limit` times SEARCH_APPEND_SHARE of
    rows appended or removed once `changes` are appended."""
    size = snapshot.size + len(changes.added.chunk_ids)
    outside_base = (
        snapshot.appended + len(changes.added.chunk_ids) + int((~changes.keep).sum())
    )
    return outside_base <= limit * settings.SEARCH_APPEND_SHARE * size


def past_share(snapshot: Snapshot) -> bool:
    """Whether the snapshot's rows appended or removed pass SEARCH_APPEND_SHARE."""
    outside_base = snapshot.appended + len(snapshot.removed)
    return outside_base > settings.SEARCH_APPEND_SHARE * snapshot.size


def compacted(snapshot: Snapshot) -> Snapshot:
    """The same version built in one piece, from the snapshot alone (no query)."""
    return rebuilt(snapshot, snapshot.version, Changes(snapshot.live, Added()))


def appended(snapshot: Snapshot, version: int, changes: Changes) -> Snapshot:
    """A new snapshot at `version` by appending the newly published rows and
    leaving out those no longer published: the base's arrays are not copied."""
    added = changes.added
    size = snapshot.size + len(added.chunk_ids)
    removed_now = np.flatnonzero(snapshot.live & ~changes.keep)
    removed = np.union1d(snapshot.removed, removed_now).astype(np.int64)
    old_matrix = snapshot.appended_matrix
    if old_matrix is None:
        old_matrix = np.zeros((0, snapshot.dimension), dtype=np.float32)
    approximate = None
    if size >= settings.SEARCH_ANN_MIN_CHUNKS:
        same_rows = np.arange(snapshot.size, dtype=np.int64)
        approximate = vector_index.carried(
            snapshot.approximate, same_rows, size, removed
        )
    return dataclasses.replace(
        snapshot,
        version=version,
        **{
            name: np.concatenate([getattr(snapshot, name), getattr(added, name)])
            for name in ROW_FIELDS
        },
        appended_matrix=np.concatenate([old_matrix, added.matrix(snapshot.dimension)]),
        appended_postings=Postings.merged(
            (snapshot.appended_postings or Postings()).entries(),
            added.hashes,
            added.rows + snapshot.size,
            added.counts,
        ),
        removed=removed,
        stale=snapshot.stale + added.stale,
        approximate=approximate,
    )


def rebuilt(snapshot: Snapshot, version: int, changes: Changes) -> Snapshot:
    """A new snapshot at `version` in one piece: the rows still published,
    renumbered, then the new ones."""
    keep, added = changes.keep, changes.added
    # When none goes (a new document published into an unsegmented snapshot),
    # the rows are copied once, not twice.
    dropped = not keep.all()

    def rows_of(name: str) -> np.ndarray:
        kept = getattr(snapshot, name)[keep] if dropped else getattr(snapshot, name)
        return np.concatenate([kept, getattr(added, name)])

    base = int(keep.sum())
    new_index = np.full(snapshot.size, -1, dtype=np.int64)
    new_index[keep] = np.arange(base)

    def kept(postings: Postings) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(hash, row, count) of the postings of the rows kept, renumbered."""
        hashes, rows, counts = postings.entries()
        if not dropped:
            return hashes, rows, counts
        survivors = keep[rows]
        renumbered = new_index[rows[survivors]].astype(np.int32)
        return hashes[survivors], renumbered, counts[survivors]

    # The appended rows' postings are few: sorted again with the new ones.
    hashes, rows, counts = kept(snapshot.appended_postings or Postings())
    size = base + len(added.chunk_ids)
    return Snapshot(
        knowledge_base_id=snapshot.knowledge_base_id,
        version=version,
        dimension=snapshot.dimension,
        **{name: rows_of(name) for name in ROW_FIELDS},
        matrix=_kept_vectors(snapshot, keep, added.matrix(snapshot.dimension)),
        postings=Postings.merged(
            kept(snapshot.postings),
            np.concatenate([hashes, added.hashes]),
            np.concatenate([rows, added.rows + base]).astype(np.int32),
            np.concatenate([counts, added.counts]).astype(np.uint16),
        ),
        stale=snapshot.stale + added.stale,
        approximate=vector_index.carried(snapshot.approximate, new_index, size)
        if size >= settings.SEARCH_ANN_MIN_CHUNKS
        else None,
    )


def _kept_vectors(snapshot: Snapshot, keep: np.ndarray, new: np.ndarray) -> np.ndarray:
    """The vectors of the rows kept, then the `new` ones, copied once."""
    parts = [(snapshot.matrix, keep[: snapshot.base_size])]
    if snapshot.appended_matrix is not None:
        parts.append((snapshot.appended_matrix, keep[snapshot.base_size :]))
    vectors = np.empty(
        (int(keep.sum()) + len(new), snapshot.dimension), dtype=np.float32
    )
    at = 0
    for matrix, kept in parts:
        count = int(kept.sum())
        np.compress(kept, matrix, axis=0, out=vectors[at : at + count])
        at += count
    vectors[at:] = new
    return vectors


@dataclass
class Added:
    """The published chunks a refresh adds, as arrays (rows numbered from 0);
    none by default."""

    chunk_ids: np.ndarray = field(default_factory=empty(np.int64))
    document_ids: np.ndarray = field(default_factory=empty("V16"))
    ordinals: np.ndarray = field(default_factory=empty(np.int32))
    lengths: np.ndarray = field(default_factory=empty(np.float32))
    folds: np.ndarray = field(default_factory=empty(bool))
    hashes: np.ndarray = field(default_factory=empty(np.int64))
    rows: np.ndarray = field(default_factory=empty(np.int32))
    counts: np.ndarray = field(default_factory=empty(np.uint16))
    embeddings: list[bytes] = field(default_factory=list)
    models: list[str] = field(default_factory=list)
    stale: int = 0

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


def added_rows(knowledge_base_id: str, document_ids: set) -> Added:
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
            pk: chunk_terms(text, headings).to_wire()
            for pk, text, headings in texts.iterator()
        }
    # Each row's (terms, length, folds): as stored, or made again.
    terms = [remade.get(row[0]) or row[5:8] for row in rows]
    decoded = [decode(bytes(blob)) for blob, _, _ in terms]
    model = get_embedder().name
    return Added(
        chunk_ids=np.array([row[0] for row in rows], dtype=np.int64),
        document_ids=np.array([row[1].bytes for row in rows], dtype="V16"),
        ordinals=np.array([row[2] for row in rows], dtype=np.int32),
        lengths=np.array([length for _, length, _ in terms], dtype=np.float32),
        folds=np.array([folds for _, _, folds in terms], dtype=bool),
        hashes=np.concatenate([np.zeros(0, np.int64), *(h for h, _ in decoded)]),
        rows=np.repeat(
            np.arange(len(rows), dtype=np.int32), [len(h) for h, _ in decoded]
        ),
        counts=np.concatenate([np.zeros(0, np.uint16), *(c for _, c in decoded)]),
        embeddings=[bytes(row[3]) for row in rows],
        models=[row[4] for row in rows],
        stale=sum(row[8] != TOKENIZER or row[4] != model for row in rows),
    )
