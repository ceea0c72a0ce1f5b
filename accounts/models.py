from __future__ import annotations

from knox.models import AuthToken


class ApiToken(AuthToken):
    """An API token as the admin shows it: whose, since when, until when.

    knox keeps only a SHA-512 digest of the token and its first 15 characters
    (to find the row); the token itself is shown once, in the login answer.
    """

    class Meta:
        proxy = True
        verbose_name = "API token"

    def __str__(self) -> str:
        return f"{self.user} (created {self.created:%Y-%m-%d %H:%M})"
