"""One error shape for the whole API: `{"error_code": "...", "detail": "..."}`.

Domain code raises `core.errors.DomainError` subclasses; DRF's own exceptions are
mapped to stable codes here. Nothing else in the code base builds error responses.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.exceptions import (
    BadRequest,
    RequestDataTooBig,
    SuspiciousOperation,
    TooManyFieldsSent,
    TooManyFilesSent,
)
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404, JsonResponse, UnreadablePostError
from django.views import defaults
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler

from core.errors import DomainError

logger = logging.getLogger(__name__)

_DRF_CODES: list[tuple[type[Exception], str, int]] = [
    (exceptions.NotAuthenticated, "not_authenticated", status.HTTP_401_UNAUTHORIZED),
    (
        exceptions.AuthenticationFailed,
        "authentication_failed",
        status.HTTP_401_UNAUTHORIZED,
    ),
    (exceptions.PermissionDenied, "permission_denied", status.HTTP_403_FORBIDDEN),
    (exceptions.NotFound, "not_found", status.HTTP_404_NOT_FOUND),
    (
        exceptions.MethodNotAllowed,
        "method_not_allowed",
        status.HTTP_405_METHOD_NOT_ALLOWED,
    ),
    (exceptions.NotAcceptable, "not_acceptable", status.HTTP_406_NOT_ACCEPTABLE),
    (
        exceptions.UnsupportedMediaType,
        "unsupported_media_type",
        status.HTTP_415_UNSUPPORTED_MEDIA_TYPE,
    ),
    (exceptions.Throttled, "throttled", status.HTTP_429_TOO_MANY_REQUESTS),
    (exceptions.ParseError, "malformed_request", status.HTTP_400_BAD_REQUEST),
    (
        exceptions.ValidationError,
        "validation_error",
        status.HTTP_422_UNPROCESSABLE_ENTITY,
    ),
]


def error_body(error_code: str, detail, **extra) -> dict:
    return {"error_code": error_code, "detail": detail, **extra}


def _flatten(detail) -> str:
    """Turn DRF's nested error detail into one readable sentence."""
    if isinstance(detail, dict):
        parts = []
        for field, value in detail.items():
            text = _flatten(value)
            parts.append(text if field == "non_field_errors" else f"{field}: {text}")
        return "; ".join(parts)
    if isinstance(detail, list):
        return " ".join(_flatten(item) for item in detail)
    return str(detail)


_UNREADABLE: list[tuple[type[Exception], str]] = [
    (TooManyFieldsSent, "The request has more form fields than allowed."),
    (TooManyFilesSent, "The request has more files than allowed."),
    (UnreadablePostError, "The request body ended before its declared length."),
]


def _request_error(exc: Exception) -> Response | None:
    """Django's refusals of a request body, raised as it is parsed: the client's
    fault, so a 4xx and a warning, never an ERROR with a traceback."""
    if isinstance(exc, SuspiciousOperation):
        # The logger Django reports them to, at WARNING: the fault is the client's.
        logging.getLogger(f"django.security.{type(exc).__name__}").warning("%s", exc)
    if isinstance(exc, RequestDataTooBig):
        return Response(
            error_body(
                "file_too_large",
                "The request body is larger than the "
                f"{settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes allowed for what is "
                "not a file.",
            ),
            status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
        )
    if isinstance(exc, (SuspiciousOperation, BadRequest, UnreadablePostError)):
        # Django's own messages may name server paths: say what, not where.
        detail = next(
            (text for kind, text in _UNREADABLE if isinstance(exc, kind)),
            "The request could not be read.",
        )
        return Response(
            error_body("malformed_request", detail),
            status=status.HTTP_400_BAD_REQUEST,
        )
    return None


def api_exception_handler(exc, context):
    if isinstance(exc, DomainError):
        headers = {"Retry-After": str(exc.retry_after)} if exc.retry_after else None
        return Response(
            error_body(exc.error_code, exc.detail),
            status=exc.http_status,
            headers=headers,
        )
    if (response := _request_error(exc)) is not None:
        return response
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()

    response = exception_handler(exc, context)
    if response is None:
        logger.exception("Unhandled error in %s", context.get("view"))
        return Response(
            error_body("internal_error", "An internal error occurred."),
            status=status.HTTP_500_INTERNAL_SERVER_ERROR,
        )
    for exc_class, code, http_status in _DRF_CODES:
        if isinstance(exc, exc_class):
            body = error_body(code, _flatten(exc.detail))
            if isinstance(exc, exceptions.ValidationError) and isinstance(
                exc.detail, dict
            ):
                body["fields"] = exc.detail
            response.data = body
            response.status_code = http_status
            return response
    response.data = error_body("error", _flatten(getattr(exc, "detail", "")))
    return response


def not_found_view(request, exception=None):
    """JSON 404 under /api/, Django's page elsewhere (the admin)."""
    if request.path.startswith("/api/"):
        return JsonResponse(error_body("not_found", "Not found."), status=404)
    return defaults.page_not_found(request, exception)


def server_error_view(request):
    if request.path.startswith("/api/"):
        return JsonResponse(
            error_body("internal_error", "An internal error occurred."), status=500
        )
    return defaults.server_error(request)
