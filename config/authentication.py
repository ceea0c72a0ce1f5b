"""Token authentication that accepts both `Bearer <token>` and `Token <token>`."""

from __future__ import annotations

from rest_framework.authentication import TokenAuthentication, get_authorization_header

_KEYWORDS = (b"bearer", b"token")


class BearerOrTokenAuthentication(TokenAuthentication):
    keyword = "Bearer"

    def authenticate(self, request):
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower() not in _KEYWORDS:
            return None
        self.keyword = parts[0].decode()
        return super().authenticate(request)
