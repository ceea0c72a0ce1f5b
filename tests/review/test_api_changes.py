"""GET /api/documents/{id}/changes: the reviewer's diff over the API."""

from __future__ import annotations

import uuid

import pytest
import yaml

from documents.models import Role
from tests.factories import DocumentFactory, chunks_of

pytestmark = pytest.mark.django_db


def url(document) -> str:
    return f"/api/documents/{document.pk}/changes"


@pytest.fixture
def versions(knowledge_base):
    v1 = DocumentFactory(knowledge_base=knowledge_base, published=True)
    v2 = DocumentFactory(
        knowledge_base=knowledge_base,
        family_id=v1.family_id,
        version=2,
        review_pending=True,
    )
    chunks_of(
        v1,
        [
            ("员工每年享有三周带薪年假，具体天数按工龄计算。", ["年假"], 1),
            ("Parking is free for all staff.", ["Perks"], 2),
        ],
    )
    chunks_of(
        v2,
        [
            ("员工每年享有四周带薪年假，具体天数按工龄计算。", ["年假"], 1),
            ("Remote work needs a manager's approval.", ["Remote"], 2),
        ],
    )
    return v1, v2


def test_a_member_reads_the_changes(client_for, member, versions):
    v1, v2 = versions
    reviewer = member(Role.REVIEWER, username="rey")

    response = client_for(reviewer).get(url(v2))

    assert response.status_code == 200
    body = response.json()
    assert body["document_id"] == str(v2.pk)
    assert body["comparison"] == "compared"
    assert body["published_document_id"] == str(v1.pk)
    assert body["published_version"] == 1
    assert body["summary"] == {
        "added": 1,
        "removed": 1,
        "changed": 1,
        "moved": 0,
        "unchanged": 0,
        "passages": 2,
        "published_passages": 2,
        "truncated": False,
    }
    changed, removed, added = body["changes"]
    assert changed["kind"] == "changed"
    assert changed["new"] == {
        "text": "员工每年享有四周带薪年假，具体天数按工龄计算。",
        "heading_path": ["年假"],
        "page": 1,
    }
    assert changed["segments"] == [
        {"op": "equal", "text": "员工每年享有"},
        {"op": "delete", "text": "三"},
        {"op": "insert", "text": "四"},
        {"op": "equal", "text": "周带薪年假，具体天数按工龄计算。"},
    ]
    assert 0.5 <= changed["similarity"] <= 1
    assert removed["kind"] == "removed"
    assert removed["new"] is None
    assert removed["old"]["heading_path"] == ["Perks"]
    assert removed["segments"] == []
    assert added["kind"] == "added"
    assert added["old"] is None
    assert body["unlisted_changes"] == 0


def test_without_a_published_version(client_for, reviewer, knowledge_base):
    draft = DocumentFactory(knowledge_base=knowledge_base, review_pending=True)

    body = client_for(reviewer).get(url(draft)).json()

    assert body["comparison"] == "no_published_version"
    assert body["published_document_id"] is None
    assert body["summary"] is None
    assert body["changes"] == []


def test_the_published_version_itself(client_for, viewer, versions):
    v1, _ = versions

    body = client_for(viewer).get(url(v1)).json()

    assert body["comparison"] == "is_published"
    assert body["summary"] is None


def test_non_members_and_unknown_documents_are_not_found(
    client_for, member, other_knowledge_base, versions
):
    _, v2 = versions
    outsider = member(Role.REVIEWER, kb=other_knowledge_base, username="olga")

    hidden = client_for(outsider).get(url(v2))
    unknown = client_for(outsider).get(f"/api/documents/{uuid.uuid4()}/changes")

    assert hidden.status_code == 404
    assert hidden.json()["error_code"] == "not_found"
    assert unknown.status_code == 404
    assert "Parking" not in hidden.content.decode()


def test_anonymous_is_refused(api_client, versions):
    _, v2 = versions

    assert api_client.get(url(v2)).status_code == 401


def test_schema_documents_the_endpoint(api_client):
    schema = yaml.safe_load(api_client.get("/api/schema").content)

    operation = schema["paths"]["/api/documents/{document_id}/changes"]["get"]
    assert {"200", "401", "404"} <= set(operation["responses"])
    component = schema["components"]["schemas"]["DocumentChanges"]
    assert {"comparison", "summary", "changes", "unlisted_changes"} <= set(
        component["properties"]
    )
