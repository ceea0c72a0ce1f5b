"""How large a request body each view takes: a small one unless the view says more.

A view names its own limits by method, the way it names its `throttle_scope`:

    class DocumentListView(APIView):
        request_body_limits = {"POST": UPLOAD_BODY}

Every other request, whatever its path (the admin, the pages, a path that does not
exist), gets `DEFAULT` (`REQUEST_BODY_MAX_BYTES`). `RequestBodyGuardMiddleware`
applies them before anything reads the body (docs/security/bodies.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.http import HttpRequest
from django.urls import Resolver404, resolve


@dataclass(frozen=True)
class BodyLimit:
    """`max_bytes()` read at each request (settings may change); past it,
    `413 error_code`. `length_required`: a body without a `Content-Length` is
    refused unread, since its size cannot be checked before it is read."""

    max_bytes: Callable[[], int]
    error_code: str = "request_too_large"
    length_required: bool = False


DEFAULT = BodyLimit(lambda: settings.REQUEST_BODY_MAX_BYTES)


def body_limit_for(request: HttpRequest) -> BodyLimit:
    """The limit of the view the request's path leads to, for its method."""
    try:
        match = resolve(request.path_info)
    except Resolver404:
        return DEFAULT
    view = getattr(match.func, "view_class", match.func)
    limits = getattr(view, "request_body_limits", None) or {}
    return limits.get(request.method, DEFAULT)
