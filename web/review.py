"""The reviewers' pages: the queue, a document beside its chunks, and the
publish and reject decisions, over the services and selectors the API uses."""

from __future__ import annotations

import uuid

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import formats, timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from core.errors import (
    DomainError,
    InvalidTransition,
    NotFound,
    PermissionDenied,
    StaleVersion,
    ValidationFailed,
)
from documents import selectors as document_selectors
from documents import services
from documents.models import Document, DocumentStatus, Role
from review import changes, selectors

from .review_document import MAX_GROUPS, STATUS_LABELS, original_groups


def _forbidden(request: HttpRequest) -> HttpResponse:
    return render(request, "web/review/forbidden.html", status=403)


def _reviewed_document(request: HttpRequest, document_id: uuid.UUID) -> Document:
    """A version the caller may see and review: 404 if they may not see it (the
    API's rule), `PermissionDenied` if they see it without the reviewer role."""
    try:
        document = document_selectors.visible_document(request.user, document_id)
    except NotFound:
        raise Http404(_("Document not found.")) from None
    document_selectors.require_role(
        request.user, document.knowledge_base_id, Role.REVIEWER
    )
    return document


@login_required
@require_GET
def queue(request: HttpRequest) -> HttpResponse:
    if not document_selectors.knowledge_base_ids_for(
        request.user, minimum_role=Role.REVIEWER
    ):
        return _forbidden(request)
    documents = selectors.review_queue(request.user, members_only=True)
    return render(request, "web/review/queue.html", {"documents": documents})


@login_required
@require_GET
def document_page(request: HttpRequest, document_id: uuid.UUID) -> HttpResponse:
    try:
        document = _reviewed_document(request, document_id)
    except PermissionDenied:
        return _forbidden(request)
    try:
        start = max(0, int(request.GET.get("from", 0)))
    except ValueError:
        start = 0
    groups, more = original_groups(document, start=start)
    context = {
        "document": document,
        "pending": document.status == DocumentStatus.REVIEW_PENDING,
        "status_label": STATUS_LABELS[document.status],
        "second_person_required": services.second_person_required(
            user=request.user, document=document
        ),
        "changes": changes.document_changes(document),
        "max_passages": changes.MAX_PASSAGES,
        "groups": groups,
        "next_start": start + MAX_GROUPS if more else None,
        "previous_start": max(0, start - MAX_GROUPS) if start else None,
    }
    return render(request, "web/review/document.html", context)


@login_required
@require_POST
def publish(request: HttpRequest, document_id: uuid.UUID) -> HttpResponse:
    return _decide(request, document_id, "publish")


@login_required
@require_POST
def reject(request: HttpRequest, document_id: uuid.UUID) -> HttpResponse:
    return _decide(request, document_id, "reject")


def _decide(request: HttpRequest, document_id: uuid.UUID, decision: str):
    try:
        document = _reviewed_document(request, document_id)
    except PermissionDenied:
        return _forbidden(request)
    here = redirect("web:review-document", document_id=document.pk)
    try:
        lock_version = int(request.POST.get("lock_version", ""))
    except ValueError:
        messages.error(request, _("The form was incomplete; reload the page."))
        return here
    try:
        if decision == "publish":
            services.document_publish(
                user=request.user,
                document_id=document.pk,
                expected_lock_version=lock_version,
            )
        else:
            services.document_reject(
                user=request.user,
                document_id=document.pk,
                expected_lock_version=lock_version,
                reason=request.POST.get("reason", ""),
            )
    except (StaleVersion, InvalidTransition):
        messages.error(request, _stale_message(document.pk))
        return here
    except ValidationFailed:
        messages.error(request, _("A rejection needs a reason: say what to fix."))
        return here
    except DomainError as error:
        messages.error(request, _refusal(error))
        return here
    if decision == "publish":
        messages.success(
            request,
            _("%(name)s v%(version)s is published; the previous version is archived.")
            % {"name": document.filename, "version": document.version},
        )
    else:
        messages.success(
            request,
            _("%(name)s v%(version)s was sent back to its editors.")
            % {"name": document.filename, "version": document.version},
        )
    return redirect("web:review")


def _stale_message(document_id: uuid.UUID) -> str:
    change = selectors.last_change(document_id)
    if change is None:
        return _("The document was deleted since this page was opened.")
    values = {
        "who": change.by or _("someone"),
        "when": formats.date_format(timezone.localtime(change.at), "DATETIME_FORMAT"),
        "status": STATUS_LABELS[change.status],
    }
    return (
        _(
            "Not done: %(who)s changed this document at %(when)s, after this page "
            "was opened. It is now “%(status)s”; here is the current version."
        )
        % values
    )


def _refusal(error: DomainError) -> str:
    if error.error_code == "separation_of_duties":
        return _("You uploaded this version; another reviewer must publish it.")
    return _("Not done (%(code)s): %(detail)s") % {
        "code": error.error_code,
        "detail": error.detail,
    }
