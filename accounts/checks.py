"""A warning for login settings that are no longer read (`manage.py check`)."""

from __future__ import annotations

import os

from django.core.checks import Tags, Warning, register

# The limits of issue 36 replaced a per-username lockout that let anyone lock
# an account; these names configured it.
REPLACED = {
    "LOGIN_THROTTLE_PER_ADDRESS": "LOGIN_LIMITS_PER_ADDRESS",
    "LOGIN_THROTTLE_PER_USERNAME": "LOGIN_LIMITS_PER_ACCOUNT_AND_ADDRESS",
    "LOGIN_THROTTLE_WINDOW_SECONDS": "LOGIN_LIMITS_PER_ADDRESS",
    "LOGIN_LOCKOUT_FAILURES": "LOGIN_LIMITS_PER_ACCOUNT",
    "LOGIN_LOCKOUT_WINDOW_SECONDS": "LOGIN_LIMITS_PER_ACCOUNT",
    "LOGIN_LOCKOUT_SECONDS": "LOGIN_LIMITS_PER_ACCOUNT",
}


@register(Tags.security)
def replaced_login_settings(app_configs, **kwargs) -> list[Warning]:
    return [
        Warning(
            f"{old} is no longer read.",
            hint=f"Set {new} instead (docs/security/auth.md).",
            id="accounts.W001",
        )
        for old, new in REPLACED.items()
        if old in os.environ
    ]
