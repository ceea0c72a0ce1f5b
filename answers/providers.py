"""Chat providers by name, the way `django.contrib.auth.hashers.get_hasher` does it:
`CHAT_PROVIDERS` maps names to classes, `CHAT_PROVIDER` picks the default."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string

from .types import ChatProvider


def provider_names() -> list[str]:
    return sorted(settings.CHAT_PROVIDERS)


def get_chat_provider(name: str | None = None) -> ChatProvider:
    """The provider called `name` (default: `CHAT_PROVIDER`), built from settings."""
    name = name or settings.CHAT_PROVIDER
    path = settings.CHAT_PROVIDERS.get(name)
    if path is None:
        raise ImproperlyConfigured(
            f"Unknown chat provider {name!r}; use one of {', '.join(provider_names())}."
        )
    return import_string(path).from_settings()
