from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from documents.models import Role
from tests.factories import KnowledgeBaseFactory, MembershipFactory, UserFactory


@pytest.fixture
def knowledge_base(db):
    return KnowledgeBaseFactory(id="kb-company", name="Company")


@pytest.fixture
def other_knowledge_base(db):
    return KnowledgeBaseFactory(id="kb-other", name="Other team")


@pytest.fixture
def member(knowledge_base):
    """Make a user with a role in `knowledge_base` (or another one)."""

    def make(role: str = Role.VIEWER, *, kb=None, username: str | None = None, **kw):
        user = UserFactory(**({"username": username} if username else {}), **kw)
        MembershipFactory(user=user, knowledge_base=kb or knowledge_base, role=role)
        return user

    return make


@pytest.fixture
def viewer(member):
    return member(Role.VIEWER, username="vera")


@pytest.fixture
def editor(member):
    return member(Role.EDITOR, username="eddie")


@pytest.fixture
def reviewer(member):
    return member(Role.REVIEWER, username="rita", is_staff=True)


@pytest.fixture
def api_client():
    return APIClient()


@pytest.fixture
def client_for():
    """An API client authenticated as `user` with a Bearer token."""

    def make(user) -> APIClient:
        client = APIClient()
        token, _ = Token.objects.get_or_create(user=user)
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {token.key}")
        return client

    return make
