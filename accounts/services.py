"""API tokens: a new one per login, each with an expiry, revoked one or all at once."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from knox.models import AuthToken


@dataclass(frozen=True)
class IssuedToken:
    token: str
    expires_at: datetime


def api_token_issue(*, user: AbstractBaseUser) -> IssuedToken:
    """A fresh token; the user's expired tokens and the oldest beyond
    `API_TOKEN_MAX_PER_USER` go (knox reads all of a user's tokens on each call)."""
    ttl = timedelta(hours=settings.API_TOKEN_TTL_HOURS)
    with transaction.atomic():
        instance, token = AuthToken.objects.create(user=user, expiry=ttl)
        kept = AuthToken.objects.filter(user=user, expiry__gt=timezone.now())
        newest = kept.order_by("-created").values_list("digest", flat=True)
        AuthToken.objects.filter(user=user).exclude(
            digest__in=list(newest[: settings.API_TOKEN_MAX_PER_USER])
        ).delete()
    return IssuedToken(token=token, expires_at=instance.expiry)


def api_token_revoke(*, token: AuthToken) -> None:
    AuthToken.objects.filter(pk=token.pk).delete()


def api_token_revoke_all(*, user: AbstractBaseUser) -> int:
    deleted, _ = AuthToken.objects.filter(user=user).delete()
    return deleted
