from __future__ import annotations

import uuid

import pytest
from django.contrib.messages import get_messages

from documents.models import DocumentStatus, Role
from tests.factories import DocumentFactory, IngestionTaskFactory, UserFactory

pytestmark = pytest.mark.django_db

CHANGELIST = "/admin/documents/document/"


def run_action(client, action, documents, *, confirm=True, reason="", locks=None):
    data = {"action": action, "_selected_action": [str(d.pk) for d in documents]}
    if confirm:
        data["confirmed"] = "yes"
        data["reason"] = reason
        for document in documents:
            lock = (locks or {}).get(document.pk, document.lock_version)
            data[f"lock_{document.pk}"] = str(lock)
    return client.post(CHANGELIST, data, follow=True)


def messages_of(response) -> list[str]:
    return [str(m) for m in get_messages(response.wsgi_request)]


@pytest.fixture
def reviewer_client(client, reviewer):
    client.force_login(reviewer)
    return client


def test_reviewer_sees_only_their_knowledge_bases(
    reviewer_client, knowledge_base, other_knowledge_base
):
    mine = DocumentFactory(knowledge_base=knowledge_base, filename="mine.md")
    DocumentFactory(knowledge_base=other_knowledge_base, filename="theirs.md")

    response = reviewer_client.get(CHANGELIST)

    assert response.status_code == 200
    assert b"mine.md" in response.content
    assert b"theirs.md" not in response.content
    assert reviewer_client.get(f"{CHANGELIST}{mine.pk}/change/").status_code == 200


def test_filters_and_search(reviewer_client, knowledge_base):
    DocumentFactory(knowledge_base=knowledge_base, filename="alpha.md")
    DocumentFactory(knowledge_base=knowledge_base, filename="beta.md", published=True)

    by_status = reviewer_client.get(f"{CHANGELIST}?status__exact=published")
    by_search = reviewer_client.get(f"{CHANGELIST}?q=alpha")

    assert b"beta.md" in by_status.content
    assert b"alpha.md" not in by_status.content
    assert b"alpha.md" in by_search.content
    assert b"beta.md" not in by_search.content


def test_publish_asks_for_confirmation_first(reviewer_client, knowledge_base):
    document = DocumentFactory(knowledge_base=knowledge_base, review_pending=True)

    response = run_action(
        reviewer_client, "publish_documents", [document], confirm=False
    )

    assert response.status_code == 200
    assert b"Yes, publish" in response.content
    document.refresh_from_db()
    assert document.status == DocumentStatus.REVIEW_PENDING


def test_publish_action_reports_each_row(reviewer_client, knowledge_base):
    ready = DocumentFactory(
        knowledge_base=knowledge_base, review_pending=True, filename="ready.md"
    )
    draft = DocumentFactory(knowledge_base=knowledge_base, filename="draft.md")

    response = run_action(reviewer_client, "publish_documents", [ready, draft])

    ready.refresh_from_db()
    draft.refresh_from_db()
    assert ready.status == DocumentStatus.PUBLISHED
    assert draft.status == DocumentStatus.DRAFT
    reported = messages_of(response)
    assert any("ready.md v1: published" in m for m in reported)
    assert any("draft.md v1: not published (invalid_transition)" in m for m in reported)


def test_publish_action_checks_the_lock_seen_on_the_page(
    reviewer_client, knowledge_base
):
    document = DocumentFactory(
        knowledge_base=knowledge_base, review_pending=True, lock_version=3
    )

    response = run_action(
        reviewer_client, "publish_documents", [document], locks={document.pk: 2}
    )

    document.refresh_from_db()
    assert document.status == DocumentStatus.REVIEW_PENDING
    assert any("stale_version" in m for m in messages_of(response))


def test_publish_action_archives_previous_version(reviewer_client, knowledge_base):
    old = DocumentFactory(knowledge_base=knowledge_base, published=True)
    new = DocumentFactory(
        knowledge_base=knowledge_base,
        family_id=old.family_id,
        version=2,
        review_pending=True,
    )
    run_action(reviewer_client, "publish_documents", [new])
    old.refresh_from_db()
    assert old.status == DocumentStatus.ARCHIVED


def test_reject_action_needs_a_reason(reviewer_client, knowledge_base):
    document = DocumentFactory(knowledge_base=knowledge_base, review_pending=True)

    response = run_action(reviewer_client, "reject_documents", [document], reason="")
    assert b"A rejection needs a reason" in response.content
    document.refresh_from_db()
    assert document.status == DocumentStatus.REVIEW_PENDING

    run_action(reviewer_client, "reject_documents", [document], reason="Typos")
    document.refresh_from_db()
    assert document.status == DocumentStatus.DRAFT
    assert document.review_note == "Typos"


def test_staff_editor_cannot_publish_in_admin(client, member, knowledge_base):
    editor = member(Role.EDITOR, is_staff=True)
    client.force_login(editor)
    document = DocumentFactory(knowledge_base=knowledge_base, review_pending=True)

    response = run_action(client, "publish_documents", [document])

    document.refresh_from_db()
    assert document.status == DocumentStatus.REVIEW_PENDING
    assert any("permission_denied" in m for m in messages_of(response))


def test_staff_without_membership_cannot_open_documents(client, knowledge_base):
    client.force_login(UserFactory(is_staff=True))
    assert client.get(CHANGELIST).status_code == 403


