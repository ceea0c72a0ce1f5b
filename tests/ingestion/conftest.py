from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

from documents.models import Role
from ingestion import services
from ingestion.worker import Worker

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared" / "corpus"


@pytest.fixture
def submit(editor):
    """Submit a document as the editor; returns the queued task."""

    def make(document):
        return services.document_submit(user=editor, document_id=document.pk)

    return make


@pytest.fixture
def run_worker():
    """Run the real worker loop in this process; returns (stats, output lines)."""

    def run(task_id=None, **options):
        lines: list[str] = []
        worker = Worker(
            worker_id=options.pop("worker_id", "test-worker"),
            write=lines.append,
            **options,
        )
        stats = worker.run(task_id)
        return stats, lines

    return run


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
def process_env(settings):
    """Environment for another Curator process on this test's database and files."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "SECRET_KEY": "insecure-test-only-key",
        "DATABASE_URL": database_url(),
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),
        "LOG_LEVEL": "WARNING",
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


@pytest.fixture
def kb_editor(member):
    return member(Role.EDITOR, username="eddie")
