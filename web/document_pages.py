"""`web:document-page`: one page of an original drawn as a PNG, for the review
and ask pages, under the API's visibility rule (`visible_document`)."""

from __future__ import annotations

import uuid

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_GET

from core.errors import DomainError, NotFound
from documents.selectors import visible_document

from . import page_images

# What the error image says, by the error's code.
_REASONS = {
    "render_timeout": _("Drawing it took longer than the time limit."),
    "render_too_large": _("Drawing it needed more memory than the limit."),
    "render_busy": _("Other pages are being drawn; reload in a moment."),
    "page_not_found": _("The file has no such page."),
    "no_page_images": _("Only PDF and image files are drawn."),
}
_DAMAGED = _("The file is damaged or not what its name says.")


@login_required
@require_GET
def page_image(request: HttpRequest, document_id: uuid.UUID, page: int) -> HttpResponse:
    try:
        document = visible_document(request.user, document_id)
    except NotFound:
        raise Http404("Document not found.") from None
    try:
        width = int(request.GET.get("width", page_images.DEFAULT_WIDTH))
    except ValueError:
        width = page_images.DEFAULT_WIDTH
    try:
        png = page_images.page_png(document, page, width)
    except DomainError as error:
        return _error_image(request, error)
    response = HttpResponse(png, content_type="image/png")
    # Versions never change; the visibility check runs again on each request.
    response["Cache-Control"] = "private, max-age=86400"
    response["X-Content-Type-Options"] = "nosniff"
    return response


def _error_image(request: HttpRequest, error: DomainError) -> HttpResponse:
    """An image that says why, with the error's status: an `<img>` shows it."""
    svg = render_to_string(
        "web/review/page_error.svg",
        {
            "title": _("This page cannot be shown."),
            "reason": _REASONS.get(error.error_code, _DAMAGED),
            "error_code": error.error_code,
        },
    )
    response = HttpResponse(
        svg, content_type="image/svg+xml; charset=utf-8", status=error.http_status
    )
    response["X-Error-Code"] = error.error_code
    response["X-Content-Type-Options"] = "nosniff"
    response["Cache-Control"] = "no-store"
    if error.retry_after:
        response["Retry-After"] = str(error.retry_after)
    return response
