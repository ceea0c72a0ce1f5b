"""Document versions written as ingestion leaves them, and moved as reviewers move
them: what the backend tests publish, without a parser per document."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from django.db import transaction
from django.db.models import F

from documents import services as document_services
from documents.models import Document, DocumentStatus, KnowledgeBase, Role
from documents.transitions import transition_document
from retrieval import services as chunk_services
from retrieval.embeddings import get_embedder
from retrieval.models import Chunk
from tests.factories import KnowledgeBaseFactory, MembershipFactory, UserFactory


@dataclass(frozen=True)
class Piece:
    """A chunk as the parsers cut it (`retrieval.services.ParsedChunk`)."""

    ordinal: int
    text: str
    heading_path: tuple[str, ...] = ()
    page: int | None = None
    char_start: int = 0
    char_end: int = 0
    ocr_confidence: float | None = None


class Library:
    """Knowledge bases with a reviewer of each; versions of documents in them."""

    def __init__(self, *knowledge_base_ids: str) -> None:
        self.reviewer = UserFactory(username=f"reviewer-{uuid.uuid4().hex[:8]}")
        for kb_id in knowledge_base_ids:
            self.add_knowledge_base(kb_id)

    def add_knowledge_base(self, kb_id: str) -> None:
        knowledge_base = KnowledgeBaseFactory(id=kb_id)
        MembershipFactory(
            user=self.reviewer, knowledge_base=knowledge_base, role=Role.REVIEWER
        )

    def ingested(
        self, kb_id: str, texts: list[str], *, family_id: uuid.UUID | None = None
    ) -> Document:
        """A new version (of `family_id`, or of a new family) waiting for review,
        with one chunk per text, its terms and vector made as ingestion makes them."""
        family = Document.objects.filter(family_id=family_id)
        version = (family.count() + 1) if family_id else 1
        document = Document.objects.create(
            knowledge_base_id=kb_id,
            family_id=family_id or uuid.uuid4(),
            version=version,
            filename=f"note-{uuid.uuid4().hex[:8]}.md",
            content_type="text/markdown",
            size_bytes=sum(len(text.encode()) for text in texts),
            sha256="0" * 64,
            storage_key="none",  # no original: nothing here reads it
            status=DocumentStatus.REVIEW_PENDING,
        )
        pieces, start = [], 0
        for ordinal, text in enumerate(texts):
            pieces.append(
                Piece(ordinal, text, char_start=start, char_end=start + len(text))
            )
            start += len(text) + 2
        embedder = get_embedder()
        rows = chunk_services.chunk_rows(
            document=document,
            chunks=pieces,
            vectors=embedder.embed(texts),
            embedding_model=embedder.name,
        )
        with transaction.atomic():
            chunk_services.chunks_replace(document_id=document.pk, rows=rows)
        return document

    def publish(self, document: Document) -> Document:
        """Publish it, archiving its family's published version."""
        document.refresh_from_db()
        return document_services.document_publish(
            user=self.reviewer,
            document_id=document.pk,
            expected_lock_version=document.lock_version,
        )

    def published(
        self, kb_id: str, texts: list[str], *, family_id: uuid.UUID | None = None
    ) -> Document:
        return self.publish(self.ingested(kb_id, texts, family_id=family_id))

    def rejected(self, kb_id: str, texts: list[str]) -> Document:
        """A version sent back to draft, its chunks kept."""
        document = self.ingested(kb_id, texts)
        return document_services.document_reject(
            user=self.reviewer,
            document_id=document.pk,
            expected_lock_version=document.lock_version,
            reason="Not yet.",
        )

    def archive(self, document: Document) -> None:
        """Take a published version out of search, as publishing its successor
        does."""
        with transaction.atomic():
            transition_document(document.pk, "archive")
            KnowledgeBase.objects.filter(pk=document.knowledge_base_id).update(
                index_version=F("index_version") + 1
            )

    @staticmethod
    def chunk_ids(document: Document) -> set[int]:
        return set(Chunk.objects.filter(document=document).values_list("pk", flat=True))
