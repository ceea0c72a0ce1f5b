"""Errors of retrieval that callers map: a provider that is down, too many streams."""

from __future__ import annotations

from http import HTTPStatus

from core.errors import DomainError


class ProviderUnavailable(DomainError):
    """An embedding or chat provider timed out, could not be reached, or answered
    something unusable. Transient: `503` on the API, a retried task in ingestion.

    `detail` (what users see) stays generic; `reason` says what happened, for logs.
    """

    error_code = "provider_unavailable"
    http_status = HTTPStatus.SERVICE_UNAVAILABLE
    default_detail = "The embedding or chat provider is unavailable; try again later."

    def __init__(self, reason: str = "") -> None:
        super().__init__()
        self.reason = reason or self.default_detail

    def __str__(self) -> str:
        return self.reason


class TooManyStreams(DomainError):
    """The caller already has CHAT_MAX_CONCURRENT_STREAMS_PER_USER streams open."""

    error_code = "too_many_streams"
    http_status = HTTPStatus.TOO_MANY_REQUESTS
    default_detail = (
        "You have too many answers streaming at once; wait for one to finish."
    )
    # A hint: streams last seconds, and the next one to end frees a slot.
    retry_after = 5
