"""Domain errors: refusals with a stable `error_code` and the HTTP status they map to.

Services raise them; `core/api_errors.py` turns them (and DRF's own exceptions)
into the one error shape of the API. This module imports nothing heavy, so the
worker, which never answers HTTP, does not load DRF.
"""

from __future__ import annotations

from http import HTTPStatus


class DomainError(Exception):
    """A refusal with a stable code that the API and the admin both report."""

    error_code = "error"
    http_status = HTTPStatus.BAD_REQUEST
    default_detail = "The request could not be completed."
    # Seconds after which the same request may succeed: the `Retry-After` header.
    retry_after: int | None = None

    def __init__(self, detail: str | None = None) -> None:
        self.detail = detail or self.default_detail
        super().__init__(self.detail)


class NotFound(DomainError):
    error_code = "not_found"
    http_status = HTTPStatus.NOT_FOUND
    default_detail = "Not found."


class PermissionDenied(DomainError):
    error_code = "permission_denied"
    http_status = HTTPStatus.FORBIDDEN
    default_detail = "You do not have permission to perform this action."


class InvalidTransition(DomainError):
    error_code = "invalid_transition"
    http_status = HTTPStatus.CONFLICT
    default_detail = "This action is not allowed in the current state."


class StaleVersion(DomainError):
    error_code = "stale_version"
    http_status = HTTPStatus.CONFLICT
    default_detail = "The object was changed by someone else; reload and retry."


class PreconditionRequired(DomainError):
    error_code = "precondition_required"
    http_status = HTTPStatus.PRECONDITION_REQUIRED
    default_detail = "This request needs an If-Match header with the lock_version."


class ValidationFailed(DomainError):
    error_code = "validation_error"
    http_status = HTTPStatus.UNPROCESSABLE_ENTITY
    default_detail = "The request is not valid."


class Conflict(DomainError):
    error_code = "conflict"
    http_status = HTTPStatus.CONFLICT


class TooManyRequests(DomainError):
    """A refusal that may be retried after `retry_after` seconds."""

    error_code = "throttled"
    http_status = HTTPStatus.TOO_MANY_REQUESTS
    default_detail = "Too many requests; try again later."

    def __init__(self, retry_after: int, detail: str | None = None) -> None:
        self.retry_after = retry_after
        super().__init__(detail)


class SeparationOfDuties(PermissionDenied):
    """Four eyes: the person who uploaded a version is not the one who publishes it."""

    error_code = "separation_of_duties"
    default_detail = "You uploaded this version; another reviewer must publish it."
