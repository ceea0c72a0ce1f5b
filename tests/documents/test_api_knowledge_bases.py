from __future__ import annotations

import pytest

from documents.models import Role
from tests.factories import KnowledgeBaseFactory

pytestmark = pytest.mark.django_db


def test_lists_only_callers_knowledge_bases_with_role(member, client_for):
    engineering = KnowledgeBaseFactory(id="kb-engineering", name="Engineering")
    KnowledgeBaseFactory(id="kb-secret", name="Secret")
    user = member(Role.EDITOR, username="bob")
    member(Role.REVIEWER, kb=engineering, username="bob")

    response = client_for(user).get("/api/knowledge-bases")

    assert response.status_code == 200
    assert response.json() == [
        {
            "knowledge_base_id": "kb-company",
            "name": "Company",
            "description": "",
            "role": "editor",
        },
        {
            "knowledge_base_id": "kb-engineering",
            "name": "Engineering",
            "description": "",
            "role": "reviewer",
        },
    ]


def test_user_without_memberships_sees_none(client_for, knowledge_base):
    from tests.factories import UserFactory

    response = client_for(UserFactory()).get("/api/knowledge-bases")
    assert response.json() == []


def test_superuser_sees_only_memberships_too(client_for, knowledge_base):
    from tests.factories import UserFactory

    admin = UserFactory(is_superuser=True, is_staff=True)
    assert client_for(admin).get("/api/knowledge-bases").json() == []
