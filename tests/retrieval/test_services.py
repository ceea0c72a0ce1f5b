"""Chunk rows are written by one raw INSERT: every value must read back as the model
reads it, on SQLite and on PostgreSQL alike."""

from __future__ import annotations

import uuid

import numpy as np
import pytest
from django.db import transaction
from django.utils import timezone

from ingestion.chunking import Chunk as PieceOfText
from retrieval.embeddings import from_bytes
from retrieval.models import Chunk
from retrieval.services import CHUNK_ROW_FIELDS, chunk_rows, chunks_replace
from tests.factories import DocumentFactory


def pieces() -> list[PieceOfText]:
    return [
        PieceOfText(
            ordinal=0,
            text="报销 deadline: 30 days",
            heading_path=("Travel", "差旅"),
            page=None,
            char_start=0,
            char_end=20,
        ),
        PieceOfText(
            ordinal=1,
            text='It\'s "quoted", with a \\ and a NUL-free tail',
            heading_path=(),
            page=7,
            char_start=20,
            char_end=66,
        ),
    ]


def test_rows_have_every_field_of_the_model() -> None:
    # A field added to the model and not to the rows would be left NULL silently.
    fields = {f.attname for f in Chunk._meta.concrete_fields if not f.primary_key}
    assert {*CHUNK_ROW_FIELDS, "created_at"} == fields
    assert len(set(CHUNK_ROW_FIELDS)) == len(CHUNK_ROW_FIELDS)


@pytest.mark.django_db
def test_rows_read_back_as_the_model_reads_them(knowledge_base) -> None:
    document = DocumentFactory(knowledge_base=knowledge_base)
    task_id = uuid.uuid4()
    vectors = np.array([[0.6, -0.8, 0.0], [0.0, 0.0, 1.0]], dtype=np.float32)

    rows = chunk_rows(
        document=document,
        chunks=pieces(),
        vectors=vectors,
        embedding_model="model-x",
        ingestion_task_id=task_id,
    )
    before = timezone.now()  # rows are stamped when inserted, not when built
    with transaction.atomic():
        assert chunks_replace(document_id=document.pk, rows=rows) == 2

    stored = list(Chunk.objects.filter(document=document).order_by("ordinal"))
    assert [
        (c.ordinal, c.text, c.heading_path, c.page, c.char_start, c.char_end)
        for c in stored
    ] == [
        (0, "报销 deadline: 30 days", ["Travel", "差旅"], None, 0, 20),
        (1, 'It\'s "quoted", with a \\ and a NUL-free tail', [], 7, 20, 66),
    ]
    for chunk, vector in zip(stored, vectors, strict=True):
        assert chunk.knowledge_base_id == knowledge_base.pk
        assert chunk.ingestion_task_id == task_id
        assert chunk.embedding_model == "model-x"
        assert before <= chunk.created_at <= timezone.now()
        assert np.array_equal(from_bytes(bytes(chunk.embedding), 3), vector)
    # Filters by value work on what was written (JSON and UUID columns included).
    assert Chunk.objects.filter(ingestion_task_id=task_id).count() == 2
    assert Chunk.objects.filter(heading_path=["Travel", "差旅"]).count() == 1
    assert Chunk.objects.filter(heading_path__0="Travel").count() == 1


@pytest.mark.django_db
def test_replacing_deletes_the_old_rows_first(knowledge_base) -> None:
    document = DocumentFactory(knowledge_base=knowledge_base)
    vectors = np.ones((2, 3), dtype=np.float32)
    for model in ("old", "new"):
        rows = chunk_rows(
            document=document, chunks=pieces(), vectors=vectors, embedding_model=model
        )
        with transaction.atomic():
            chunks_replace(document_id=document.pk, rows=rows)

    assert list(
        Chunk.objects.filter(document=document).values_list(
            "embedding_model", flat=True
        )
    ) == ["new", "new"]
    assert chunks_replace(document_id=document.pk, rows=[]) == 0
    assert not Chunk.objects.filter(document=document).exists()
