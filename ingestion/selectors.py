"""Reads on ingestion tasks; visibility follows the document's knowledge base."""

from __future__ import annotations

from django.db.models import QuerySet

from config.errors import NotFound
from documents.selectors import knowledge_base_ids_for

from .models import IngestionTask


def tasks_visible_to(user) -> QuerySet[IngestionTask]:
    return IngestionTask.objects.filter(
        document__knowledge_base_id__in=knowledge_base_ids_for(user)
    ).select_related("document")


def visible_task(user, task_id) -> IngestionTask:
    task = tasks_visible_to(user).filter(pk=task_id).first()
    if task is None:
        raise NotFound("Ingestion task not found.")
    return task


def latest_task(document_id) -> IngestionTask | None:
    return IngestionTask.objects.filter(document_id=document_id).first()
