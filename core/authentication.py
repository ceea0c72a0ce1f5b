"""API token authentication that accepts both `Bearer <token>` and `Token <token>`.

Tokens are knox's: stored as a digest, each with an expiry (see accounts/).
"""

from __future__ import annotations

from knox.auth import TokenAuthentication
from rest_framework.authentication import get_authorization_header
from rest_framework.exceptions import AuthenticationFailed

_KEYWORDS = (b"bearer", b"token")


class BearerOrTokenAuthentication(TokenAuthentication):
    def authenticate(self, request):
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower() not in _KEYWORDS:
            return None
        if len(parts) != 2:
            raise AuthenticationFailed(
                "Invalid token header: give one token after the keyword."
            )
        try:
            parts[1].decode()
        except UnicodeError:
            raise AuthenticationFailed("Invalid token.") from None
        return self.authenticate_credentials(parts[1])

    def authenticate_header(self, request) -> str:
        return "Bearer"
