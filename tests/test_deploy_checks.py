"""`config/deploy_checks.py` and gunicorn's start: the production server says what
`manage.py check --deploy` warns of instead of serving plain-HTTP settings silently.

The real `make serve` process is tested in tests/operations/test_production_server.py.
"""

from __future__ import annotations

import re
import runpy
import secrets
from types import SimpleNamespace

import pytest

from config.deploy_checks import deploy_warnings
from tests.conftest import REPO
from tests.security.test_deployment import production_example

PLAIN_HTTP = {"security.W004", "security.W008", "security.W012", "security.W016"}


def ids(lines: list[str]) -> set[str]:
    return {re.match(r"\((\S+)\) ", line).group(1) for line in lines}


def test_each_plain_http_setting_is_named(settings):
    settings.DEBUG = False

    lines = deploy_warnings()

    assert ids(lines) >= PLAIN_HTTP
    assert all("\n" not in line for line in lines)
    assert any("SESSION_COOKIE_SECURE" in line for line in lines)


def test_nothing_is_said_with_debug_on(settings):
    settings.DEBUG = True

    assert deploy_warnings() == []


class Log:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def warning(self, message: str, *args) -> None:
        self.lines.append(message % args)


@pytest.fixture
def start_gunicorn(process_env, monkeypatch):
    """Run gunicorn.conf.py's `on_starting` as the master does, in `env`."""
    hook = runpy.run_path(str(REPO / "config" / "gunicorn.conf.py"))["on_starting"]

    def start(**env: str) -> list[str]:
        for name, value in {**process_env, **env}.items():
            monkeypatch.setenv(name, value)
        if "DEBUG" not in env:
            monkeypatch.delenv("DEBUG", raising=False)
        log = Log()
        hook(SimpleNamespace(log=log))
        return log.lines

    return start


def test_gunicorn_logs_each_warning_when_it_starts(start_gunicorn):
    lines = start_gunicorn()

    assert re.match(
        r"DEBUG is off and `manage.py check --deploy` warns of \d+ setting", lines[0]
    )
    assert "docs/operations.md" in lines[0]
    warned = [line.removeprefix("deploy check: ") for line in lines[1:]]
    assert ids(warned) >= PLAIN_HTTP


def test_gunicorn_says_nothing_with_the_production_example(start_gunicorn):
    example = production_example()
    example["SECRET_KEY"] = secrets.token_urlsafe(50)
    example["METRICS_TOKEN"] = secrets.token_urlsafe(20)
    example.pop("DATABASE_URL")

    assert start_gunicorn(**example) == []


def test_gunicorn_says_nothing_with_debug_on(start_gunicorn):
    assert start_gunicorn(DEBUG="true") == []


def test_gunicorn_starts_anyway_when_the_checks_cannot_run(start_gunicorn):
    lines = start_gunicorn(SECRET_KEY="", DEBUG="false")

    assert len(lines) == 1
    assert lines[0].startswith("deploy checks did not run: ")
    assert "SECRET_KEY is not set" in lines[0]
