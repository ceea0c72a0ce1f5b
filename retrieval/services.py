"""Writes on chunks. Callers decide the transaction; these only touch chunk rows."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np
from django.db import connection, transaction
from django.db.models import F, Q, QuerySet
from django.utils import timezone

from documents.models import Document, DocumentStatus, KnowledgeBase

from .embeddings import EmbedderUnavailable, get_embedder, to_bytes
from .meaning import get_meaning
from .models import Chunk
from .search_backends.publishing import republished_on_commit
from .sentences import sentence_texts
from .terms import TOKENIZER, ChunkTerms, chunk_terms

if TYPE_CHECKING:
    from django.db.backends.base.base import BaseDatabaseWrapper

# The fields of a chunk row, in the order of its values; `chunks_replace` adds
# `created_at`, the time of the insert. With the primary key, every field of the
# model (a test holds them together).
CHUNK_ROW_FIELDS = (
    "document_id",
    "knowledge_base_id",
    "ingestion_task_id",
    "ordinal",
    "text",
    "heading_path",
    "page",
    "char_start",
    "char_end",
    "ocr_confidence",
    "embedding",
    "embedding_model",
    "terms",
    "term_count",
    "folds",
    "tokenizer",
)


class ParsedChunk(Protocol):
    """A chunk as the parsers cut it (`ingestion.chunking.Chunk`, a layer above)."""

    @property
    def ordinal(self) -> int: ...
    @property
    def text(self) -> str: ...
    @property
    def heading_path(self) -> Sequence[str]: ...
    @property
    def page(self) -> int | None: ...
    @property
    def char_start(self) -> int: ...
    @property
    def char_end(self) -> int: ...
    @property
    def ocr_confidence(self) -> float | None: ...


def _prepare(field_name: str) -> Callable[[object, BaseDatabaseWrapper], object]:
    return Chunk._meta.get_field(field_name).get_db_prep_save


def chunk_rows(
    *,
    document: Document,
    chunks: Sequence[ParsedChunk],
    vectors: np.ndarray,
    embedding_model: str,
    ingestion_task_id: uuid.UUID | None = None,
    terms: Sequence[ChunkTerms] | None = None,
) -> list[tuple[object, ...]]:
    """`document`'s chunks as rows of CHUNK_ROW_FIELDS values, ready for the
    database, built before any transaction opens. `terms` are the chunks' BM25
    terms when the parser processes made them; they are made here otherwise.

    Each value is prepared by its model field (`get_db_prep_save`), as `bulk_create`
    would, but the values every row shares are prepared once, not once per row
    (docs/benchmarks.md, Summary).
    """
    document_id, knowledge_base_id, task_id, model = (
        _prepare(field_name)(value, connection)
        for field_name, value in (
            ("document_id", document.pk),
            ("knowledge_base_id", document.knowledge_base_id),
            ("ingestion_task_id", ingestion_task_id),
            ("embedding_model", embedding_model),
        )
    )
    prepare_path, prepare_embedding = _prepare("heading_path"), _prepare("embedding")
    prepare_terms = _prepare("terms")
    if terms is None:
        terms = [chunk_terms(chunk.text, chunk.heading_path) for chunk in chunks]
    return [
        (
            document_id,
            knowledge_base_id,
            task_id,
            int(chunk.ordinal),
            str(chunk.text),
            prepare_path(list(chunk.heading_path), connection),
            None if chunk.page is None else int(chunk.page),
            int(chunk.char_start),
            int(chunk.char_end),
            _ocr_confidence(chunk),
            prepare_embedding(to_bytes(vector), connection),
            model,
            prepare_terms(chunk_term.terms, connection),
            int(chunk_term.length),
            bool(chunk_term.folds),
            TOKENIZER,
        )
        for chunk, vector, chunk_term in zip(chunks, vectors, terms, strict=True)
    ]


def _ocr_confidence(chunk: ParsedChunk) -> float | None:
    confidence = chunk.ocr_confidence
    return None if confidence is None else round(float(confidence), 4)


def chunks_replace(
    *, document_id: uuid.UUID | str, rows: Sequence[tuple[object, ...]]
) -> int:
    """Replace all chunks of a document by `rows` (from `chunk_rows`): delete, then
    one INSERT for all of them, in the caller's transaction."""
    return chunks_replace_many(rows_by_document={document_id: rows})


def chunks_replace_many(
    *, rows_by_document: Mapping[uuid.UUID | str, Sequence[tuple[object, ...]]]
) -> int:
    """`chunks_replace` for several documents at once: one DELETE, then one
    INSERT for all their rows, in the caller's transaction."""
    if not rows_by_document:
        return 0
    Chunk.objects.filter(document_id__in=list(rows_by_document)).delete()
    rows = [row for part in rows_by_document.values() for row in part]
    if rows:
        created_at = _prepare("created_at")(timezone.now(), connection)
        quote = connection.ops.quote_name
        columns = ", ".join(
            quote(Chunk._meta.get_field(name).column)
            for name in (*CHUNK_ROW_FIELDS, "created_at")
        )
        placeholders = ", ".join(["%s"] * (len(CHUNK_ROW_FIELDS) + 1))
        with connection.cursor() as cursor:
            cursor.executemany(
                f"INSERT INTO {quote(Chunk._meta.db_table)} ({columns}) "  # noqa: S608 - names from the model
                f"VALUES ({placeholders})",
                [(*row, created_at) for row in rows],
            )
    return len(rows)


