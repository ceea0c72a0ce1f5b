from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.cache import caches
from django.core.cache.backends.db import DatabaseCache
from django.db import connection
from rest_framework.test import APIClient

from documents.models import Role
from tests.factories import (
    KnowledgeBaseFactory,
    MembershipFactory,
    UserFactory,
    api_token_for,
)

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _empty_cache(request):
    """Request rates, stream slots and login counters live in the cache, and user
    ids and usernames repeat across tests: each test starts with none. A database
    cache is a table, rolled back with a test's transaction but kept by a
    transactional test (no flush empties it, and a server process commits to it),
    so it is emptied after such a test instead."""
    transactional = bool(
        {"transactional_db", "live_server"} & set(request.fixturenames)
    )
    marker = request.node.get_closest_marker("django_db")
    if marker is not None and marker.kwargs.get("transaction"):
        transactional = True
    elif transactional:
        # Set up before this fixture, so its database is still there at teardown.
        request.getfixturevalue("transactional_db")
    for cache in caches.all():
        if not isinstance(cache, DatabaseCache):
            cache.clear()
    yield
    if transactional:
        for cache in caches.all():
            cache.clear()


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
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {api_token_for(user)}")
        return client

    return make


def database_url() -> str:
    settings_dict = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{settings_dict['NAME']}"
    user = settings_dict["USER"] or "postgres"
    password = f":{settings_dict['PASSWORD']}" if settings_dict["PASSWORD"] else ""
    host = settings_dict["HOST"] or "127.0.0.1"
    port = settings_dict["PORT"] or 5432
    return f"postgres://{user}{password}@{host}:{port}/{settings_dict['NAME']}"


@pytest.fixture
def process_env(settings, tmp_path):
    """Environment for another Curator process on this test's database and files."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "SECRET_KEY": "insecure-test-only-key",
        "DATABASE_URL": database_url(),
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),
        "LOG_LEVEL": "WARNING",
        # Shared search snapshots, as in production, but this test's own.
        "SEARCH_SNAPSHOT_DIR": str(tmp_path / "snapshots"),
        # The fast embedder, as in this process (config/settings_test.py), and
        # its model of meaning for answers (none).
        "EMBEDDING_PROVIDER": settings.EMBEDDING_PROVIDER,
        "CHAT_MEANING_PROVIDER": settings.CHAT_MEANING_PROVIDER,
    }
    env.pop("DEBUG", None)
    return env


@pytest.fixture
def manage(process_env):
    """Start `manage.py ...` as a separate OS process."""

    def start(*args: str, **popen) -> subprocess.Popen:
        return subprocess.Popen(
            [sys.executable, str(REPO / "manage.py"), *args],
            cwd=REPO,
            env=process_env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            **popen,
        )

    return start
