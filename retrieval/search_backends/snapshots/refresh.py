"""A snapshot brought to a new version: what a publish changed, read from the
database, then appended to the snapshot or built with it in one piece.

Appending reads only the newly published chunks and copies none of the base's
arrays: their rows follow the base's, and the rows of documents no longer
published are left out of every score (`Snapshot.removed`). Past
`SEARCH_APPEND_SHARE` of rows appended or left out, a snapshot is built in one
piece again: rows left out dropped, rows renumbered, the appended postings merged
into the base's. `cache` decides which, and when.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass

import numpy as np
from django.conf import settings

from documents.models import Document, DocumentStatus
from retrieval.embeddings import get_embedder
from retrieval.models import Chunk
from retrieval.terms import TOKENIZER, chunk_terms, decode

from . import bm25, vector_index
from .bm25 import Postings
from .snapshot import Snapshot, document_runs

logger = logging.getLogger(__name__)


def empty_snapshot(knowledge_base_id: str, version: int, dimension: int) -> Snapshot:
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


@dataclass
class Changes:
    """What a publish changes in a snapshot: the rows it still searches
    (`keep`), and the rows of newly published documents."""

    keep: np.ndarray  # bool per row: not removed and still published
    added: Added

    def removed_now(self, snapshot: Snapshot) -> np.ndarray:
        """Rows the snapshot searched that are no longer published."""
        searched = np.ones(snapshot.size, dtype=bool)
        searched[snapshot.removed] = False
        return np.flatnonzero(searched & ~self.keep)


def changes(snapshot: Snapshot) -> Changes:
    published = set(
        Document.objects.filter(
            knowledge_base_id=snapshot.knowledge_base_id,
            status=DocumentStatus.PUBLISHED,
        ).values_list("id", flat=True)
    )
    searched = np.ones(snapshot.size, dtype=bool)
    searched[snapshot.removed] = False
    starts, _ = snapshot.document_runs()
    # A document removed and published again may have rows on either side.
    flips = np.flatnonzero(searched[1:] != searched[:-1]) + 1
    if len(flips):
        starts = np.union1d(starts, flips)
    documents = snapshot.document_ids[starts]
    kept = searched[starts] & np.fromiter(
        (document_id in published for document_id in documents),
        dtype=bool,
        count=len(documents),
    )
    keep = np.repeat(kept, np.diff(np.append(starts, snapshot.size)))
    known = set(documents[kept])
    return Changes(keep, added_rows(snapshot.knowledge_base_id, published - known))


# With shared snapshots a publish still appends up to this many times the
# share while the snapshot is built whole in the background (`compactions`).
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
    keep = np.ones(snapshot.size, dtype=bool)
    keep[snapshot.removed] = False
    return rebuilt(snapshot, snapshot.version, Changes(keep, Added.empty()))


def appended(snapshot: Snapshot, version: int, changes: Changes) -> Snapshot:
    """A new snapshot at `version` by appending the newly published rows and
    leaving out those no longer published: the base's arrays are not copied."""
    added = changes.added
    size = snapshot.size + len(added.chunk_ids)
    removed = np.union1d(snapshot.removed, changes.removed_now(snapshot)).astype(
        np.int64
    )
    appended_postings = Postings.merged(
        (snapshot.appended_postings or Postings()).entries(),
        added.hashes,
        added.rows + snapshot.size,
        added.counts,
    )
    old_matrix = snapshot.appended_matrix
    if old_matrix is None:
        old_matrix = np.zeros((0, snapshot.dimension), dtype=np.float32)
    refreshed = dataclasses.replace(
        snapshot,
        version=version,
        chunk_ids=np.concatenate([snapshot.chunk_ids, added.chunk_ids]),
        document_ids=np.concatenate([snapshot.document_ids, added.document_ids]),
        ordinals=np.concatenate([snapshot.ordinals, added.ordinals]),
        lengths=np.concatenate([snapshot.lengths, added.lengths]),
        folds=np.concatenate([snapshot.folds, added.folds]),
        appended_matrix=np.concatenate([old_matrix, added.matrix(snapshot.dimension)]),
        appended_postings=appended_postings,
        removed=removed,
        removed_frequencies=(
            _base_removed_frequencies(snapshot, removed, size),
            bm25.removed_frequencies(appended_postings, removed, size),
        )
        if len(removed)
        else (),
        stale=snapshot.stale + added.stale,
        approximate=None,
        awaiting="",
        runs=_appended_runs(snapshot, added.document_ids),
    )
    if size >= settings.SEARCH_ANN_MIN_CHUNKS and snapshot.approximate is not None:
        refreshed.approximate = vector_index.carried(
            snapshot.approximate,
            np.arange(snapshot.size, dtype=np.int64),
            size,
            removed,
        )
    return refreshed


