"""The pages' content security policy: scripts and styles from our own static
files only, so that an injected `<script>` or inline handler never runs."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

POLICY = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data: blob:",
        "connect-src 'self'",
        "frame-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'self'",
    )
)


class ContentSecurityPolicyMiddleware:
    """Adds the policy to the pages' responses (URL namespace `web`); the admin
    and the API's Swagger page keep Django's and the sidecar's own needs."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        if match is not None and match.namespace == "web":
            response.setdefault("Content-Security-Policy", POLICY)
        return response
