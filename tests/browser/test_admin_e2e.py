"""The reviewer's admin in a real browser, with a real worker process beside it.

Headless Chromium from Debian (`/usr/bin/chromium`) driven by Playwright; run with
`make test-browser`. Screenshots of every step go to `var/screenshots/`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from documents.models import Document, DocumentStatus, Role
from ingestion import services
from ingestion.models import IngestionTask, TaskStatus
from tests.conftest import REPO
from tests.factories import DocumentFactory, IngestionTaskFactory, api_token_for
from tests.live import http

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOTS = REPO / "var" / "screenshots"
PASSWORD = "secret-pass-1"  # tests.factories.UserFactory

playwright_api = pytest.importorskip("playwright.sync_api")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium"),
]


@pytest.fixture
def browser_page(monkeypatch):
    # Playwright's sync API keeps an event loop in this thread; the ORM calls the
    # test makes between browser steps are still plain synchronous code.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    # The pages' test keeps its screenshots here too (pages-*.png).
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for old in SCREENSHOTS.glob("admin-*.png"):
        old.unlink()
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
        )
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(20_000)
        yield page
        browser.close()


class Steps:
    def __init__(self, page, base_url: str) -> None:
        self.page = page
        self.base_url = base_url
        self.number = 0

    def shot(self, name: str) -> None:
        self.number += 1
        path = SCREENSHOTS / f"admin-{self.number:02d}-{name}.png"
        self.page.screenshot(path=str(path), full_page=True)

    def go(self, path: str) -> None:
        self.page.goto(self.base_url + path)

    def login(self, username: str) -> None:
        self.page.context.clear_cookies()
        self.go("/admin/login/?next=/admin/")
        self.page.fill("#id_username", username)
        self.page.fill("#id_password", PASSWORD)
        self.page.click("input[type=submit]")
        self.page.wait_for_selector("#content-main")

    def run_action(self, changelist: str, action: str, pk) -> None:
        self.go(changelist)
        self.page.check(f'input.action-select[value="{pk}"]')
        self.page.select_option("select[name=action]", action)
        self.page.click("button[name=index]")

    def messages(self) -> str:
        return self.page.inner_text("ul.messagelist")


def test_reviewer_journey(
    browser_page, live_server, manage, knowledge_base, member, editor
):
    reviewer = member(Role.REVIEWER, username="rita", is_staff=True)
    member(Role.VIEWER, username="vic", is_staff=True)
    fresh = DocumentFactory(
        knowledge_base=knowledge_base,
        filename="leave-policy.md",
        content=b"# Leave\n\nEmployees get 27 days of annual leave each year.\n",
    )
    queued = IngestionTaskFactory(
        document__knowledge_base=knowledge_base, document__filename="queued.md"
    )
    failed = IngestionTaskFactory(
        document__knowledge_base=knowledge_base,
        document__filename="failed.md",
        document__status=DocumentStatus.FAILED,
        status=TaskStatus.FAILED,
        error_code="parse_timeout",
        attempt=1,
    )
    steps = Steps(browser_page, live_server.url)
    page = browser_page

    steps.login("rita")
    steps.shot("admin-home")
    assert "review queue" in page.inner_text("#review-queue").lower()

    # Cancel a queued task (no worker runs yet, so it stays queued until then).
    steps.run_action("/admin/ingestion/ingestiontask/", "cancel_tasks", queued.pk)
    assert "cancelled." in steps.messages()
    steps.shot("task-cancelled")
    assert IngestionTask.objects.get(pk=queued.pk).status == TaskStatus.CANCELLED

    # A failed task reads as a sentence with a next step; retry it.
    steps.go(f"/admin/ingestion/ingestiontask/{failed.pk}/change/")
    assert "longer than the time limit" in page.inner_text("#content-main")
    steps.shot("failed-task-explained")
    steps.run_action("/admin/ingestion/ingestiontask/", "retry_tasks", failed.pk)
    assert "queued again." in steps.messages()
    steps.shot("task-retried")

    # Submit, watch the bar move to succeeded while a real worker runs.
    task = services.document_submit(user=editor, document_id=fresh.pk)
    steps.go("/admin/ingestion/ingestiontask/")
    bar = f'.task-progress[data-task-id="{task.pk}"]'
    assert page.get_attribute(bar, "data-active") == "true"
    page.evaluate("window.notReloaded = true")
    steps.shot("task-queued")
    worker = manage("run_ingestion_worker", "--loop", "--worker-id", "browser")
    try:
        page.wait_for_selector(f'{bar}[data-active="false"]', timeout=40_000)
        assert page.inner_text(f"{bar} .task-status") == "succeeded"
        assert page.evaluate("window.notReloaded") is True
        steps.shot("task-succeeded")
        assert IngestionTask.objects.get(pk=failed.pk).status in {
            TaskStatus.QUEUED,
            TaskStatus.RUNNING,
            TaskStatus.SUCCEEDED,
        }
    finally:
        worker.terminate()
        worker.communicate(timeout=30)

    # Its chunks on the document page, then publish it.
    steps.go("/admin/")
    assert "leave-policy.md" in page.inner_text("#review-queue")
    steps.go(f"/admin/documents/document/{fresh.pk}/change/")
    assert "27 days of annual leave" in page.inner_text(".document-chunks")
    steps.shot("document-chunks")
    fresh.refresh_from_db()
    steps.run_action("/admin/documents/document/", "publish_documents", fresh.pk)
    steps.shot("publish-confirmation")
    page.click("input[value='Yes, publish']")
    assert "published." in steps.messages()
    steps.shot("published")
    assert Document.objects.get(pk=fresh.pk).status == DocumentStatus.PUBLISHED

    # Answered by the chat API.
    status, body = http(
        "POST",
        f"{live_server.url}/api/chat",
        api_token_for(reviewer),
        json.dumps({"question": "How many days of annual leave?"}).encode(),
        {"Content-Type": "application/json"},
    )
    assert status == 200, body
    assert not body["refused"]
    assert str(fresh.pk) in {source["document_id"] for source in body["sources"]}

    # A viewer with admin access sees published versions only, as in the API,
    # and cannot publish.
    waiting = DocumentFactory(
        knowledge_base=knowledge_base,
        filename="waiting.md",
        status=DocumentStatus.REVIEW_PENDING,
    )
    steps.login("vic")
    steps.go("/admin/documents/document/")
    assert "waiting.md" not in page.content()
    steps.run_action("/admin/documents/document/", "publish_documents", fresh.pk)
    page.click("input[value='Yes, publish']")
    assert "not published (permission_denied)" in steps.messages()
    steps.shot("viewer-refused")
    assert Document.objects.get(pk=waiting.pk).status == DocumentStatus.REVIEW_PENDING
    assert list(SCREENSHOTS.glob("admin-*.png"))
