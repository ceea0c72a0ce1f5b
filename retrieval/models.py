"""Chunks: the searchable pieces of a document version, with their vectors."""

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
    embedding = models.BinaryField()
    # Vectors of different embedders are never compared.
    embedding_model = models.CharField(max_length=100)
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
