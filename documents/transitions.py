"""The document state machine: may this version be searched?

    upload -> draft --submit--> processing --ingest_succeed--> review_pending
                ^                 |  |                           |      |
                |---cancel--------'  '--ingest_fail--> failed    |      |
                |                                     |          |      |
                |                    processing <--retry          |      |
                '-----------------------reject-------------------'      |
                                                                 publish
                                                                        v
                                        archived <--archive-- published

Every change of `Document.status` goes through `DOCUMENT_TRANSITIONS` and one
conditional update; `lock_version` grows by one at every transition.
"""

from __future__ import annotations

import uuid

from django.db.models import F, QuerySet

from core.errors import InvalidTransition, NotFound, StaleVersion
from core.statemachine import Transition, apply_conditional_update, table

from .models import Document, DocumentStatus

DRAFT = DocumentStatus.DRAFT
PROCESSING = DocumentStatus.PROCESSING
REVIEW_PENDING = DocumentStatus.REVIEW_PENDING
PUBLISHED = DocumentStatus.PUBLISHED
ARCHIVED = DocumentStatus.ARCHIVED
FAILED = DocumentStatus.FAILED

DOCUMENT_TRANSITIONS: dict[str, Transition] = table(
    submit=({DRAFT}, PROCESSING),
    ingest_succeed=({PROCESSING}, REVIEW_PENDING),
    ingest_fail=({PROCESSING}, FAILED),
    cancel=({PROCESSING}, DRAFT),
    retry=({FAILED}, PROCESSING),
    publish=({REVIEW_PENDING}, PUBLISHED),
    reject=({REVIEW_PENDING}, DRAFT),
    archive=({PUBLISHED}, ARCHIVED),
)


def transition_documents(
    queryset: QuerySet[Document], action: str, **updates: object
) -> int:
    """Apply `action` to every document of `queryset` that allows it (bulk callers)."""
    return apply_conditional_update(
        queryset,
        DOCUMENT_TRANSITIONS[action],
        lock_version=F("lock_version") + 1,
        **updates,
    )


def transition_document(
    document_id: uuid.UUID | str,
    action: str,
    *,
    expected_lock_version: int | None = None,
    **updates: object,
) -> Document:
    """Apply `action` to one document or raise why it could not be applied."""
    candidates = Document.objects.filter(pk=document_id)
    if expected_lock_version is not None:
        candidates = candidates.filter(lock_version=expected_lock_version)
    if transition_documents(candidates, action, **updates) == 1:
        return Document.objects.get(pk=document_id)

    current = Document.objects.filter(pk=document_id).first()
    if current is None:
        raise NotFound("Document not found.")
    if (
        expected_lock_version is not None
        and current.lock_version != expected_lock_version
    ):
        raise StaleVersion(
            f"The document is at lock_version {current.lock_version}, "
            f"not {expected_lock_version}; reload it and try again."
        )
    raise InvalidTransition(
        f"Cannot {action.replace('_', ' ')} a document that is {current.status}."
    )
