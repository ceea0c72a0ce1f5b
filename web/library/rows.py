"""What the library shows of each document version: its state in words, its
latest task's progress, and the actions the state machines allow now."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.core.paginator import Page, Paginator
from django.db.models import Max
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from documents.models import Document, DocumentStatus, Role
from documents.selectors import documents_visible_to, member_document, require_role
from documents.transitions import DOCUMENT_TRANSITIONS
from ingestion.errors import error_help
from ingestion.models import ACTIVE_STATUSES, IngestionTask, TaskStage, TaskStatus
from ingestion.selectors import tasks_visible_to
from ingestion.transitions import TASK_TRANSITIONS

if TYPE_CHECKING:
    from django.contrib.auth.models import User

FAMILIES_PER_PAGE = 25

STAGE_NAMES = {
    TaskStage.DOWNLOAD: gettext_lazy("download"),
    TaskStage.PARSE: gettext_lazy("parse"),
    TaskStage.EMBEDDING: gettext_lazy("embedding"),
    TaskStage.INDEXING: gettext_lazy("indexing"),
    TaskStage.FINALIZING: gettext_lazy("finalizing"),
}


@dataclass(frozen=True)
class Failure:
    code: str
    sentence: str
    next_step: str


@dataclass(frozen=True)
class Row:
    document: Document
    task: IngestionTask | None
    state: str
    tone: str  # the badge's class: "", "good", "warn" or "bad"
    failure: Failure | None
    active: bool  # something is under way: the row refreshes itself
    may_submit: bool
    may_retry: bool
    may_cancel: bool


@dataclass(frozen=True)
class Family:
    family_id: uuid.UUID
    rows: list[Row]  # newest version first

    @property
    def latest(self) -> Row:
        return self.rows[0]


def row_for(document: Document, task: IngestionTask | None) -> Row:
    status = document.status
    task_status = task.status if task else None
    failure = _failure(task) if task and task.status in _SHOWS_ERROR else None
    return Row(
        document=document,
        task=task,
        state=_state(document, task, failure),
        tone=_tone(document, task),
        failure=failure,
        active=status == DocumentStatus.PROCESSING or task_status in ACTIVE_STATUSES,
        may_submit=status in DOCUMENT_TRANSITIONS["submit"].sources,
        may_retry=task_status in TASK_TRANSITIONS["retry"].sources,
        may_cancel=task_status in TASK_TRANSITIONS["cancel"].sources,
    )


# A cancelled or succeeded run keeps no error worth showing.
_SHOWS_ERROR = {TaskStatus.FAILED, TaskStatus.RETRY_WAIT}


def _failure(task: IngestionTask) -> Failure | None:
    if not task.error_code:
        return None
    help_ = error_help(task.error_code)
    return Failure(task.error_code, _(help_.sentence), _(help_.next_step))


def _state(document: Document, task: IngestionTask | None, failure) -> str:
    status = document.status
    if status == DocumentStatus.PROCESSING:
        return _processing(task)
    if status == DocumentStatus.FAILED:
        if failure is None:
            return _("Failed")
        return _("Failed: %(hint)s") % {"hint": failure.sentence}
    if status == DocumentStatus.REVIEW_PENDING:
        return _("Waiting for review")
    if status == DocumentStatus.PUBLISHED:
        return _("Published")
    if status == DocumentStatus.ARCHIVED:
        return _("Archived: a newer version is published")
    # Draft: new, sent back by a reviewer, or its processing was cancelled.
    if task and task.status == TaskStatus.SUCCEEDED and document.review_note:
        return _("Rejected: %(reason)s") % {"reason": document.review_note}
    if task and task.status == TaskStatus.CANCELLED:
        return _("Draft (processing cancelled)")
    return _("Draft")


def _processing(task: IngestionTask | None) -> str:
    if task is not None and task.waiting_for_turn:
        return _(
            "Processing: waiting for its next turn (%(stage)s %(completed)s/%(total)s)"
        ) % {
            "stage": STAGE_NAMES.get(task.stage, task.stage),
            "completed": task.completed,
            "total": task.total,
        }
    if task is None or task.status == TaskStatus.QUEUED:
        return _("Processing: waiting for a worker")
    values = {
        "stage": STAGE_NAMES.get(task.stage, task.stage),
        "completed": task.completed,
        "total": task.total,
        "attempt": task.attempt,
    }
    if task.status == TaskStatus.RETRY_WAIT:
        return _("Processing: waiting to retry after attempt %(attempt)s") % values
    if task.total:
        return (
            _("Processing: %(stage)s %(completed)s/%(total)s, attempt %(attempt)s")
            % values
        )
    return _("Processing: %(stage)s, attempt %(attempt)s") % values


def _tone(document: Document, task: IngestionTask | None) -> str:
    if document.status == DocumentStatus.FAILED:
        return "bad"
    if document.status == DocumentStatus.PUBLISHED:
        return "good"
    if document.status in (DocumentStatus.PROCESSING, DocumentStatus.REVIEW_PENDING):
        return "warn"
    return ""


def library_page(user: User, knowledge_base_id: str, page_number: object) -> Page:
    """One page of the knowledge base's document families, most recently
    changed first; `page.object_list` holds `Family` objects.

    The caller has checked the editor role; `documents_visible_to` (the API
    list's queryset) is read all the same, so no other rule can slip in here.
    """
    documents = documents_visible_to(user).filter(knowledge_base_id=knowledge_base_id)
    families = (
        documents.values("family_id")
        .annotate(latest=Max("created_at"))
        .order_by("-latest", "family_id")
    )
    page = Paginator(families, FAMILIES_PER_PAGE).get_page(page_number)
    family_ids = [family["family_id"] for family in page.object_list]
    versions = list(
        documents.filter(family_id__in=family_ids).order_by("-version", "id")
    )
    tasks = _latest_tasks(user, versions)
    rows: dict[uuid.UUID, list[Row]] = {family_id: [] for family_id in family_ids}
    for document in versions:
        rows[document.family_id].append(row_for(document, tasks.get(document.pk)))
    page.object_list = [Family(family_id, rows[family_id]) for family_id in family_ids]
    return page


def _latest_tasks(
    user: User, documents: list[Document]
) -> dict[uuid.UUID, IngestionTask]:
    latest: dict[uuid.UUID, IngestionTask] = {}
    tasks = tasks_visible_to(user).filter(document__in=documents)
    for task in tasks.order_by("-created_at", "-id"):
        latest.setdefault(task.document_id, task)
    return latest


def editor_row(user: User, document_id: uuid.UUID | str) -> Row:
    """One version for its editors; `NotFound` / `PermissionDenied` as the API."""
    document = member_document(user, document_id)
    require_role(user, document.knowledge_base_id, Role.EDITOR)
    task = tasks_visible_to(user).filter(document=document).first()
    return row_for(document, task)
