"""The client's address as the login throttles see it."""

from __future__ import annotations

from django.http import HttpRequest
from rest_framework.throttling import BaseThrottle


def client_address(request: HttpRequest) -> str:
    """REMOTE_ADDR, or with `TRUSTED_PROXY_COUNT` proxies in front the address the
    outermost one saw (DRF's `NUM_PROXIES` rule, so DRF's own throttles agree);
    a client-sent X-Forwarded-For is never believed by default."""
    return BaseThrottle().get_ident(request)
