"""The library (`/library/`): the knowledge bases an editor edits, their
documents by family, and Submit, Retry and Cancel through the same services
as the API. Files are uploaded by the page's script to `POST /api/documents`."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from http import HTTPStatus

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_POST

from core.errors import DomainError, NotFound, PermissionDenied
from documents.kinds import FILE_KINDS
from documents.models import Role
from documents.selectors import (
    knowledge_base_ids_for,
    knowledge_bases_for,
    require_role,
    role_in,
)
from ingestion import services
from ingestion.selectors import member_task

from .rows import editor_row, library_page

ROLE_NAMES = {
    Role.VIEWER: gettext_lazy("viewer"),
    Role.EDITOR: gettext_lazy("editor"),
    Role.REVIEWER: gettext_lazy("reviewer"),
}


@login_required
@require_GET
def library(request: HttpRequest) -> HttpResponse:
    return _documents(request, "web/library/page.html")


@login_required
@require_GET
def documents(request: HttpRequest) -> HttpResponse:
    """The list alone, which the page fetches again after an upload."""
    return _documents(request, "web/library/documents.html")


def _documents(request: HttpRequest, template: str) -> HttpResponse:
    editable = sorted(knowledge_base_ids_for(request.user, minimum_role=Role.EDITOR))
    if not editable:
        return _forbidden(
            request,
            _(
                "The library is for editors: it needs the editor role in a "
                "knowledge base. Ask an administrator if you should have it."
            ),
        )
    knowledge_base_id = request.GET.get("kb") or editable[0]
    refusal = _editor_refusal(request, knowledge_base_id)
    if refusal is not None:
        return refusal
    context = {
        "knowledge_bases": knowledge_bases_for(request.user).filter(pk__in=editable),
        "knowledge_base_id": knowledge_base_id,
        "page": library_page(request.user, knowledge_base_id, request.GET.get("page")),
        "max_upload_bytes": settings.MAX_UPLOAD_BYTES,
        "accept": ",".join(FILE_KINDS.extensions),
    }
    return render(request, template, context)


def _editor_refusal(
    request: HttpRequest, knowledge_base_id: str
) -> HttpResponse | None:
    try:
        require_role(request.user, knowledge_base_id, Role.EDITOR)
    except NotFound as error:
        raise Http404(_("Knowledge base not found.")) from error
    except PermissionDenied:
        role = role_in(request.user, knowledge_base_id)
        return _forbidden(
            request,
            _(
                "The library of %(knowledge_base)s needs the editor role there; "
                "you are %(role)s."
            )
            % {
                "knowledge_base": knowledge_base_id,
                "role": ROLE_NAMES.get(role, role),
            },
        )
    return None


def _forbidden(request: HttpRequest, reason: str) -> HttpResponse:
    return render(request, "web/library/forbidden.html", {"reason": reason}, status=403)


@login_required
@require_GET
def row(request: HttpRequest, document_id: uuid.UUID) -> HttpResponse:
    """One version's row: what a row that is in progress polls."""
    return _row_response(request, document_id, {})


@login_required
@require_POST
def submit(request: HttpRequest, document_id: uuid.UUID) -> HttpResponse:
    return _act(
        request,
        document_id,
        lambda: services.document_submit(user=request.user, document_id=document_id),
        _("Submitted for processing."),
    )


@login_required
@require_POST
def retry(request: HttpRequest, task_id: uuid.UUID) -> HttpResponse:
    document_id = _task_document(request, task_id)
    return _act(
        request,
        document_id,
        lambda: services.ingestion_task_retry(user=request.user, task_id=task_id),
        _("Queued again."),
    )


@login_required
@require_POST
def cancel(request: HttpRequest, task_id: uuid.UUID) -> HttpResponse:
    document_id = _task_document(request, task_id)
    return _act(
        request,
        document_id,
        lambda: services.ingestion_task_cancel(user=request.user, task_id=task_id),
        _("Processing cancelled; the document is a draft again."),
    )


def _task_document(request: HttpRequest, task_id: uuid.UUID) -> uuid.UUID:
    try:
        return member_task(request.user, task_id).document_id
    except NotFound as error:
        raise Http404(_("Task not found.")) from error


def _act(
    request: HttpRequest,
    document_id: uuid.UUID,
    action: Callable[[], object],
    done: str,
) -> HttpResponse:
    """Run one service call; a refusal (409) becomes a message beside the row."""
    try:
        action()
    except NotFound as error:
        raise Http404(_("Document not found.")) from error
    except PermissionDenied as error:
        return _forbidden(request, _refusal_text(error))
    except DomainError as error:
        outcome = {"refusal": _refusal_text(error)}
    else:
        outcome = {"done": done}
    if request.headers.get("HX-Request") == "true":
        return _row_response(request, document_id, outcome)
    knowledge_base_id = editor_row(request.user, document_id).document.knowledge_base_id
    if "done" in outcome:
        messages.success(request, outcome["done"])
    else:
        messages.error(request, outcome["refusal"])
    return redirect(f"{reverse('web:library')}?kb={knowledge_base_id}")


def _refusal_text(error: DomainError) -> str:
    if error.http_status == HTTPStatus.CONFLICT:
        return _(
            "Not possible now (%(code)s): the document or its task has moved on "
            "to a state that does not allow this. Its row shows where it is."
        ) % {"code": error.error_code}
    if isinstance(error, PermissionDenied):
        return _("Not allowed (%(code)s): this needs the editor role.") % {
            "code": error.error_code
        }
    return _("Refused (%(code)s): %(detail)s") % {
        "code": error.error_code,
        "detail": error.detail,
    }


def _row_response(
    request: HttpRequest, document_id: uuid.UUID, outcome: dict[str, str]
) -> HttpResponse:
    try:
        row_ = editor_row(request.user, document_id)
    except NotFound as error:
        raise Http404(_("Document not found.")) from error
    except PermissionDenied as error:
        return _forbidden(request, _refusal_text(error))
    return render(request, "web/library/row.html", {"row": row_, **outcome})
