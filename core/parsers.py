"""The API's JSON parser: DRF's, with a nesting limit.

The standard decoder recurses once per level and raises `RecursionError` (not a
`ValueError`) about a thousand levels down; nothing the API accepts is nested more
than a few levels, so anything past `API_MAX_JSON_DEPTH` is a malformed request.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework import parsers
from rest_framework.exceptions import ParseError


def nesting_deeper_than(data: Any, limit: int) -> bool:
    """Whether lists and objects nest more than `limit` levels (iterative: a deep
    value cannot exhaust the stack here either)."""
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


class JSONParser(parsers.JSONParser):
    def parse(self, stream, media_type=None, parser_context=None) -> Any:
        limit = settings.API_MAX_JSON_DEPTH
        too_deep = ParseError(
            f"JSON parse error - nested more than {limit} levels deep "
            "(API_MAX_JSON_DEPTH)."
        )
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise too_deep from None
        if nesting_deeper_than(data, limit):
            raise too_deep
        return data
