"""The review pages: who may open them, the queue, the document page, and the
publish and reject decisions with their optimistic lock and four eyes."""

from __future__ import annotations

import pytest
from django.urls import reverse

from documents import services
from documents.models import Document, DocumentStatus, Role
from tests.factories import (
    ChunkFactory,
    DocumentFactory,
    IngestionTaskFactory,
    KnowledgeBaseFactory,
    MembershipFactory,
    UserFactory,
    chunks_of,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def pending(knowledge_base, editor):
    return DocumentFactory(
        knowledge_base=knowledge_base,
        review_pending=True,
        created_by=editor,
        filename="leave-policy.md",
        version=2,
        lock_version=2,
    )


def _page(client, user, url):
    client.force_login(user)
    return client.get(url)


def test_anonymous_callers_are_sent_to_sign_in(client, pending):
    for url in (
        reverse("web:review"),
        reverse("web:review-document", args=[pending.pk]),
        reverse("web:review-publish", args=[pending.pk]),
    ):
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("web:login"))


@pytest.mark.parametrize("role", [Role.VIEWER, Role.EDITOR])
def test_members_who_review_nowhere_get_a_403_that_names_the_role(
    client, member, role, pending
):
    user = member(role)
    response = _page(client, user, reverse("web:review"))
    assert response.status_code == 403
    assert "reviewer role" in response.content.decode()
    assert 'data-testid="review-row"' not in response.content.decode()


def test_an_editor_of_the_knowledge_base_cannot_open_or_decide(client, member, pending):
    user = member(Role.EDITOR)
    assert _page(
        client, user, reverse("web:review-document", args=[pending.pk])
    ).status_code == (403)
    response = client.post(
        reverse("web:review-publish", args=[pending.pk]), {"lock_version": "2"}
    )
    assert response.status_code == 403
    pending.refresh_from_db()
    assert pending.status == DocumentStatus.REVIEW_PENDING


def test_a_viewer_does_not_even_see_the_draft(client, viewer, pending):
    url = reverse("web:review-document", args=[pending.pk])
    assert _page(client, viewer, url).status_code == 404


def test_the_queue_lists_the_reviewers_knowledge_bases_only_oldest_first(
    client, reviewer, knowledge_base, other_knowledge_base, editor
):
    older = DocumentFactory(
        knowledge_base=knowledge_base, review_pending=True, filename="older.pdf"
    )
    newer = DocumentFactory(
        knowledge_base=knowledge_base,
        review_pending=True,
        filename="newer.docx",
        version=3,
        created_by=editor,
    )
    Document.objects.filter(pk=newer.pk).update(updated_at=older.updated_at)
    Document.objects.filter(pk=older.pk).update(
        updated_at=older.updated_at.replace(year=2020)
    )
    elsewhere = DocumentFactory(
        knowledge_base=other_knowledge_base,
        review_pending=True,
        filename="elsewhere.md",
    )
    DocumentFactory(knowledge_base=knowledge_base, filename="a-draft.md")

    response = _page(client, reviewer, reverse("web:review"))
    page = response.content.decode()
    assert response.status_code == 200
    assert page.count('data-testid="review-row"') == 2
    assert page.index("older.pdf") < page.index("newer.docx")
    assert "elsewhere.md" not in page
    assert "a-draft.md" not in page
    assert "eddie" in page
    assert "v3" in page
    assert knowledge_base.name in page
    assert "script-src 'self'" in response["Content-Security-Policy"]

    # The other knowledge base's document page is not there for this reviewer.
    url = reverse("web:review-document", args=[elsewhere.pk])
    assert client.get(url).status_code == 404


def test_a_superuser_who_reviews_one_knowledge_base_sees_only_its_queue(
    client, knowledge_base, other_knowledge_base
):
    boss = UserFactory(is_superuser=True, is_staff=True)
    MembershipFactory(user=boss, knowledge_base=knowledge_base, role=Role.REVIEWER)
    DocumentFactory(
        knowledge_base=other_knowledge_base, review_pending=True, filename="x.md"
    )
    page = _page(client, boss, reverse("web:review")).content.decode()
    assert "x.md" not in page


def test_the_document_page_shows_chunks_ocr_flags_changes_and_the_lock(
    client, reviewer, knowledge_base, pending, settings
):
    settings.OCR_MIN_CONFIDENCE = 0.8
    ChunkFactory(
        document=pending,
        ordinal=0,
        text="Annual leave is 30 days.",
        heading_path=["Policy", "Leave"],
        page=1,
        ocr_confidence=0.55,
    )
    ChunkFactory(document=pending, ordinal=1, text="Sick leave.", page=2)
    published = DocumentFactory(
        knowledge_base=knowledge_base,
        family_id=pending.family_id,
        version=1,
        published=True,
    )
    chunks_of(published, [("Annual leave is 25 days.", ["Policy", "Leave"], 1)])

    response = _page(
        client, reviewer, reverse("web:review-document", args=[pending.pk])
    )
    page = response.content.decode()
    assert response.status_code == 200
    assert "Annual leave is 30 days." in page
    assert "Policy › Leave" in page
    assert 'data-testid="ocr-flag"' in page
    assert "55 %" in page
    assert "check against the original" in page
    assert 'data-testid="changes-summary"' in page
    assert "<del>25</del>" in page or "<ins>" in page  # the passage diff
    assert 'name="lock_version" value="2"' in page
    assert 'data-testid="publish-button">' in page  # not disabled
    assert 'data-testid="reject-button"' in page
    assert "Page 2" in page
    # A Markdown original is shown as the parser's text, not as an image.
    assert 'data-testid="page-image"' not in page
    assert 'style="' not in page
    assert "<script>" not in page


