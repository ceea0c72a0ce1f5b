"""Schema helpers shared by every app's API: the one error body and its statuses."""

from __future__ import annotations

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.plumbing import build_bearer_security_scheme_object
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers


class ErrorSerializer(serializers.Serializer):
    error_code = serializers.CharField()
    detail = serializers.CharField()


_DESCRIPTIONS = {
    401: "Not authenticated",
    403: "Permission denied",
    404: "Not found or not visible",
    409: "Invalid transition or stale lock_version",
    411: "Length required: the body was sent without a Content-Length",
    413: "File or request body too large",
    415: "Unsupported media type",
    422: "Validation error or empty document",
    428: "If-Match header missing",
    429: "Too many requests (throttled, account_locked) or streams (too_many_streams)",
    503: "A provider or the search backend is unavailable",
}


def error_responses(*codes: int) -> dict[int, OpenApiResponse]:
    return {
        code: OpenApiResponse(ErrorSerializer, description=_DESCRIPTIONS[code])
        for code in codes
    }


class BearerOrTokenScheme(OpenApiAuthenticationExtension):
    """Our token authentication (`Token <t>` works too) as the schema shows it."""

    target_class = "core.authentication.BearerOrTokenAuthentication"
    name = "tokenAuth"

    def get_security_definition(self, auto_schema):
        return build_bearer_security_scheme_object(
            header_name="Authorization",
            token_prefix="Bearer",  # noqa: S106
        )
