"""Every login, through the API, the admin or the pages, reports its outcome here."""

from __future__ import annotations

from django.contrib.auth.signals import user_logged_in, user_login_failed
from django.dispatch import receiver

from .login_attempts import login_attempt_end


@receiver(user_login_failed)
def count_login_failure(sender, credentials: dict, request=None, **kwargs) -> None:
    login_attempt_end(request, succeeded=False)


@receiver(user_logged_in)
def forget_login_failures(sender, user, request=None, **kwargs) -> None:
    login_attempt_end(request, succeeded=True)
