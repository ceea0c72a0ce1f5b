"""Refusals decided from a request's headers alone, before anything reads its body."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

from core.api_errors import error_body

_DIGITS = frozenset("0123456789")


class RequestBodyGuardMiddleware:
    """`400 malformed_request` for a `Content-Length` that is not a number, and
    `413 file_too_large` for a body without files declared larger than
    `DATA_UPLOAD_MAX_MEMORY_SIZE` (Django would read it into memory, and refuse it
    only then, with an ERROR and a traceback in the log). Multipart bodies stream
    to disk and are limited by the views that take them (`MAX_UPLOAD_BYTES`).
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        declared = request.META.get("CONTENT_LENGTH") or ""
        if declared and not set(declared) <= _DIGITS:
            return _refuse(
                request,
                400,
                "malformed_request",
                "Content-Length must be a whole number of bytes.",
            )
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if (
            declared
            and limit is not None
            and int(declared) > limit
            and request.content_type != "multipart/form-data"
        ):
            return _refuse(
                request,
                413,
                "file_too_large",
                f"The request body is {declared} bytes; the limit for a request "
                f"without files is {limit} bytes.",
            )
        return self.get_response(request)


def _refuse(
    request: HttpRequest, status: int, error_code: str, detail: str
) -> HttpResponse:
    if request.path.startswith("/api/"):
        response = JsonResponse(error_body(error_code, detail), status=status)
    else:
        response = HttpResponse(detail, status=status, content_type="text/plain")
    # Outside CommonMiddleware, which would set it: a client must not have to wait
    # for the close (the server may still be reading the body it refused).
    response["Content-Length"] = len(response.content)
    return response
