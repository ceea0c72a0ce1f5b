"""Every write on ingestion tasks that people ask for: submit, cancel, retry.

The API's views and the admin's actions call these same functions. What workers
write under a claim is in `claims.py`, the outbox relay's writes in
`deliveries.py`, and the operators' pruning in `housekeeping.py`.
"""

from __future__ import annotations

import logging
import uuid
from functools import partial
from typing import TYPE_CHECKING

from django.db import transaction
from django.utils import timezone

from core.errors import InvalidTransition
from documents.models import Document, Role
from documents.selectors import member_document, require_role
from documents.transitions import transition_document, transition_documents
from retrieval.services import chunks_discard

from .artifacts import artifacts_discard
from .enqueue import announce_queued, next_turn
from .lanes import lane_at_submit
from .models import IngestionTask, TaskStage
from .selectors import member_task
from .transitions import transition_task

if TYPE_CHECKING:
    from django.contrib.auth.models import User

logger = logging.getLogger(__name__)


def document_submit(*, user: User, document_id: uuid.UUID | str) -> IngestionTask:
    """Queue a draft for ingestion: document, task and outbox event in one commit."""
    document = member_document(user, document_id)
    require_role(user, document.knowledge_base_id, Role.EDITOR)
    with transaction.atomic():
        transition_document(document.pk, "submit")
        task = IngestionTask.objects.create(
            document_id=document.pk,
            submitted_by=user,
            turn=next_turn(submitted_by_id=user.pk),
            lane=lane_at_submit(
                content_type=document.content_type, size_bytes=document.size_bytes
            ),
        )
        announce_queued(task_id=task.pk, document_id=document.pk)
    logger.info("ingestion task queued task=%s document=%s", task.pk, document.pk)
    return task


def ingestion_task_cancel(*, user: User, task_id: uuid.UUID | str) -> IngestionTask:
    """Cancel a queued, running or waiting task; the document goes back to draft."""
    task = _task_for_editor(user, task_id)
    with transaction.atomic():
        cancelled = transition_task(task.pk, "cancel", finished_at=timezone.now())
        transition_documents(Document.objects.filter(pk=task.document_id), "cancel")
        # A running worker may have written chunks already; none may outlive this.
        chunks_discard(document_id=task.document_id)
        # Nor its stage outputs (one written after this is pruned as an orphan).
        transaction.on_commit(partial(artifacts_discard, document_id=task.document_id))
    logger.info("ingestion task cancelled task=%s by=%s", task.pk, user.username)
    return cancelled


def ingestion_task_retry(*, user: User, task_id: uuid.UUID | str) -> IngestionTask:
    """Put the same failed task back in the queue; its document must be failed too."""
    task = _task_for_editor(user, task_id)
    latest = IngestionTask.objects.filter(document_id=task.document_id).first()
    if latest is None or latest.pk != task.pk:
        raise InvalidTransition("Only the document's latest task can be retried.")
    with transaction.atomic():
        retried = transition_task(
            task.pk,
            "retry",
            stage=TaskStage.DOWNLOAD,
            completed=0,
            total=0,
            error_code=None,
            error_detail=None,
            worker_id=None,
            claim_token=None,
            lease_expires_at=None,
            available_at=timezone.now(),
            finished_at=None,
            yielded_at=None,
            submitted_by=user,
            turn=next_turn(submitted_by_id=user.pk),
        )
        transition_document(task.document_id, "retry")
        announce_queued(task_id=retried.pk, document_id=retried.document_id)
    logger.info("ingestion task retried task=%s by=%s", task.pk, user.username)
    return retried


def _task_for_editor(user: User, task_id: uuid.UUID | str) -> IngestionTask:
    task = member_task(user, task_id)
    require_role(user, task.document.knowledge_base_id, Role.EDITOR)
    return task
