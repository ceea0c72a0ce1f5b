"""Standard-library HTTP for OpenAI-compatible servers (vLLM, Ollama, a hosted API).

Every failure to get a usable answer (timeout, refused or dropped connection, HTTP
error, a body that is not JSON) raises `ProviderUnavailable`, so callers have one
exception to map.
"""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from .errors import ProviderUnavailable


class OpenAICompatibleClient:
    """POSTs JSON to `{base_url}/{path}` and returns the decoded JSON body."""

    def __init__(self, *, base_url: str, api_key: str, timeout: float) -> None:
        scheme = urlsplit(base_url).scheme
        if scheme not in ("http", "https"):
            raise ImproperlyConfigured(
                "OPENAI_BASE_URL must be an http:// or https:// URL."
            )
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout

    @classmethod
    def from_settings(cls) -> OpenAICompatibleClient:
        return cls(
            base_url=settings.OPENAI_BASE_URL,
            api_key=settings.OPENAI_API_KEY,
            timeout=settings.OPENAI_TIMEOUT_SECONDS,
        )

    def post(self, path: str, payload: dict[str, Any]) -> Any:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(  # noqa: S310 (scheme checked in __init__)
            f"{self.base_url}/{path}",
            data=json.dumps(payload).encode("utf-8"),
            headers=headers,
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310
                body = response.read()
        except urllib.error.HTTPError as error:
            error.close()
            raise ProviderUnavailable(
                f"The provider answered HTTP {error.code} on /{path}."
            ) from error
        except TimeoutError as error:
            raise ProviderUnavailable(
                f"The provider did not answer /{path} within {self.timeout:g} s."
            ) from error
        except (OSError, http.client.HTTPException) as error:
            # URLError (refused, DNS), resets, connections closed mid-answer.
            raise ProviderUnavailable(
                f"The provider could not be reached on /{path} "
                f"({type(error).__name__})."
            ) from error
        try:
            return json.loads(body)
        except ValueError as error:
            raise ProviderUnavailable(
                f"The provider's answer on /{path} is not JSON."
            ) from error
