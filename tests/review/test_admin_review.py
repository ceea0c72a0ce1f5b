"""The reviewer's admin: review queue, chunks and versions, who may publish."""

from __future__ import annotations

import pytest
from django.contrib.messages import get_messages

from documents.models import DocumentStatus, Role
from retrieval.models import Chunk
from tests.factories import ChunkFactory, DocumentFactory, IngestionTaskFactory

pytestmark = pytest.mark.django_db

CHANGELIST = "/admin/documents/document/"


def add_chunk(document, ordinal, text, *, heading=(), page=None) -> Chunk:
    return ChunkFactory(
        document=document,
        ordinal=ordinal,
        text=text,
        heading_path=list(heading),
        page=page,
    )


def publish(client, document):
    return client.post(
        CHANGELIST,
        {
            "action": "publish_documents",
            "_selected_action": [str(document.pk)],
            "confirmed": "yes",
            f"lock_{document.pk}": str(document.lock_version),
        },
        follow=True,
    )


def test_admin_home_lists_the_review_queue_oldest_first_and_scoped(
    client, reviewer, knowledge_base, other_knowledge_base
):
    older = DocumentFactory(
        knowledge_base=knowledge_base, review_pending=True, filename="older.md"
    )
    newer = DocumentFactory(
        knowledge_base=knowledge_base, review_pending=True, filename="newer.md"
    )
    DocumentFactory(knowledge_base=knowledge_base, filename="draft.md")
    DocumentFactory(
        knowledge_base=other_knowledge_base, review_pending=True, filename="theirs.md"
    )
    IngestionTaskFactory(document=newer, succeeded=True)
    add_chunk(newer, 0, "one")
    add_chunk(newer, 1, "two")
    client.force_login(reviewer)

    response = client.get("/admin/")

    assert response.status_code == 200
    queue = response.content.decode().split('id="review-queue"')[1]
    queue = queue.split("</table>")[0]
    assert "older.md" in queue
    assert queue.index("older.md") < queue.index("newer.md")
    assert "draft.md" not in queue
    assert "theirs.md" not in queue
    assert "<td>2</td>" in queue  # newer.md's chunks
    assert "succeeded" in queue
    assert str(older.pk) in queue


def test_review_queue_leaves_out_knowledge_bases_where_staff_only_edit(
    client, member, knowledge_base
):
    editor = member(Role.EDITOR, username="ed", is_staff=True)
    DocumentFactory(
        knowledge_base=knowledge_base, review_pending=True, filename="waiting.md"
    )
    client.force_login(editor)

    response = client.get("/admin/")

    assert b"Nothing waits for your review." in response.content
    assert b"waiting.md" not in response.content.split(b"review-queue")[1][:2000]


def test_document_page_shows_chunks_and_versions(client, reviewer, knowledge_base):
    v1 = DocumentFactory(knowledge_base=knowledge_base, published=True)
    v2 = DocumentFactory(
        knowledge_base=knowledge_base,
        family_id=v1.family_id,
        version=2,
        review_pending=True,
    )
    add_chunk(v2, 0, "Annual leave is 20 days.", heading=["Leave", "Annual"], page=3)
    client.force_login(reviewer)

    response = client.get(f"{CHANGELIST}{v2.pk}/change/")

    body = response.content.decode()
    assert response.status_code == 200
    assert "Annual leave is 20 days." in body
    assert "Leave › Annual" in body
    assert "<td>3</td>" in body
    assert "Versions of this document" in body
    assert f'/admin/documents/document/{v1.pk}/change/">v1</a>' in body
    assert "v2 (this one)" in body
    assert "Published" in body


def test_document_page_explains_a_failure(client, reviewer, knowledge_base):
    task = IngestionTaskFactory(
        document__knowledge_base=knowledge_base,
        document__status="failed",
        status="failed",
        error_code="too_many_pages",
    )
    client.force_login(reviewer)

    response = client.get(f"{CHANGELIST}{task.document_id}/change/")

    assert b"The PDF has more pages than the page limit." in response.content
    assert b"Split the PDF into smaller documents" in response.content


def test_staff_editor_sees_documents_but_cannot_publish(client, member, knowledge_base):
    editor = member(Role.EDITOR, username="ed", is_staff=True)
    document = DocumentFactory(knowledge_base=knowledge_base, review_pending=True)
    client.force_login(editor)

    assert client.get(CHANGELIST).status_code == 200
    response = publish(client, document)

    document.refresh_from_db()
    assert document.status == DocumentStatus.REVIEW_PENDING
    messages = [str(m) for m in get_messages(response.wsgi_request)]
    assert any("not published (permission_denied)" in m for m in messages)


def test_staff_viewer_cannot_publish(client, member, knowledge_base):
    viewer = member(Role.VIEWER, username="vic", is_staff=True)
    document = DocumentFactory(knowledge_base=knowledge_base, review_pending=True)
    client.force_login(viewer)

    publish(client, document)

    document.refresh_from_db()
    assert document.status == DocumentStatus.REVIEW_PENDING
