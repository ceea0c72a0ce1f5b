"""Least privilege and deployment, attacked over HTTP on a real server process."""

from __future__ import annotations

import json
import re
import secrets
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from http.cookiejar import CookieJar
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import PBKDF2PasswordHasher

from documents.models import KnowledgeBase, Membership, Role
from tests.conftest import REPO
from tests.factories import (
    DocumentFactory,
    IngestionTaskFactory,
    UserFactory,
    api_token_for,
)
from tests.live import http

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def token_for(user) -> str:
    return api_token_for(user)


def raw_get(url: str, **headers: str):
    request = urllib.request.Request(url, headers=headers)
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status, dict(response.headers), response.read()


@pytest.fixture
def company(db):
    return KnowledgeBase.objects.create(id="kb-company", name="Company handbook")


def server_password(password: str) -> str:
    """A hash the server can check: tests hash with MD5, servers do not accept it."""
    hasher = PBKDF2PasswordHasher()
    return hasher.encode(password, hasher.salt(), iterations=1000)


def member_of(kb: KnowledgeBase, role: str, **user) -> object:
    person = UserFactory(**user)
    Membership.objects.create(user=person, knowledge_base=kb, role=role)
    return person


def test_viewers_see_published_versions_only(start_server, company):
    server = start_server()
    viewer = token_for(member_of(company, Role.VIEWER))
    editor = token_for(member_of(company, Role.EDITOR))
    published = DocumentFactory(knowledge_base=company, published=True)
    draft = DocumentFactory(knowledge_base=company)
    pending = DocumentFactory(knowledge_base=company, review_pending=True)

    def listed(token):
        status, body = http("GET", server.url("/api/documents"), token)
        assert status == 200
        return {d["document_id"] for d in body["results"]}

    assert listed(viewer) == {str(published.pk)}
    assert listed(editor) == {str(published.pk), str(draft.pk), str(pending.pk)}
    for hidden in (draft, pending):
        for path in ("", "/file", "/chunks", "/changes", "/ingestion-tasks"):
            status, body = http(
                "GET", server.url(f"/api/documents/{hidden.pk}{path}"), viewer
            )
            assert (path, status, body["error_code"]) == (path, 404, "not_found")
        task = IngestionTaskFactory(document=hidden, failed=True)
        status, body = http(
            "GET", server.url(f"/api/ingestion-tasks/{task.pk}"), viewer
        )
        assert (status, body["error_code"]) == (404, "not_found")
        status, _ = http("GET", server.url(f"/api/ingestion-tasks/{task.pk}"), editor)
        assert status == 200
    status, _ = http("GET", server.url(f"/api/documents/{published.pk}"), viewer)
    assert status == 200
    status, _ = http("GET", server.url(f"/api/documents/{draft.pk}"), editor)
    assert status == 200


def test_an_uploaded_page_downloads_as_an_inert_attachment(start_server, company):
    server = start_server()
    viewer = token_for(member_of(company, Role.VIEWER))
    page = DocumentFactory(
        knowledge_base=company,
        published=True,
        filename="page.html",
        content_type="text/html",
        content=b"<script>fetch('/api/documents')</script>",
    )

    status, headers, body = raw_get(
        server.url(f"/api/documents/{page.pk}/file"),
        Authorization=f"Bearer {viewer}",
    )

    assert status == 200
    assert headers["Content-Type"] == "application/octet-stream"
    assert headers["Content-Security-Policy"] == "sandbox"
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Content-Disposition"].startswith("attachment;")
    assert body == b"<script>fetch('/api/documents')</script>"
    _, detail = http("GET", server.url(f"/api/documents/{page.pk}"), viewer)
    assert detail["content_type"] == "text/html"


def test_metrics_need_a_token_unless_public_on_purpose(start_server):
    closed = start_server()
    status, _, body = _status_of(closed.url("/metrics"))
    assert status == 403
    assert b"METRICS_TOKEN" in body

    public = start_server(METRICS_PUBLIC="true")
    assert _status_of(public.url("/metrics"))[0] == 200

    guarded = start_server(METRICS_TOKEN="s3cret-metrics")
    assert _status_of(guarded.url("/metrics"))[0] == 401
    status, _, body = _status_of(
        guarded.url("/metrics"), Authorization="Bearer s3cret-metrics"
    )
    assert status == 200
    assert b"curator_ingestion_tasks" in body


def _status_of(url: str, **headers: str):
    try:
        return raw_get(url, **headers)
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def test_anonymous_readiness_probes_do_not_write_to_storage_each_time(
    start_server, settings
):
    server = start_server()
    probe_directory = Path(settings.MEDIA_ROOT) / "health"

    assert http("GET", server.url("/api/health/ready"))[0] == 200
    written_at = probe_directory.stat().st_mtime_ns
    for _ in range(30):
        status, body = http("GET", server.url("/api/health/ready"))
        assert (status, body["status"]) == (200, "ready")

    assert probe_directory.stat().st_mtime_ns == written_at


