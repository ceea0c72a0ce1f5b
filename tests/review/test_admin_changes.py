"""What changed from the published version, as the reviewer sees it in the admin."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from documents.models import Role
from retrieval.models import Chunk
from review import changes
from tests.factories import DocumentFactory, UserFactory, chunks_of

pytestmark = pytest.mark.django_db

CHANGELIST = "/admin/documents/document/"

PUBLISHED_TEXT = [
    ("Annual leave is 25 days for every full-time employee.", ["Leave"], 1),
    ("Parking is free for all staff.", ["Perks"], 2),
    ("Expenses are reimbursed within 30 days.", ["Expenses"], 3),
]
NEW_TEXT = [
    ("Annual leave is 28 days for every full-time employee.", ["Leave"], 1),
    ("Expenses are reimbursed within 30 days.", ["Expenses"], 3),
    ("Remote work needs <b>a manager's</b> approval.", ["Remote work"], 4),
]


@pytest.fixture
def versions(knowledge_base):
    """v1 published, v2 waiting for review, with the texts above."""
    v1 = DocumentFactory(knowledge_base=knowledge_base, published=True)
    v2 = DocumentFactory(
        knowledge_base=knowledge_base,
        family_id=v1.family_id,
        version=2,
        review_pending=True,
        filename="handbook-v2.md",
    )
    chunks_of(v1, PUBLISHED_TEXT)
    chunks_of(v2, NEW_TEXT)
    return v1, v2


def change_section(body: str) -> str:
    return body.split('class="document-changes"')[1].split("</table>")[0]


def test_document_page_shows_the_passage_diff_against_the_published_version(
    client, reviewer, versions
):
    v1, v2 = versions
    client.force_login(reviewer)

    response = client.get(f"{CHANGELIST}{v2.pk}/change/")

    assert response.status_code == 200
    body = response.content.decode()
    assert "What changed from the published version" in body
    section = change_section(body)
    assert f'/admin/documents/document/{v1.pk}/change/">v1 (published)</a>' in section
    assert "1 passage added, 1 removed, 1 changed of 3" in section
    assert "(the published version has 3)" in section
    # The changed passage, word by word, with its page and heading.
    assert '<tr class="change change-changed">' in section
    assert '<del style="background: #fdd">25</del>' in section
    assert '<ins style="background: #dfd">28</ins>' in section
    assert "<td>Leave</td>" in section
    # The removed one where it was; the added one escaped.
    assert "Parking is free for all staff." in section
    assert "<td>Perks</td>" in section
    assert "<td>2</td>" in section
    assert "&lt;b&gt;a manager&#x27;s&lt;/b&gt;" in section
    assert "<b>a manager" not in body
    assert "<td>4</td>" in section


def test_document_page_without_a_published_version_says_so(
    client, reviewer, knowledge_base
):
    first = DocumentFactory(knowledge_base=knowledge_base, review_pending=True)
    chunks_of(first, ["Annual leave is 25 days."])
    client.force_login(reviewer)

    response = client.get(f"{CHANGELIST}{first.pk}/change/")

    assert b"No published version to compare with" in response.content
    assert b'class="document-changes"' not in response.content


def test_the_published_version_is_not_compared_with_itself(client, reviewer, versions):
    v1, _ = versions
    client.force_login(reviewer)

    response = client.get(f"{CHANGELIST}{v1.pk}/change/")

    assert b"This is the published version." in response.content


def test_a_version_not_ingested_yet_is_not_shown_as_all_removed(
    client, reviewer, versions
):
    v1, _ = versions
    draft = DocumentFactory(
        knowledge_base=v1.knowledge_base, family_id=v1.family_id, version=3
    )
    client.force_login(reviewer)

    body = client.get(f"{CHANGELIST}{draft.pk}/change/").content.decode()

    assert "Nothing to compare with v1 (published) yet" in body
    assert "Parking is free" not in body  # v1's text, were it shown as removed


def test_the_same_text_says_so(client, reviewer, knowledge_base):
    v1 = DocumentFactory(knowledge_base=knowledge_base, published=True)
    v2 = DocumentFactory(
        knowledge_base=knowledge_base,
        family_id=v1.family_id,
        version=2,
        review_pending=True,
    )
    chunks_of(v1, PUBLISHED_TEXT)
    chunks_of(v2, PUBLISHED_TEXT)
    client.force_login(reviewer)

    body = client.get(f"{CHANGELIST}{v2.pk}/change/").content.decode()

    assert "0 passages added, 0 removed, 0 changed of 3" in body
    assert "The text is the same." in body


def test_a_reviewer_of_another_knowledge_base_cannot_open_the_diff(
    client, member, other_knowledge_base, versions
):
    _, v2 = versions
    outsider = member(
        Role.REVIEWER, kb=other_knowledge_base, username="olga", is_staff=True
    )
    client.force_login(outsider)

    response = client.get(f"{CHANGELIST}{v2.pk}/change/", follow=True)

    # The admin answers an object outside the queryset as missing.
    assert response.redirect_chain[-1][0] == "/admin/"
    assert b"doesn\xe2\x80\x99t exist" in response.content
    assert b"Parking is free" not in response.content
    assert b"document-changes" not in response.content


def test_staff_without_membership_is_forbidden(client, versions):
    _, v2 = versions
    client.force_login(UserFactory(is_staff=True))

    assert client.get(f"{CHANGELIST}{v2.pk}/change/").status_code == 403


def test_review_queue_says_how_much_changed(client, reviewer, knowledge_base, versions):
    first = DocumentFactory(
        knowledge_base=knowledge_base, review_pending=True, filename="brand-new.md"
    )
    chunks_of(first, ["Something new."])
    client.force_login(reviewer)

    body = client.get("/admin/").content.decode()

    queue = body.split('id="review-queue"')[1].split("</table>")[0]
    assert "Changes vs published" in queue
    rows = {
        row.split("</th>")[0]: row
        for row in queue.split("<tr>")[2:]  # after the header row
    }
    v2_row = next(row for name, row in rows.items() if "handbook-v2.md" in name)
    new_row = next(row for name, row in rows.items() if "brand-new.md" in name)
    assert "+1 −1 ~1</span>" in v2_row
    assert 'title="1 passage added, 1 removed, 1 changed of 3' in v2_row
    assert '<td class="changes-vs-published">new</td>' in new_row


def test_changelist_column_and_its_query_count(client, reviewer, knowledge_base):
    waiting = []
    for number in range(5):
        v1 = DocumentFactory(knowledge_base=knowledge_base, published=True)
        v2 = DocumentFactory(
            knowledge_base=knowledge_base,
            family_id=v1.family_id,
            version=2,
            review_pending=True,
        )
        chunks_of(v1, PUBLISHED_TEXT)
        chunks_of(v2, PUBLISHED_TEXT[: number % 3 + 1])
        waiting.append(v2)
    client.force_login(reviewer)

    with CaptureQueriesContext(connection) as first_visit:
        body = client.get(f"{CHANGELIST}?status__exact=review_pending").content
    with CaptureQueriesContext(connection) as second_visit:
        client.get(f"{CHANGELIST}?status__exact=review_pending")

    assert b"Changes vs published" in body
    assert b"+0 \xe2\x88\x922 ~0" in body  # one passage of three kept
    assert b"+0 \xe2\x88\x921 ~0" in body
    assert b"no change" in body
    # Two chunk reads per row the first time; remembered afterwards (the cache may
    # itself be a table: its queries are not chunk reads).
    assert _chunk_reads(first_visit) - _chunk_reads(second_visit) == 2 * len(waiting)


def _chunk_reads(queries: CaptureQueriesContext) -> int:
    table = connection.ops.quote_name(Chunk._meta.db_table)
    return sum(f"FROM {table}" in query["sql"] for query in queries)


def test_a_long_version_is_compared_up_to_the_cap(
    client, reviewer, knowledge_base, monkeypatch
):
    monkeypatch.setattr(changes, "MAX_PASSAGES", 2)
    v1 = DocumentFactory(knowledge_base=knowledge_base, published=True)
    v2 = DocumentFactory(
        knowledge_base=knowledge_base,
        family_id=v1.family_id,
        version=2,
        review_pending=True,
    )
    chunks_of(v1, ["One.", "Two.", "Three."])
    chunks_of(v2, ["One.", "Two.", "Four."])
    client.force_login(reviewer)

    body = client.get(f"{CHANGELIST}{v2.pk}/change/").content.decode()

    assert "Only the first 2 passages of each version were compared." in body
    assert "0 passages added, 0 removed, 0 changed of 2" in body
