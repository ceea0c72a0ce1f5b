"""Chunks, the searchable pieces of a document version with their vectors, and the
vectors of their sentences that the answerer compares with a question."""

from __future__ import annotations

from django.db import models

from documents.models import Document, KnowledgeBase


class ChunkQuerySet(models.QuerySet):
    def published(self) -> ChunkQuerySet:
        return self.filter(document__status="published")

    def in_knowledge_bases(self, knowledge_base_ids) -> ChunkQuerySet:
        return self.filter(knowledge_base_id__in=knowledge_base_ids)


class Chunk(models.Model):
    document = models.ForeignKey(
        Document, on_delete=models.CASCADE, related_name="chunks"
    )
    # Copied from the document so search can filter without a join.
    knowledge_base = models.ForeignKey(
        KnowledgeBase, on_delete=models.CASCADE, related_name="chunks"
    )
    # The execution that wrote it (plain id: tasks are pruned independently).
    ingestion_task_id = models.UUIDField(null=True, blank=True)
    ordinal = models.PositiveIntegerField()
    text = models.TextField()
    heading_path = models.JSONField(default=list, blank=True)
    page = models.PositiveIntegerField(null=True, blank=True)
    char_start = models.PositiveIntegerField()
    char_end = models.PositiveIntegerField()
    # Mean confidence (0..1) of the OCR that read its page; null: the file's own text.
    ocr_confidence = models.FloatField(null=True, blank=True)
    embedding = models.BinaryField()
    # Vectors of different embedders are never compared.
    embedding_model = models.CharField(max_length=100)
    # Its BM25 terms, made with its vector (`retrieval.terms`), so that a search
    # snapshot reads arrays instead of tokenizing text; `tokenizer` names what made
    # them (blank: nothing yet, a snapshot tokenizes the text itself).
    terms = models.BinaryField(default=b"")
    term_count = models.PositiveIntegerField(default=0)
    folds = models.BooleanField(default=False)
    tokenizer = models.CharField(max_length=40, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ChunkQuerySet.as_manager()

    class Meta:
        ordering = ["document_id", "ordinal"]
        constraints = [
            models.UniqueConstraint(
                fields=["document", "ordinal"], name="one_chunk_per_document_ordinal"
            )
        ]
        indexes = [models.Index(fields=["knowledge_base", "document"])]

    def __str__(self) -> str:
        return f"chunk {self.ordinal} of {self.document_id}"


class SentenceVector(models.Model):
    """A sentence's (or table row's) vector from the answerer's model of meaning,
    found by a digest of its text: made once, at ingestion, and shared by every
    chunk and version that holds the same sentence (`retrieval.sentences`)."""

    model = models.CharField(max_length=100)
    digest = models.CharField(max_length=32)  # BLAKE2b-128 of the text, hex
    vector = models.BinaryField()  # float16, little-endian
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["model", "digest"], name="one_vector_per_model_sentence"
            )
        ]

    def __str__(self) -> str:
        return f"{self.model} {self.digest}"