def test_download_original(reviewer_client, knowledge_base, other_knowledge_base):
    document = DocumentFactory(knowledge_base=knowledge_base, content=b"# Policy\n")
    hidden = DocumentFactory(knowledge_base=other_knowledge_base)

    response = reviewer_client.get(f"{CHANGELIST}{document.pk}/download/")
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == b"# Policy\n"
    assert reviewer_client.get(f"{CHANGELIST}{hidden.pk}/download/").status_code == 404


def test_superuser_manages_knowledge_bases_with_members(client, knowledge_base, viewer):
    client.force_login(UserFactory(is_superuser=True, is_staff=True))
    response = client.get(f"/admin/documents/knowledgebase/{knowledge_base.pk}/change/")
    assert response.status_code == 200
    assert b"vera" in response.content


class TestStaffViewer:
    """`MemberScopedAdmin` applies the API's role rules: a staff user who is only
    a viewer sees published versions and their tasks, as in the API."""

    TASKS = "/admin/ingestion/ingestiontask/"

    @pytest.fixture
    def family(self, knowledge_base):
        published = DocumentFactory(
            knowledge_base=knowledge_base, filename="policy-v1.md", published=True
        )
        draft = DocumentFactory(
            knowledge_base=knowledge_base,
            family_id=published.family_id,
            version=2,
            filename="policy-v2-draft.md",
            content=b"# Unapproved\n",
        )
        pending = DocumentFactory(
            knowledge_base=knowledge_base,
            filename="pending.md",
            review_pending=True,
        )
        return published, draft, pending

    @pytest.fixture
    def viewer_client(self, client, member):
        client.force_login(member(Role.VIEWER, username="vic", is_staff=True))
        return client

    def test_the_changelist_lists_published_versions_only(self, viewer_client, family):
        body = viewer_client.get(CHANGELIST).content
        assert b"policy-v1.md" in body
        assert b"policy-v2-draft.md" not in body
        assert b"pending.md" not in body

    def test_a_draft_is_not_there_like_a_missing_one(self, viewer_client, family):
        published, draft, pending = family
        missing = uuid.uuid4()
        for hidden in (draft, pending):
            for page in ("change", "history"):
                response = viewer_client.get(f"{CHANGELIST}{hidden.pk}/{page}/")
                unknown = viewer_client.get(f"{CHANGELIST}{missing}/{page}/")
                assert (response.status_code, response.url) == (
                    unknown.status_code,
                    unknown.url,
                )
            download = viewer_client.get(f"{CHANGELIST}{hidden.pk}/download/")
            assert download.status_code == 404
        assert (
            viewer_client.get(f"{CHANGELIST}{published.pk}/change/").status_code == 200
        )
        download = viewer_client.get(f"{CHANGELIST}{published.pk}/download/")
        assert download.status_code == 200

    def test_the_published_page_does_not_name_the_draft(
        self, viewer_client, reviewer, client, family
    ):
        published, _, _ = family
        page = viewer_client.get(f"{CHANGELIST}{published.pk}/change/").content
        assert b"policy-v1.md" in page
        assert b"policy-v2-draft.md" not in page

        client.force_login(reviewer)
        page = client.get(f"{CHANGELIST}{published.pk}/change/").content
        assert b"policy-v2-draft.md" in page

    def test_an_action_on_a_draft_shows_nothing_and_changes_nothing(
        self, viewer_client, family
    ):
        _, draft, pending = family
        asked = run_action(
            viewer_client, "publish_documents", [draft, pending], confirm=False
        )
        applied = run_action(viewer_client, "reject_documents", [pending], reason="x")

        assert b"policy-v2-draft.md" not in asked.content
        assert b"pending.md" not in asked.content
        assert not any("pending.md" in m for m in messages_of(applied))
        pending.refresh_from_db()
        assert pending.status == DocumentStatus.REVIEW_PENDING

    def test_tasks_follow_their_version(self, viewer_client, family):
        published, draft, _ = family
        shown = IngestionTaskFactory(document=published, succeeded=True)
        hidden = IngestionTaskFactory(document=draft, failed=True)

        body = viewer_client.get(self.TASKS).content
        progress = viewer_client.get(
            f"{self.TASKS}progress/", {"ids": f"{shown.pk},{hidden.pk}"}
        ).json()
        changed = viewer_client.get(f"{self.TASKS}{hidden.pk}/change/")

        assert b"policy-v1.md" in body
        assert b"policy-v2-draft.md" not in body
        assert [task["id"] for task in progress["tasks"]] == [str(shown.pk)]
        assert changed.status_code == 302
        assert viewer_client.get(f"{self.TASKS}{shown.pk}/change/").status_code == 200
        retried = viewer_client.post(
            self.TASKS,
            {"action": "retry_tasks", "_selected_action": [str(hidden.pk)]},
            follow=True,
        )
        assert not any("policy-v2-draft.md" in m for m in messages_of(retried))
        hidden.refresh_from_db()
        assert hidden.status == "failed"

    def test_a_superuser_still_sees_every_version(self, client, family):
        client.force_login(UserFactory(is_superuser=True, is_staff=True))
        _, draft, _ = family
        assert b"policy-v2-draft.md" in client.get(CHANGELIST).content
        assert client.get(f"{CHANGELIST}{draft.pk}/download/").status_code == 200
