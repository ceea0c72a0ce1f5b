"""The library's Submit, Retry and Cancel: the ingestion services behind a form,
allowed and refused as the task state machine says, never a 500."""

from __future__ import annotations

import pytest
from django.test import Client

from documents.models import Document, DocumentStatus, Role
from ingestion.models import IngestionTask, TaskStatus
from tests.factories import DocumentFactory, IngestionTaskFactory

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}


def test_submit_queues_a_task_and_returns_the_row(client, editor, knowledge_base):
    document = DocumentFactory(knowledge_base=knowledge_base)
    client.force_login(editor)
    response = client.post(f"/library/documents/{document.pk}/submit/", headers=HTMX)
    assert response.status_code == 200
    row = response.content.decode()
    assert "Submitted for processing." in row
    assert "Processing: waiting for a worker" in row
    assert 'hx-trigger="every 2s"' in row
    task = IngestionTask.objects.get(document=document)
    assert task.status == TaskStatus.QUEUED
    assert task.submitted_by == editor


def test_submit_without_htmx_redirects_to_the_library_with_a_message(
    client, editor, knowledge_base
):
    document = DocumentFactory(knowledge_base=knowledge_base)
    client.force_login(editor)
    response = client.post(f"/library/documents/{document.pk}/submit/", follow=True)
    assert response.redirect_chain == [("/library/?kb=kb-company", 302)]
    assert "Submitted for processing." in response.content.decode()


def test_submitting_twice_is_a_message_not_an_error(client, editor, knowledge_base):
    document = DocumentFactory(knowledge_base=knowledge_base, processing=True)
    client.force_login(editor)
    response = client.post(f"/library/documents/{document.pk}/submit/", headers=HTMX)
    assert response.status_code == 200
    row = response.content.decode()
    assert 'data-testid="action-refusal"' in row
    assert "invalid_transition" in row
    assert not IngestionTask.objects.filter(document=document).exists()

    page = client.post(
        f"/library/documents/{document.pk}/submit/", follow=True
    ).content.decode()
    assert "Not possible now (invalid_transition)" in page


def test_cancel_sends_the_document_back_to_draft(client, editor, knowledge_base):
    task = IngestionTaskFactory(document__knowledge_base=knowledge_base, running=True)
    client.force_login(editor)
    response = client.post(f"/library/tasks/{task.pk}/cancel/", headers=HTMX)
    assert response.status_code == 200
    row = response.content.decode()
    assert "Draft (processing cancelled)" in row
    assert f"/library/documents/{task.document_id}/submit/" in row
    task.refresh_from_db()
    assert task.status == TaskStatus.CANCELLED
    assert Document.objects.get(pk=task.document_id).status == DocumentStatus.DRAFT


def test_retry_puts_a_failed_task_back_in_the_queue(client, editor, knowledge_base):
    task = IngestionTaskFactory(document__knowledge_base=knowledge_base, failed=True)
    client.force_login(editor)
    response = client.post(f"/library/tasks/{task.pk}/retry/", headers=HTMX)
    assert response.status_code == 200
    assert "Queued again." in response.content.decode()
    task.refresh_from_db()
    assert task.status == TaskStatus.QUEUED
    assert task.error_code is None


@pytest.mark.parametrize(
    ("trait", "action"),
    [
        ("succeeded", "retry"),
        ("succeeded", "cancel"),
        ("failed", "cancel"),
        ("running", "retry"),
    ],
)
def test_what_the_state_machine_refuses_is_a_message(
    client, editor, knowledge_base, trait, action
):
    task = IngestionTaskFactory(
        document__knowledge_base=knowledge_base, **{trait: True}
    )
    status = task.status
    client.force_login(editor)
    response = client.post(f"/library/tasks/{task.pk}/{action}/", headers=HTMX)
    assert response.status_code == 200
    assert "invalid_transition" in response.content.decode()
    page = client.post(f"/library/tasks/{task.pk}/{action}/", follow=True)
    assert page.status_code == 200
    assert "Not possible now" in page.content.decode()
    task.refresh_from_db()
    assert task.status == status


def test_actions_keep_the_apis_permissions(
    client, member, knowledge_base, other_knowledge_base
):
    draft = DocumentFactory(knowledge_base=knowledge_base)
    task = IngestionTaskFactory(document__knowledge_base=knowledge_base, failed=True)
    elsewhere = DocumentFactory(knowledge_base=other_knowledge_base)
    viewer = member(Role.VIEWER)
    client.force_login(viewer)
    assert client.post(f"/library/documents/{draft.pk}/submit/").status_code == 403
    assert client.post(f"/library/tasks/{task.pk}/retry/").status_code == 403
    assert client.post(f"/library/tasks/{task.pk}/cancel/").status_code == 403
    assert client.post(f"/library/documents/{elsewhere.pk}/submit/").status_code == 404
    assert not IngestionTask.objects.filter(document=draft).exists()

    editor = member(Role.EDITOR)
    client.force_login(editor)
    assert client.post(f"/library/documents/{elsewhere.pk}/submit/").status_code == 404
    other_task = IngestionTaskFactory(
        document__knowledge_base=other_knowledge_base, failed=True
    )
    assert client.post(f"/library/tasks/{other_task.pk}/retry/").status_code == 404


def test_actions_need_a_post_and_a_signed_in_caller(client, editor, knowledge_base):
    document = DocumentFactory(knowledge_base=knowledge_base)
    response = client.post(f"/library/documents/{document.pk}/submit/")
    assert response.status_code == 302
    assert response["Location"].startswith("/login/")
    client.force_login(editor)
    assert client.get(f"/library/documents/{document.pk}/submit/").status_code == 405


def test_the_forms_carry_the_csrf_token(editor, knowledge_base):
    document = DocumentFactory(knowledge_base=knowledge_base)
    client = Client(enforce_csrf_checks=True)
    client.force_login(editor)
    page = client.get("/library/").content.decode()
    assert 'name="csrfmiddlewaretoken"' in page
    url = f"/library/documents/{document.pk}/submit/"
    assert client.post(url).status_code == 403  # no token
    token = client.cookies["csrftoken"].value
    assert client.post(url, headers={"X-CSRFToken": token, **HTMX}).status_code == 200
    assert IngestionTask.objects.filter(document=document).exists()