def chunks_discard(
    *, document_id: uuid.UUID | str, ingestion_task_id: uuid.UUID | None = None
) -> int:
    """Delete a document's chunks (only those one execution wrote, if given)."""
    chunks = Chunk.objects.filter(document_id=document_id)
    if ingestion_task_id is not None:
        chunks = chunks.filter(ingestion_task_id=ingestion_task_id)
    deleted, _ = chunks.delete()
    return deleted


@dataclass(frozen=True)
class ReindexProgress:
    done: int  # chunks rewritten so far
    total: int  # chunks that needed it when the run started


def chunks_needing_reindex(*, knowledge_base_id: str | None = None) -> QuerySet[Chunk]:
    """Chunks whose terms another tokenizer made, or whose vector another
    embedder made: a snapshot would tokenize them again at every build, or never
    compare their vectors."""
    chunks = Chunk.objects.filter(
        ~Q(tokenizer=TOKENIZER) | ~Q(embedding_model=get_embedder().name)
    )
    if knowledge_base_id is not None:
        chunks = chunks.filter(knowledge_base_id=knowledge_base_id)
    return chunks


def chunks_reindex(
    *,
    knowledge_base_id: str | None = None,
    batch_size: int = 500,
    on_progress: Callable[[ReindexProgress], None] = lambda progress: None,
) -> int:
    """Make the terms and vectors of every chunk that needs it again, a batch at
    a time in id order, each batch committed with its knowledge bases'
    `index_version` bumped, so that snapshots rebuild and an interrupted run
    resumes where it stopped. Returns how many chunks were rewritten.

    Raises `ProviderUnavailable` when a remote embedder is down; the batches
    already committed stay. Raises `EmbedderUnavailable`, before any batch, when
    the hashing embedder stands in for the configured one: it would replace
    every vector of the configured embedder with its own.
    """
    embedder = get_embedder()
    stands_in_for = getattr(embedder, "stands_in_for", "")
    if stands_in_for:
        raise EmbedderUnavailable(
            f"EMBEDDING_PROVIDER={stands_in_for} cannot run in this process and "
            f"the hashing embedder stands in for it (see the log)"
        )
    pending = chunks_needing_reindex(knowledge_base_id=knowledge_base_id)
    total = pending.count()
    done = 0
    last_id = 0
    while True:
        batch = list(
            pending.filter(pk__gt=last_id)
            .order_by("pk")
            .values_list(
                "pk", "knowledge_base_id", "text", "heading_path", "document_id"
            )[:batch_size]
        )
        if not batch:
            return done
        vectors = embedder.embed([text for _, _, text, _, _ in batch])
        with transaction.atomic():
            for (pk, _, text, headings, _), vector in zip(batch, vectors, strict=True):
                terms = chunk_terms(text, headings)
                Chunk.objects.filter(pk=pk).update(
                    terms=terms.terms,
                    term_count=terms.length,
                    folds=terms.folds,
                    tokenizer=TOKENIZER,
                    embedding=to_bytes(vector),
                    embedding_model=embedder.name,
                )
            KnowledgeBase.objects.filter(
                pk__in={knowledge_base for _, knowledge_base, *_ in batch}
            ).update(index_version=F("index_version") + 1)
            republished_on_commit(
                list(
                    Document.objects.filter(
                        pk__in={row[4] for row in batch},
                        status=DocumentStatus.PUBLISHED,
                    ).values_list("knowledge_base_id", "pk")
                )
            )
        done += len(batch)
        last_id = batch[-1][0]
        on_progress(ReindexProgress(done, max(total, done)))


def sentences_remember(
    *,
    knowledge_base_id: str | None = None,
    batch_size: int = 500,
    on_progress: Callable[[ReindexProgress], None] = lambda progress: None,
) -> int:
    """Store the vectors of every chunk's sentences that the answerer's model of
    meaning lacks (chunks ingested before it was set, or under another model), a
    batch of chunks at a time; how many sentences were embedded. Nothing to do
    without a model of meaning."""
    meaning = get_meaning()
    if meaning is None:
        return 0
    chunks = Chunk.objects.all()
    if knowledge_base_id is not None:
        chunks = chunks.filter(knowledge_base_id=knowledge_base_id)
    total = chunks.count()
    done = embedded = 0
    last_id = 0
    while batch := list(
        chunks.filter(pk__gt=last_id)
        .order_by("pk")
        .values_list("pk", "text", "heading_path", "page")[:batch_size]
    ):
        embedded += meaning.remember(
            [
                text
                for _, chunk_text, headings, page in batch
                for text in sentence_texts(chunk_text, headings, page)
            ]
        )
        done += len(batch)
        last_id = batch[-1][0]
        on_progress(ReindexProgress(done, total))
    return embedded
