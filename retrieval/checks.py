"""System checks of retrieval's settings, run by `manage.py check` and `runserver`
(processes that run none get the client's log warning instead)."""

from __future__ import annotations

from django.conf import settings
from django.core.checks import Warning, register

from .openai_client import host_of, sends_key_in_clear


@register()
def openai_base_url_is_encrypted(app_configs, **kwargs) -> list[Warning]:
    if not sends_key_in_clear(settings.OPENAI_BASE_URL):
        return []
    return [
        Warning(
            f"OPENAI_BASE_URL is plain http:// to "
            f"{host_of(settings.OPENAI_BASE_URL)}: the API key and the texts "
            "sent cross the network unencrypted.",
            hint="Use an https:// URL (plain http:// is fine for 127.0.0.1 "
            "and localhost).",
            id="retrieval.W001",
        )
    ]
