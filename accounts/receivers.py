"""Every login, through the API or the admin, reports its outcome here."""

from __future__ import annotations

from django.contrib.auth.signals import user_logged_in, user_login_failed
from django.dispatch import receiver

from .login_attempts import login_attempt_failed, login_attempt_succeeded


@receiver(user_login_failed)
def count_login_failure(sender, credentials: dict, **kwargs) -> None:
    login_attempt_failed(username=str(credentials.get("username", "")))


@receiver(user_logged_in)
def forget_login_failures(sender, user, **kwargs) -> None:
    login_attempt_succeeded(username=user.get_username())