def test_the_browsable_api_is_off_without_debug(start_server, company):
    server = start_server()
    token = token_for(member_of(company, Role.VIEWER))
    browser_accept = "text/html,application/xhtml+xml,*/*;q=0.8"

    status, headers, body = raw_get(
        server.url("/api/documents"),
        Accept=browser_accept,
        Authorization=f"Bearer {token}",
    )

    assert status == 200
    assert headers["Content-Type"] == "application/json"
    assert json.loads(body)["count"] == 0


class AdminSession:
    """A browser's cookie session with the admin of a running server."""

    def __init__(self, server) -> None:
        self.server = server
        self.jar = CookieJar()
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(self.jar)
        )

    def get(self, path: str) -> tuple[int, str]:
        try:
            with self.opener.open(self.server.url(path), timeout=10) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    def log_in(self, username: str, password: str) -> None:
        _, page = self.get("/admin/login/")
        csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)[1]
        form = urllib.parse.urlencode(
            {
                "csrfmiddlewaretoken": csrf,
                "username": username,
                "password": password,
                "next": "/admin/",
            }
        ).encode()
        request = urllib.request.Request(
            self.server.url("/admin/login/"),
            data=form,
            headers={"Referer": self.server.url("/admin/login/")},
        )
        with self.opener.open(request, timeout=10) as response:
            assert response.url.endswith("/admin/"), "login failed"


def test_staff_reviewers_neither_manage_memberships_nor_see_other_names(
    start_server, company
):
    secret = KnowledgeBase.objects.create(id="kb-mergers", name="Project Nightjar")
    DocumentFactory(knowledge_base=secret)
    reviewer = member_of(company, Role.REVIEWER, username="rhea", is_staff=True)
    DocumentFactory(knowledge_base=company, review_pending=True)
    server = start_server()
    type(reviewer).objects.filter(pk=reviewer.pk).update(
        password=server_password("reviewer-passphrase")
    )
    admin = AdminSession(server)
    admin.log_in(reviewer.username, "reviewer-passphrase")

    for changelist in ("/admin/documents/document/", "/admin/ingestion/ingestiontask/"):
        status, page = admin.get(changelist)
        assert status == 200
        assert "kb-mergers" not in page
        assert "Project Nightjar" not in page
    assert admin.get("/admin/documents/knowledgebase/")[0] == 403
    assert admin.get(f"/admin/documents/knowledgebase/{company.pk}/change/")[0] == 403
    status, page = admin.get("/admin/")
    assert "/admin/documents/knowledgebase/" not in page


def test_seed_demo_refuses_a_production_configuration(process_env, db):
    result = subprocess.run(
        [sys.executable, str(REPO / "manage.py"), "seed_demo", "--no-documents"],
        cwd=REPO,
        env=process_env,
        capture_output=True,
        text=True,
        check=False,
    )

    assert result.returncode != 0
    assert "--allow-production" in result.stderr
    assert "Traceback" not in result.stderr
    assert not get_user_model().objects.filter(username="carol").exists()


def test_seed_demo_never_resets_an_existing_password(process_env, db):
    own_hash = UserFactory(username="carol", password="carols-own-passphrase").password

    subprocess.run(
        [
            sys.executable,
            str(REPO / "manage.py"),
            "seed_demo",
            "--no-documents",
            "--allow-production",
        ],
        cwd=REPO,
        env={**process_env, "DEMO_PASSWORD": "known-demo-password"},
        capture_output=True,
        text=True,
        check=True,
    )

    users = get_user_model().objects
    assert users.get(username="carol").password == own_hash
    assert users.get(username="bob").has_usable_password()


def production_example() -> dict[str, str]:
    text = (REPO / ".env.example").read_text()
    block = text.split("# --- Production example ---", 1)[1].split("\n\n", 1)[0]
    return dict(re.findall(r"^#   ([A-Z_]+)=(\S+)$", block, re.MULTILINE))


def test_check_deploy_is_clean_with_the_documented_production_example(process_env):
    example = production_example()
    assert {"SECURE_HSTS_SECONDS", "SECURE_SSL_REDIRECT", "METRICS_TOKEN"} <= set(
        example
    )
    example["SECRET_KEY"] = secrets.token_urlsafe(50)
    example["METRICS_TOKEN"] = secrets.token_urlsafe(20)
    example["DATABASE_URL"] = process_env["DATABASE_URL"]

    result = subprocess.run(
        [
            sys.executable,
            str(REPO / "manage.py"),
            "check",
            "--deploy",
            "--fail-level",
            "WARNING",
        ],
        cwd=REPO,
        env={**process_env, **example},
        capture_output=True,
        text=True,
        check=False,
    )

    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


def test_json_logs_take_fields_only_from_curators_own_loggers(start_server):
    server = start_server(LOG_FORMAT="json", LOG_LEVEL="INFO")

    status, _ = http("GET", server.url("/api/task=forged%20worker=evil"))
    assert status == 404
    status, _ = http("GET", server.url("/api/health/live?task=forged&worker=evil"))
    assert status == 200

    server.process.signal(2)
    server.process.stop(timeout=10)
    entries = [
        json.loads(line)
        for line in server.process.stderr.splitlines()
        if line.startswith("{")
    ]
    quoting = [entry for entry in entries if "forged" in entry["message"]]
    assert quoting, server.process.stderr
    for entry in quoting:
        assert "task" not in entry
        assert "worker" not in entry
