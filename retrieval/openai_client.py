"""Standard-library HTTP for OpenAI-compatible servers (vLLM, Ollama, a hosted API).

Every failure to get a usable answer (timeout, refused or dropped connection, HTTP
error, a redirect, an answer over `OPENAI_MAX_RESPONSE_BYTES`, a body that is not
JSON) raises `ProviderUnavailable`, so callers have one exception to map.
"""

from __future__ import annotations

import functools
import http.client
import ipaddress
import json
import logging
import time
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from .errors import ProviderUnavailable

logger = logging.getLogger(__name__)

_READ_CHUNK_BYTES = 64 * 1024


class _RefuseRedirects(urllib.request.HTTPRedirectHandler):
    """A redirect would carry the API key to whatever host it names: stop at the 3xx,
    which urllib then raises as an `HTTPError`."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


# Proxies from the environment still apply, as with `urlopen`.
_OPENER = urllib.request.build_opener(_RefuseRedirects)


def sends_key_in_clear(base_url: str) -> bool:
    """True for plain `http://` to a host other than this machine's loopback."""
    parts = urlsplit(base_url)
    if parts.scheme != "http":
        return False
    host = (parts.hostname or "").rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):
        return False
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:
        return True


def host_of(base_url: str) -> str:
    """`host[:port]` for messages: a URL's user and password never get logged."""
    parts = urlsplit(base_url)
    return f"{parts.hostname}:{parts.port}" if parts.port else f"{parts.hostname}"


@functools.cache
def _warn_in_clear(base_url: str) -> None:
    logger.warning(
        "OPENAI_BASE_URL is plain http:// to %s: the API key and every text sent "
        "for embedding or chat cross the network unencrypted. Use https://.",
        host_of(base_url),
    )


class OpenAICompatibleClient:
    """POSTs JSON to `{base_url}/{path}` and returns the decoded JSON body."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        timeout: float,
        max_response_bytes: int | None = None,
    ) -> None:
        scheme = urlsplit(base_url).scheme
        if scheme not in ("http", "https"):
            raise ImproperlyConfigured(
                "OPENAI_BASE_URL must be an http:// or https:// URL."
            )
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout
        self.max_response_bytes = (
            settings.OPENAI_MAX_RESPONSE_BYTES
            if max_response_bytes is None
            else max_response_bytes
        )
        if sends_key_in_clear(self.base_url):
            _warn_in_clear(self.base_url)

    @classmethod
    def from_settings(cls) -> OpenAICompatibleClient:
        return cls(
            base_url=settings.OPENAI_BASE_URL,
            api_key=settings.OPENAI_API_KEY,
            timeout=settings.OPENAI_TIMEOUT_SECONDS,
            max_response_bytes=settings.OPENAI_MAX_RESPONSE_BYTES,
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
            with _OPENER.open(request, timeout=self.timeout) as response:
                body = self._read_bounded(response, path)
        except urllib.error.HTTPError as error:
            error.close()
            if 300 <= error.code < 400:
                raise ProviderUnavailable(
                    f"The provider redirected /{path} (HTTP {error.code}); "
                    "redirects are refused so the API key stays with "
                    "OPENAI_BASE_URL's host."
                ) from error
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
        except (ValueError, RecursionError) as error:
            raise ProviderUnavailable(
                f"The provider's answer on /{path} is not JSON."
            ) from error

    def _read_bounded(self, response: http.client.HTTPResponse, path: str) -> bytes:
        """The body, refused past `max_response_bytes` or past `timeout` seconds of
        reading (a server dripping bytes would otherwise hold the caller forever)."""
        limit = self.max_response_bytes
        declared = response.headers.get("Content-Length", "")
        if declared.isascii() and declared.isdigit() and int(declared) > limit:
            raise self._too_large(path)
        deadline = time.monotonic() + self.timeout
        parts: list[bytes] = []
        received = 0
        while chunk := response.read1(_READ_CHUNK_BYTES):
            received += len(chunk)
            if received > limit:
                raise self._too_large(path)
            if time.monotonic() > deadline:
                raise TimeoutError
            parts.append(chunk)
        return b"".join(parts)

    def _too_large(self, path: str) -> ProviderUnavailable:
        return ProviderUnavailable(
            f"The provider's answer on /{path} is larger than "
            f"OPENAI_MAX_RESPONSE_BYTES ({self.max_response_bytes} bytes)."
        )
