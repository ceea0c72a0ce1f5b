from __future__ import annotations

import pytest

from core.parsers import nesting_deeper_than

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("data", "depth"),
    [
        ("text", 0),
        ([], 1),
        ({"a": 1}, 1),
        ({"a": [1, 2]}, 2),
        ([[[]]], 3),
        ({"a": [{"b": {}}], "c": 1}, 4),
    ],
)
def test_nesting_depth(data, depth):
    assert not nesting_deeper_than(data, depth)
    assert depth == 0 or nesting_deeper_than(data, depth - 1)


def test_a_deep_value_is_measured_without_recursion():
    value: list = []
    for _ in range(100_000):
        value = [value]
    assert nesting_deeper_than(value, 32)


@pytest.mark.parametrize(("depth", "status"), [(3, 422), (40, 400), (5000, 400)])
def test_the_api_refuses_json_nested_past_the_setting(
    api_client, settings, depth, status
):
    settings.API_MAX_JSON_DEPTH = 32
    body = '{"username": ' + "[" * depth + "]" * depth + "}"

    response = api_client.post(
        "/api/auth/token", data=body, content_type="application/json"
    )

    assert response.status_code == status
    if status == 400:
        assert response.json()["error_code"] == "malformed_request"
        assert "API_MAX_JSON_DEPTH" in response.json()["detail"]