def _base_removed_frequencies(
    snapshot: Snapshot, removed: np.ndarray, size: int
) -> np.ndarray:
    """Per term of the base's postings, how many `removed` rows hold it: the
    snapshot's counts plus the terms of the base rows removed now, read from
    their stored chunks; the postings are scanned when those are not there."""
    postings = snapshot.postings
    newly = np.setdiff1d(removed[removed < snapshot.base_size], snapshot.removed)
    counts = np.zeros(len(postings.hashes), dtype=np.int32)
    if snapshot.removed_frequencies:
        counts += snapshot.removed_frequencies[0]
    if not len(newly):
        return counts
    hashes = _stored_hashes(snapshot.chunk_ids[newly])
    terms = np.searchsorted(postings.hashes, hashes) if hashes is not None else None
    if terms is None or (terms >= len(postings.hashes)).any():
        return bm25.removed_frequencies(postings, removed, size)
    if (postings.hashes[terms] != hashes).any():
        return bm25.removed_frequencies(postings, removed, size)
    np.add.at(counts, terms, 1)
    return counts


def _stored_hashes(chunk_ids: np.ndarray) -> np.ndarray | None:
    """The term hashes of these chunks as stored, one per chunk and term; None
    when one is gone or was made by another tokenizer."""
    rows = list(
        Chunk.objects.filter(pk__in=chunk_ids.tolist()).values_list(
            "terms", "tokenizer"
        )
    )
    if len(rows) != len(chunk_ids) or any(made != TOKENIZER for _, made in rows):
        return None
    parts = [decode(bytes(blob))[0] for blob, _ in rows]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def _appended_runs(
    snapshot: Snapshot, document_ids: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The snapshot's document runs, then those of rows appended to it."""
    starts, documents = snapshot.document_runs()
    more, others = document_runs(document_ids)
    return (
        np.concatenate([starts, more + snapshot.size]),
        np.concatenate([documents, others]),
    )


def rebuilt(snapshot: Snapshot, version: int, changes: Changes) -> Snapshot:
    """A new snapshot at `version` in one piece: the rows still published,
    renumbered, then the new ones."""
    keep, added = changes.keep, changes.added
    # When none goes (a new document published into an unsegmented snapshot),
    # the rows are copied once, not twice.
    dropped = not keep.all()

    def kept_rows(array: np.ndarray) -> np.ndarray:
        return array[keep] if dropped else array

    new_index = np.full(snapshot.size, -1, dtype=np.int64)
    new_index[keep] = np.arange(int(keep.sum()))
    entries = snapshot.postings.entries()
    extra_hashes, extra_rows, extra_counts = added.hashes, added.rows, added.counts
    base = int(keep.sum())
    if dropped:
        hashes, rows, counts = entries
        survivors = keep[rows] if len(rows) else np.zeros(0, dtype=bool)
        entries = (
            hashes[survivors],
            new_index[rows[survivors]].astype(np.int32),
            counts[survivors],
        )
    if snapshot.appended_postings is not None:
        # The appended rows' postings are few: sorted again with the new ones.
        hashes, rows, counts = snapshot.appended_postings.entries()
        survivors = keep[rows] if len(rows) else np.zeros(0, dtype=bool)
        extra_hashes = np.concatenate([hashes[survivors], extra_hashes])
        extra_rows = np.concatenate(
            [new_index[rows[survivors]].astype(np.int32), extra_rows + base]
        )
        extra_counts = np.concatenate([counts[survivors], extra_counts])
    else:
        extra_rows = extra_rows + base
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
        matrix=_kept_vectors(snapshot, keep, added.matrix(snapshot.dimension)),
        postings=Postings.merged(
            entries,
            extra_hashes,
            extra_rows.astype(np.int32),
            extra_counts.astype(np.uint16),
        ),
        stale=snapshot.stale + added.stale,
    )
    if refreshed.size >= settings.SEARCH_ANN_MIN_CHUNKS:
        refreshed.approximate = vector_index.carried(
            snapshot.approximate, new_index, refreshed.size
        )
    return refreshed


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

    @classmethod
    def empty(cls) -> Added:
        none = np.zeros(0, dtype=np.int64)
        return cls(
            chunk_ids=none,
            document_ids=np.zeros(0, dtype=object),
            ordinals=np.zeros(0, dtype=np.int32),
            lengths=np.zeros(0, dtype=np.float32),
            folds=np.zeros(0, dtype=bool),
            hashes=none,
            rows=np.zeros(0, dtype=np.int32),
            counts=np.zeros(0, dtype=np.uint16),
            embeddings=[],
            models=[],
            stale=0,
        )

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
    return Added(
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
