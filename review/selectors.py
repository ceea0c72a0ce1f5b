"""Reads of the review pages: the queue of documents waiting for a reviewer."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from django.db.models import Count, OuterRef, Subquery

from documents import selectors as document_selectors
from documents.models import Document, DocumentStatus, Role
from ingestion.models import IngestionTask

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User


def review_queue(
    user: User | AnonymousUser, *, limit: int = 50, members_only: bool = False
) -> list[Document]:
    """Documents waiting for this reviewer, oldest first, with chunks and last task.

    Superusers see every knowledge base in the admin; others (and the pages, which
    follow the API's rule, `members_only`) only those where they review.
    """
    if not user.is_authenticated:
        return []
    documents = Document.objects.filter(status=DocumentStatus.REVIEW_PENDING)
    if members_only or not user.is_superuser:
        documents = documents.filter(
            knowledge_base_id__in=document_selectors.knowledge_base_ids_for(
                user, minimum_role=Role.REVIEWER
            )
        )
    latest = IngestionTask.objects.filter(document=OuterRef("pk")).order_by(
        "-created_at"
    )
    documents = (
        documents.select_related("knowledge_base", "created_by")
        .annotate(
            chunk_count=Count("chunks"),
            latest_task_id=Subquery(latest.values("pk")[:1]),
            latest_task_status=Subquery(latest.values("status")[:1]),
        )
        .order_by("updated_at", "created_at")
    )
    return list(documents[:limit])


@dataclass(frozen=True)
class LastChange:
    """Who last moved a document and when: a reviewer's decision or a submission."""

    status: str
    at: datetime
    by: str | None  # a username; None when no one is on record (the worker, a gap)


def last_change(document_id: uuid.UUID | str) -> LastChange | None:
    """What a stale review page tells its reader; None if the document is gone.

    Read after a refusal, so it names the latest of the reviewer's decision
    (`reviewed_by`) and the latest submission (the task's `submitted_by`).
    """
    document = (
        Document.objects.filter(pk=document_id).select_related("reviewed_by").first()
    )
    if document is None:
        return None
    change = LastChange(document.status, document.updated_at, None)
    if document.reviewed_at is not None:
        change = LastChange(
            document.status,
            document.reviewed_at,
            document.reviewed_by.get_username() if document.reviewed_by else None,
        )
    task = (
        IngestionTask.objects.filter(document_id=document.pk)
        .select_related("submitted_by")
        .order_by("-created_at")
        .first()
    )
    if task is not None and (
        document.reviewed_at is None or task.created_at > document.reviewed_at
    ):
        who = task.submitted_by.get_username() if task.submitted_by else None
        change = LastChange(document.status, task.created_at, who)
    return change