def test_a_pdf_is_shown_as_page_images(client, reviewer, knowledge_base):
    document = DocumentFactory(
        knowledge_base=knowledge_base,
        review_pending=True,
        filename="report.pdf",
        content_type="application/pdf",
    )
    ChunkFactory(document=document, ordinal=0, text="One.", page=1)
    ChunkFactory(document=document, ordinal=1, text="Two.", page=2)
    page = _page(
        client, reviewer, reverse("web:review-document", args=[document.pk])
    ).content.decode()
    assert page.count('data-testid="page-image"') == 2
    assert reverse("web:document-page", args=[document.pk, 2]) in page


def test_publishing_archives_the_previous_version_and_returns_to_the_queue(
    client, reviewer, knowledge_base, pending
):
    previous = DocumentFactory(
        knowledge_base=knowledge_base,
        family_id=pending.family_id,
        version=1,
        published=True,
    )
    client.force_login(reviewer)
    response = client.post(
        reverse("web:review-publish", args=[pending.pk]),
        {"lock_version": "2"},
        follow=True,
    )
    assert response.redirect_chain[-1][0] == reverse("web:review")
    assert "is published" in response.content.decode()
    pending.refresh_from_db()
    previous.refresh_from_db()
    assert pending.status == DocumentStatus.PUBLISHED
    assert pending.reviewed_by == reviewer
    assert previous.status == DocumentStatus.ARCHIVED


def test_a_stale_page_says_who_changed_the_document_and_when(
    client, member, reviewer, pending
):
    other = member(Role.REVIEWER, username="carol")
    services.document_reject(
        user=other, document_id=pending.pk, expected_lock_version=2, reason="Typo"
    )
    client.force_login(reviewer)
    response = client.post(
        reverse("web:review-publish", args=[pending.pk]),
        {"lock_version": "2"},
        follow=True,
    )
    page = response.content.decode()
    assert response.status_code == 200
    assert response.redirect_chain[-1][0] == reverse(
        "web:review-document", args=[pending.pk]
    )
    assert "carol changed this document at" in page
    assert "Draft" in page
    pending.refresh_from_db()
    assert pending.status == DocumentStatus.DRAFT


def test_a_stale_page_names_who_submitted_it_again(client, reviewer, pending):
    submitter = UserFactory(username="sam")
    IngestionTaskFactory(document=pending, submitted_by=submitter, succeeded=True)
    client.force_login(reviewer)
    response = client.post(
        reverse("web:review-publish", args=[pending.pk]),
        {"lock_version": "1"},  # an older page
        follow=True,
    )
    assert "sam changed this document at" in response.content.decode()


def test_the_uploader_cannot_publish_their_own_version(client, member, knowledge_base):
    uploader = member(Role.REVIEWER, username="uma")
    document = DocumentFactory(
        knowledge_base=knowledge_base, review_pending=True, created_by=uploader
    )
    url = reverse("web:review-document", args=[document.pk])
    page = _page(client, uploader, url).content.decode()
    assert 'data-testid="four-eyes"' in page
    assert 'data-testid="publish-button" disabled' in page

    response = client.post(
        reverse("web:review-publish", args=[document.pk]),
        {"lock_version": str(document.lock_version)},
        follow=True,
    )
    assert "another reviewer must publish it" in response.content.decode()
    document.refresh_from_db()
    assert document.status == DocumentStatus.REVIEW_PENDING


def test_rejecting_needs_a_reason(client, reviewer, pending):
    client.force_login(reviewer)
    url = reverse("web:review-reject", args=[pending.pk])
    response = client.post(url, {"lock_version": "2", "reason": "  "}, follow=True)
    assert "A rejection needs a reason" in response.content.decode()
    pending.refresh_from_db()
    assert pending.status == DocumentStatus.REVIEW_PENDING

    response = client.post(
        url, {"lock_version": "2", "reason": "Page 3 is cut off."}, follow=True
    )
    assert response.redirect_chain[-1][0] == reverse("web:review")
    pending.refresh_from_db()
    assert pending.status == DocumentStatus.DRAFT
    assert pending.review_note == "Page 3 is cut off."
    assert pending.reviewed_by == reviewer


def test_a_form_without_its_lock_is_refused_plainly(client, reviewer, pending):
    client.force_login(reviewer)
    response = client.post(
        reverse("web:review-publish", args=[pending.pk]), {}, follow=True
    )
    assert "The form was incomplete" in response.content.decode()
    pending.refresh_from_db()
    assert pending.status == DocumentStatus.REVIEW_PENDING


def test_the_page_says_when_there_is_nothing_to_decide(
    client, reviewer, knowledge_base
):
    document = DocumentFactory(knowledge_base=knowledge_base, published=True)
    page = _page(
        client, reviewer, reverse("web:review-document", args=[document.pk])
    ).content.decode()
    assert "nothing to decide" in page
    assert 'data-testid="publish-button"' not in page


def test_the_page_in_chinese(client, reviewer, pending):
    client.force_login(reviewer)
    client.cookies["django_language"] = "zh-hans"
    page = client.get(reverse("web:review")).content.decode()
    assert "等待审核" in page


def test_kb_names_come_from_the_member_kb_only(client, reviewer):
    KnowledgeBaseFactory(id="kb-hidden", name="Hidden")
    page = _page(client, reviewer, reverse("web:review")).content.decode()
    assert "Hidden" not in page
