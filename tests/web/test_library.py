"""The library page (`/library/`): who may open it, what it lists, uploads."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import translation

from documents.models import Document, DocumentStatus, Role
from ingestion.errors import ERROR_HELP, UNKNOWN
from ingestion.models import TaskStage
from tests.factories import DocumentFactory, IngestionTaskFactory

pytestmark = pytest.mark.django_db


def test_anonymous_callers_are_sent_to_sign_in(client):
    for url in ("/library/", "/library/documents/"):
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith("/login/?next=")


def test_a_viewer_is_told_which_role_the_library_needs(client, viewer):
    client.force_login(viewer)
    response = client.get("/library/")
    assert response.status_code == 403
    page = response.content.decode()
    assert 'data-testid="forbidden"' in page
    assert "editor role" in page
    assert "Traceback" not in page


def test_a_viewer_of_one_base_is_refused_there_even_as_an_editor_elsewhere(
    client, member, knowledge_base, other_knowledge_base
):
    user = member(Role.EDITOR)
    member_there = member(Role.VIEWER, kb=other_knowledge_base)
    user.memberships.create(knowledge_base=other_knowledge_base, role=Role.VIEWER)
    client.force_login(user)
    response = client.get("/library/?kb=kb-other")
    assert response.status_code == 403
    assert "you are viewer" in response.content.decode()
    assert member_there  # another viewer there changes nothing


def test_an_editor_sees_their_knowledge_bases_documents_by_family(
    client, editor, knowledge_base, other_knowledge_base
):
    first = DocumentFactory(knowledge_base=knowledge_base, filename="leave.md")
    DocumentFactory(
        knowledge_base=knowledge_base,
        family_id=first.family_id,
        version=2,
        filename="leave-2024.md",
    )
    DocumentFactory(knowledge_base=other_knowledge_base, filename="secret.md")
    client.force_login(editor)
    response = client.get("/library/")
    assert response.status_code == 200
    page = response.content.decode()
    assert page.count('data-testid="document-row"') == 2
    assert "leave.md" in page
    assert "leave-2024.md" in page
    assert "2 versions" in page
    assert "secret.md" not in page
    assert 'data-testid="upload-input"' in page
    assert '<label for="upload-input">' in page
    assert 'data-module="library"' in page
    assert "<script>" not in page
    assert "unsafe-inline" not in response["Content-Security-Policy"]


def test_another_knowledge_base_is_not_found(client, editor, other_knowledge_base):
    DocumentFactory(knowledge_base=other_knowledge_base, filename="secret.md")
    client.force_login(editor)
    for url in ("/library/?kb=kb-other", "/library/documents/?kb=kb-other"):
        response = client.get(url)
        assert response.status_code == 404
        assert "secret.md" not in response.content.decode()
    assert client.get("/library/?kb=no-such-kb").status_code == 404


def test_the_chooser_lists_only_the_bases_the_caller_edits(
    client, member, knowledge_base, other_knowledge_base
):
    user = member(Role.REVIEWER)
    user.memberships.create(knowledge_base=other_knowledge_base, role=Role.VIEWER)
    client.force_login(user)
    page = client.get("/library/").content.decode()
    assert 'value="kb-company"' in page
    assert 'value="kb-other"' not in page
    assert '<label for="kb">' in page


@pytest.mark.parametrize(
    ("make", "text"),
    [
        (lambda kb: DocumentFactory(knowledge_base=kb), "Draft"),
        (
            lambda kb: DocumentFactory(knowledge_base=kb, review_pending=True),
            "Waiting for review",
        ),
        (lambda kb: DocumentFactory(knowledge_base=kb, published=True), "Published"),
        (
            lambda kb: IngestionTaskFactory(
                document__knowledge_base=kb,
                document__status=DocumentStatus.DRAFT,
                document__review_note="Out of date figures",
                succeeded=True,
            ),
            "Rejected: Out of date figures",
        ),
        (
            lambda kb: IngestionTaskFactory(
                document__knowledge_base=kb,
                running=True,
                stage=TaskStage.PARSE,
                completed=3,
                total=10,
                attempt=2,
            ),
            "Processing: parse 3/10, attempt 2",
        ),
        (
            lambda kb: IngestionTaskFactory(document__knowledge_base=kb),
            "Processing: waiting for a worker",
        ),
        (
            lambda kb: IngestionTaskFactory(document__knowledge_base=kb, failed=True),
            "Failed: The file could not be read as a document",
        ),
    ],
)
def test_each_state_is_said_in_words(client, editor, knowledge_base, make, text):
    make(knowledge_base)
    client.force_login(editor)
    page = client.get("/library/").content.decode()
    assert text in page


def test_a_failed_task_shows_its_code_hint_and_retry_but_not_cancel(
    client, editor, knowledge_base
):
    task = IngestionTaskFactory(
        document__knowledge_base=knowledge_base,
        failed=True,
        error_code="password_protected",
    )
    client.force_login(editor)
    page = client.get("/library/").content.decode()
    assert '<code data-testid="error-code">password_protected</code>' in page
    assert "protected by a password" in page
    assert "Remove the password" in page
    assert f"/library/tasks/{task.pk}/retry/" in page
    assert f"/library/tasks/{task.pk}/cancel/" not in page


def test_only_rows_in_progress_poll(client, editor, knowledge_base):
    running = IngestionTaskFactory(
        document__knowledge_base=knowledge_base, running=True
    )
    idle = DocumentFactory(knowledge_base=knowledge_base, published=True)
    client.force_login(editor)
    page = client.get("/library/").content.decode()
    assert page.count('hx-trigger="every 2s"') == 1
    assert f'hx-get="/library/documents/{running.document_id}/"' in page
    assert f'hx-get="/library/documents/{idle.pk}/"' not in page
    assert f"/library/tasks/{running.pk}/cancel/" in page


def test_the_row_partial_shows_stage_progress_and_attempt(
    client, editor, knowledge_base
):
    task = IngestionTaskFactory(
        document__knowledge_base=knowledge_base,
        running=True,
        stage=TaskStage.EMBEDDING,
        completed=4,
        total=12,
        attempt=1,
    )
    client.force_login(editor)
    response = client.get(f"/library/documents/{task.document_id}/")
    assert response.status_code == 200
    row = response.content.decode()
    assert row.lstrip().startswith("<tr")
    assert "Processing: embedding 4/12, attempt 1" in row
    assert '<progress value="4" max="12"' in row
    assert 'hx-trigger="every 2s"' in row

    task.refresh_from_db()
    IngestionTaskFactory._meta.model.objects.filter(pk=task.pk).update(
        status="succeeded"
    )
    Document.objects.filter(pk=task.document_id).update(
        status=DocumentStatus.REVIEW_PENDING
    )
    row = client.get(f"/library/documents/{task.document_id}/").content.decode()
    assert "Waiting for review" in row
    assert "every 2s" not in row  # finished: the row stops polling


def test_the_row_partial_keeps_the_apis_permissions(
    client, member, knowledge_base, other_knowledge_base
):
    mine = DocumentFactory(knowledge_base=knowledge_base, published=True)
    theirs = DocumentFactory(knowledge_base=other_knowledge_base)
    viewer = member(Role.VIEWER)
    client.force_login(viewer)
    assert client.get(f"/library/documents/{mine.pk}/").status_code == 403
    assert client.get(f"/library/documents/{theirs.pk}/").status_code == 404


def test_the_page_is_translated(client, editor, knowledge_base):
    IngestionTaskFactory(document__knowledge_base=knowledge_base, failed=True)
    client.force_login(editor)
    client.post("/i18n/setlang/", {"language": "zh-hans", "next": "/library/"})
    page = client.get("/library/").content.decode()
    assert "文档库" in page
    assert "失败：无法将该文件作为文档读取" in page  # the hint, from ingestion/locale
    assert "请将更正后的文件作为新版本上传并提交。" in page
    assert "parse_error" in page
    assert "Failed:" not in page


def test_every_error_hint_has_a_chinese_translation():
    with translation.override("zh-hans"):
        for help_ in [*ERROR_HELP.values(), UNKNOWN]:
            for text in help_:
                assert translation.gettext(text) != text, text


def test_an_upload_with_the_session_and_csrf_header_creates_a_draft(
    editor, knowledge_base
):
    client = Client(enforce_csrf_checks=True)
    client.force_login(editor)
    client.get("/library/")
    token = client.cookies["csrftoken"].value
    upload = SimpleUploadedFile("policy.md", b"# Leave\n\n25 days.\n")
    response = client.post(
        "/api/documents?knowledge_base_id=kb-company",
        {"file": upload},
        headers={"X-CSRFToken": token},
    )
    assert response.status_code == 201, response.content
    document = Document.objects.get(pk=response.json()["document_id"])
    assert document.status == DocumentStatus.DRAFT
    assert document.knowledge_base_id == "kb-company"

    refused = client.post(
        "/api/documents?knowledge_base_id=kb-company",
        {"file": SimpleUploadedFile("tool.exe", b"MZ\x90\x00")},
        headers={"X-CSRFToken": token},
    )
    assert refused.status_code == 415
    assert refused.json()["error_code"] == "unsupported_media_type"
