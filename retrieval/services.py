"""Writes on chunks. Callers decide the transaction; these only touch chunk rows."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .embeddings import to_bytes
from .models import Chunk


def chunk_rows(
    *,
    document,
    chunks: Sequence,
    vectors: np.ndarray,
    embedding_model: str,
    ingestion_task_id=None,
) -> list[Chunk]:
    """Unsaved rows for `document`'s chunks, built before any transaction opens."""
    return [
        Chunk(
            document_id=document.pk,
            knowledge_base_id=document.knowledge_base_id,
            ingestion_task_id=ingestion_task_id,
            ordinal=chunk.ordinal,
            text=chunk.text,
            heading_path=list(chunk.heading_path),
            page=chunk.page,
            char_start=chunk.char_start,
            char_end=chunk.char_end,
            embedding=to_bytes(vector),
            embedding_model=embedding_model,
        )
        for chunk, vector in zip(chunks, vectors, strict=True)
    ]


def chunks_replace(*, document_id, rows: Sequence[Chunk]) -> int:
    """Replace all chunks of a document by `rows` (delete, insert), in the caller's
    transaction."""
    Chunk.objects.filter(document_id=document_id).delete()
    Chunk.objects.bulk_create(rows, batch_size=500)
    return len(rows)


def chunks_discard(*, document_id, ingestion_task_id=None) -> int:
    """Delete a document's chunks (only those one execution wrote, if given)."""
    chunks = Chunk.objects.filter(document_id=document_id)
    if ingestion_task_id is not None:
        chunks = chunks.filter(ingestion_task_id=ingestion_task_id)
    deleted, _ = chunks.delete()
    return deleted
