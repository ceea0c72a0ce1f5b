"""Every write users can ask for on knowledge bases and documents."""

from __future__ import annotations

import hashlib
import logging
import uuid
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.files.storage import default_storage
from django.db import IntegrityError, transaction
from django.db.models import F, Max
from django.utils import timezone

from core.errors import Conflict, SeparationOfDuties, ValidationFailed

from .models import Document, DocumentStatus, KnowledgeBase, Role
from .selectors import member_document, require_role
from .signals import announce_on_commit, version_published, version_withdrawn
from .transitions import transition_document, transition_documents
from .uploads import EmptyDocument, FileTooLarge, detect_kind, is_blank, safe_filename

if TYPE_CHECKING:
    from django.contrib.auth.models import User
    from django.core.files import File

logger = logging.getLogger(__name__)


class VersionConflict(Conflict):
    error_code = "version_conflict"
    default_detail = "This version of the document family already exists."


def document_upload(
    *,
    user: User,
    knowledge_base_id: str,
    uploaded_file: File,
    family_id: uuid.UUID | None = None,
    version: int | None = None,
) -> Document:
    """Store an original and create its `draft` document; refuse before storing."""
    require_role(user, knowledge_base_id, Role.EDITOR)
    if uploaded_file.size > settings.MAX_UPLOAD_BYTES:
        raise FileTooLarge(
            f"The file is {uploaded_file.size} bytes; the limit is "
            f"{settings.MAX_UPLOAD_BYTES} bytes."
        )
    if uploaded_file.size == 0:
        raise EmptyDocument()
    filename = safe_filename(uploaded_file.name or "")
    kind = detect_kind(filename, uploaded_file)
    if is_blank(uploaded_file, kind):
        raise EmptyDocument()

    family_id, version = _next_version(knowledge_base_id, family_id, version)
    document_id = uuid.uuid4()
    sha256 = _sha256(uploaded_file)
    key = f"originals/{knowledge_base_id}/{document_id}{kind.extension}"
    stored_key = default_storage.save(key, uploaded_file)
    try:
        with transaction.atomic():
            document = Document.objects.create(
                id=document_id,
                knowledge_base_id=knowledge_base_id,
                family_id=family_id,
                version=version,
                filename=filename,
                content_type=kind.content_type,
                size_bytes=uploaded_file.size,
                sha256=sha256,
                storage_key=stored_key,
                created_by=user,
            )
    except IntegrityError as error:
        default_storage.delete(stored_key)
        raise VersionConflict(
            f"Version {version} of this document family already exists."
        ) from error
    except BaseException:
        default_storage.delete(stored_key)
        raise
    logger.info(
        "document uploaded id=%s kb=%s version=%s",
        document.pk,
        knowledge_base_id,
        version,
    )
    return document


def _next_version(
    knowledge_base_id: str, family_id: uuid.UUID | None, version: int | None
) -> tuple[uuid.UUID, int]:
    if family_id is None:
        return uuid.uuid4(), version or 1
    family = Document.objects.filter(family_id=family_id)
    if not family.filter(knowledge_base_id=knowledge_base_id).exists():
        raise ValidationFailed(
            "document_family_id does not name a document family of this knowledge base."
        )
    if version is None:
        return family_id, (family.aggregate(latest=Max("version"))["latest"] or 0) + 1
    if family.filter(version=version).exists():
        raise VersionConflict(f"Version {version} of this document family exists.")
    return family_id, version


def _sha256(uploaded_file: File) -> str:
    digest = hashlib.sha256()
    uploaded_file.seek(0)
    for piece in uploaded_file.chunks():
        digest.update(piece)
    uploaded_file.seek(0)
    return digest.hexdigest()


def document_publish(
    *, user: User, document_id: uuid.UUID | str, expected_lock_version: int
) -> Document:
    """Publish a reviewed version and archive the family's previous one, atomically."""
    document = _document_for_review(user, document_id)
    if second_person_required(user=user, document=document):
        raise SeparationOfDuties()
    now = timezone.now()
    with transaction.atomic():
        # Archive first: at most one version of a family is published at a time.
        previous = Document.objects.filter(
            family_id=document.family_id, status=DocumentStatus.PUBLISHED
        ).exclude(pk=document.pk)
        withdrawn = list(previous.values_list("knowledge_base_id", "pk"))
        archived = transition_documents(previous, "archive")
        published = transition_document(
            document.pk,
            "publish",
            expected_lock_version=expected_lock_version,
            published_at=now,
            reviewed_by=user,
            reviewed_at=now,
        )
        KnowledgeBase.objects.filter(pk=published.knowledge_base_id).update(
            index_version=F("index_version") + 1
        )
        announce_on_commit(version_withdrawn, withdrawn)
        announce_on_commit(
            version_published, [(published.knowledge_base_id, published.pk)]
        )
    logger.info(
        "document published id=%s archived_previous=%s by=%s",
        published.pk,
        archived,
        user.username,
    )
    return published


def second_person_required(*, user: User, document: Document) -> bool:
    """Whether `user` must leave publishing `document` to another reviewer.

    Superusers included: the setting, not a flag on the account, is the way out.
    `created_by` is never written after the upload, so this read cannot go stale.
    """
    return (
        settings.REVIEW_REQUIRE_SECOND_PERSON
        and document.created_by_id is not None
        and document.created_by_id == user.pk
    )


def document_reject(
    *,
    user: User,
    document_id: uuid.UUID | str,
    expected_lock_version: int,
    reason: str,
) -> Document:
    """Send a version back to `draft`, keeping the reviewer's reason."""
    reason = reason.strip()
    if not reason:
        raise ValidationFailed("A rejection needs a reason.")
    document = _document_for_review(user, document_id)
    rejected = transition_document(
        document.pk,
        "reject",
        expected_lock_version=expected_lock_version,
        review_note=reason,
        reviewed_by=user,
        reviewed_at=timezone.now(),
    )
    logger.info("document rejected id=%s by=%s", rejected.pk, user.username)
    return rejected


def _document_for_review(user: User, document_id: uuid.UUID | str) -> Document:
    document = member_document(user, document_id)
    require_role(user, document.knowledge_base_id, Role.REVIEWER)
    return document
