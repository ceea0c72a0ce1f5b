"""Writes on chunks. Callers decide the transaction; these only touch chunk rows."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from django.db import connection
from django.utils import timezone

from .embeddings import to_bytes
from .models import Chunk

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
)


def _prepare(field_name: str):
    return Chunk._meta.get_field(field_name).get_db_prep_save


def chunk_rows(
    *,
    document,
    chunks: Sequence,
    vectors: np.ndarray,
    embedding_model: str,
    ingestion_task_id=None,
) -> list[tuple]:
    """`document`'s chunks as rows of CHUNK_ROW_FIELDS values, ready for the
    database, built before any transaction opens.

    Each value is prepared by its model field (`get_db_prep_save`), as `bulk_create`
    would, but the values every row shares are prepared once: `bulk_create` spent
    30 ms in Python on the 622 chunks of the largest corpus DOCX, this 4 ms.
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
        )
        for chunk, vector in zip(chunks, vectors, strict=True)
    ]


def _ocr_confidence(chunk) -> float | None:
    confidence = chunk.ocr_confidence
    return None if confidence is None else round(float(confidence), 4)


def chunks_replace(*, document_id, rows: Sequence[tuple]) -> int:
    """Replace all chunks of a document by `rows` (from `chunk_rows`): delete, then
    one INSERT for all of them, in the caller's transaction."""
    Chunk.objects.filter(document_id=document_id).delete()
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


def chunks_discard(*, document_id, ingestion_task_id=None) -> int:
    """Delete a document's chunks (only those one execution wrote, if given)."""
    chunks = Chunk.objects.filter(document_id=document_id)
    if ingestion_task_id is not None:
        chunks = chunks.filter(ingestion_task_id=ingestion_task_id)
    deleted, _ = chunks.delete()
    return deleted
