"""Four eyes: a reviewer cannot publish a version they uploaded, in the API and the
admin alike (REVIEW_REQUIRE_SECOND_PERSON)."""

from __future__ import annotations

import json

import pytest
from django.contrib.messages import get_messages

from documents.models import Document, DocumentStatus, Role
from ingestion.worker import Worker
from tests.factories import DocumentFactory, api_token_for
from tests.live import http, multipart

pytestmark = pytest.mark.django_db(transaction=True)

JSON = {"Content-Type": "application/json"}


def token_for(user) -> str:
    # Test users' passwords are hashed with the test settings' MD5, which the
    # server does not accept: their tokens are made here instead.
    return api_token_for(user)


def upload_for_review(server, token: str) -> dict:
    """Upload over HTTP as the token's user, submit, ingest: a version to review."""
    payload, headers = multipart(
        {"knowledge_base_id": "kb-company"},
        "leave.md",
        b"# Leave\n\nEvery employee receives 25 days of paid annual leave.\n",
    )
    status, document = http(
        "POST", server.url("/api/documents"), token, payload, headers
    )
    assert status == 201, document
    url = server.url(f"/api/documents/{document['document_id']}/submit")
    status, task = http("POST", url, token)
    assert status == 202, task
    Worker(worker_id="test", write=lambda line: None).run(task["task_id"])
    status, document = http(
        "GET", server.url(f"/api/documents/{document['document_id']}"), token
    )
    assert document["status"] == "review_pending", document
    return document


def publish(server, token: str, document: dict):
    return http(
        "POST",
        server.url(f"/api/documents/{document['document_id']}/publish"),
        token,
        headers={"If-Match": str(document["lock_version"])},
    )


@pytest.fixture
def reviewers(member):
    return (
        member(Role.REVIEWER, username="rita", is_staff=True),
        member(Role.REVIEWER, username="rex", is_staff=True),
    )


def test_the_uploader_cannot_publish_their_version_another_reviewer_can(
    start_server, reviewers
):
    server = start_server()
    rita, rex = (token_for(user) for user in reviewers)
    document = upload_for_review(server, rita)

    status, body = publish(server, rita, document)

    assert status == 403
    assert body["error_code"] == "separation_of_duties"
    assert Document.objects.get(pk=document["document_id"]).status == "review_pending"
    status, body = publish(server, rex, document)
    assert status == 200, body
    assert body["status"] == "published"


def test_the_uploader_may_reject_their_own_version(start_server, reviewers):
    server = start_server()
    rita = token_for(reviewers[0])
    document = upload_for_review(server, rita)

    status, body = http(
        "POST",
        server.url(f"/api/documents/{document['document_id']}/reject"),
        rita,
        json.dumps({"reason": "Wrong file"}).encode(),
        {**JSON, "If-Match": str(document["lock_version"])},
    )

    assert status == 200, body
    assert body["status"] == "draft"


def test_superusers_are_held_to_it_too(start_server, member):
    root = token_for(
        member(Role.REVIEWER, username="root", is_staff=True, is_superuser=True)
    )
    server = start_server()
    document = upload_for_review(server, root)

    status, body = publish(server, root, document)

    assert status == 403
    assert body["error_code"] == "separation_of_duties"


def test_the_setting_switches_it_off(start_server, reviewers):
    server = start_server(REVIEW_REQUIRE_SECOND_PERSON="false")
    rita = token_for(reviewers[0])
    document = upload_for_review(server, rita)

    status, body = publish(server, rita, document)

    assert status == 200, body
    assert body["status"] == "published"


class TestAdmin:
    """The admin action calls the same service: the same refusal, as a message."""

    CHANGELIST = "/admin/documents/document/"

    def action(self, client, document, *, confirmed: bool):
        data = {"action": "publish_documents", "_selected_action": [str(document.pk)]}
        if confirmed:
            data |= {"confirmed": "yes", f"lock_{document.pk}": "0"}
        return client.post(self.CHANGELIST, data, follow=True)

    def test_the_uploader_is_told_before_and_refused_after_confirming(
        self, client, reviewers, knowledge_base
    ):
        rita, rex = reviewers
        document = DocumentFactory(
            knowledge_base=knowledge_base, created_by=rita, review_pending=True
        )
        client.force_login(rita)

        confirmation = self.action(client, document, confirmed=False)
        response = self.action(client, document, confirmed=True)

        assert b"You uploaded this version" in confirmation.content
        assert response.status_code == 200
        assert [str(m) for m in get_messages(response.wsgi_request)] == [
            f"{document}: not published (separation_of_duties): You uploaded this "
            "version; another reviewer must publish it."
        ]
        assert Document.objects.get(pk=document.pk).status == "review_pending"

        client.force_login(rex)
        confirmation = self.action(client, document, confirmed=False)
        self.action(client, document, confirmed=True)
        assert b"You uploaded this version" not in confirmation.content
        assert Document.objects.get(pk=document.pk).status == DocumentStatus.PUBLISHED
