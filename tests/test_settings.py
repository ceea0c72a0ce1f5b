from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

REPO = Path(__file__).resolve().parents[1]


def run_settings(env: dict[str, str]) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in ("SECRET_KEY", "DEBUG")}
    return subprocess.run(
        [sys.executable, "-c", "import config.settings as s; print(s.DEBUG)"],
        cwd=REPO,
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=False,
    )


def test_missing_secret_key_is_a_clear_startup_error():
    result = run_settings({})
    assert result.returncode != 0
    assert "SECRET_KEY is not set" in result.stderr


def test_debug_is_off_unless_asked_for():
    assert run_settings({"SECRET_KEY": "x"}).stdout.strip() == "False"
    assert run_settings({"DEBUG": "true"}).stdout.strip() == "True"


def test_allowed_hosts_default(settings):
    from config import settings as real

    if "ALLOWED_HOSTS" not in os.environ:
        assert real.ALLOWED_HOSTS == ["localhost", "127.0.0.1"]


def test_env_example_documents_every_variable():
    import re

    source = (REPO / "config" / "settings.py").read_text()
    used = set(re.findall(r'env(?:\.\w+)?\(\s*"([A-Z_]+)"', source))
    documented = set(
        re.findall(r"^([A-Z_]+)=", (REPO / ".env.example").read_text(), re.MULTILINE)
    )
    assert used - documented == set()


@pytest.mark.django_db
def test_sqlite_runs_in_wal_mode_with_immediate_transactions():
    if connection.vendor != "sqlite":
        pytest.skip("SQLite-specific")
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA journal_mode")
        assert cursor.fetchone()[0] == "wal"
    assert connection.settings_dict["OPTIONS"]["transaction_mode"] == "IMMEDIATE"
    assert connection.settings_dict["OPTIONS"]["timeout"] >= 5
