"""Reads of the review pages: the queue of documents waiting for a reviewer."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db.models import Count, OuterRef, Subquery

from documents import selectors as document_selectors
from documents.models import Document, DocumentStatus, Role
from ingestion.models import IngestionTask

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User


def review_queue(user: User | AnonymousUser, *, limit: int = 50) -> list[Document]:
    """Documents waiting for this reviewer, oldest first, with chunks and last task.

    Superusers see every knowledge base; others only those where they review.
    """
    if not user.is_authenticated:
        return []
    documents = Document.objects.filter(status=DocumentStatus.REVIEW_PENDING)
    if not user.is_superuser:
        documents = documents.filter(
            knowledge_base_id__in=document_selectors.knowledge_base_ids_for(
                user, minimum_role=Role.REVIEWER
            )
        )
    latest = IngestionTask.objects.filter(document=OuterRef("pk")).order_by(
        "-created_at"
    )
    documents = (
        documents.select_related("knowledge_base")
        .annotate(
            chunk_count=Count("chunks"),
            latest_task_id=Subquery(latest.values("pk")[:1]),
            latest_task_status=Subquery(latest.values("status")[:1]),
        )
        .order_by("updated_at", "created_at")
    )
    return list(documents[:limit])
