from __future__ import annotations

import uuid

import pytest

from documents.models import Document, DocumentStatus, KnowledgeBase, Role
from tests.factories import DocumentFactory

pytestmark = pytest.mark.django_db


def publish(client, document, lock=None):
    headers = (
        {}
        if lock is False
        else {"HTTP_IF_MATCH": str(document.lock_version if lock is None else lock)}
    )
    return client.post(f"/api/documents/{document.pk}/publish", **headers)


def reject(client, document, reason="Wrong numbers in section 2", lock=None):
    return client.post(
        f"/api/documents/{document.pk}/reject",
        {"reason": reason},
        format="json",
        HTTP_IF_MATCH=str(document.lock_version if lock is None else lock),
    )


class TestListAndDetail:
    def test_lists_visible_documents_with_all_fields(
        self, editor, client_for, knowledge_base, other_knowledge_base
    ):
        mine = DocumentFactory(knowledge_base=knowledge_base)
        DocumentFactory(knowledge_base=other_knowledge_base)

        response = client_for(editor).get("/api/documents")

        assert response.status_code == 200
        body = response.json()
        assert body["count"] == 1
        assert [d["document_id"] for d in body["results"]] == [str(mine.pk)]
        assert set(body["results"][0]) == {
            "document_id",
            "knowledge_base_id",
            "family_id",
            "version",
            "filename",
            "content_type",
            "size_bytes",
            "sha256",
            "status",
            "lock_version",
            "created_by",
            "created_at",
            "updated_at",
            "published_at",
            "review_note",
        }

    def test_filters_by_knowledge_base_and_status(
        self, member, client_for, knowledge_base, other_knowledge_base
    ):
        user = member(Role.EDITOR)
        member(Role.EDITOR, kb=other_knowledge_base, username=user.username)
        draft = DocumentFactory(knowledge_base=knowledge_base)
        published = DocumentFactory(knowledge_base=knowledge_base, published=True)
        other = DocumentFactory(knowledge_base=other_knowledge_base)
        client = client_for(user)

        def ids(query):
            return {
                d["document_id"]
                for d in client.get(f"/api/documents?{query}").json()["results"]
            }

        assert ids("") == {str(draft.pk), str(published.pk), str(other.pk)}
        assert ids("knowledge_base_id=kb-other") == {str(other.pk)}
        assert ids("status=published") == {str(published.pk)}
        assert ids("knowledge_base_id=kb-company&status=draft") == {str(draft.pk)}

    def test_unknown_status_filter_is_a_validation_error(self, viewer, client_for):
        response = client_for(viewer).get("/api/documents?status=sideways")
        assert response.status_code == 422
        assert response.json()["error_code"] == "validation_error"

    def test_paginates(self, editor, client_for, knowledge_base):
        DocumentFactory.create_batch(5, knowledge_base=knowledge_base)
        client = client_for(editor)

        page_one = client.get("/api/documents?page_size=2").json()
        page_three = client.get("/api/documents?page_size=2&page=3").json()

        assert page_one["count"] == 5
        assert len(page_one["results"]) == 2
        assert page_one["next"] is not None
        assert len(page_three["results"]) == 1
        assert page_three["next"] is None

    def test_detail_and_etag(self, editor, client_for, knowledge_base):
        document = DocumentFactory(knowledge_base=knowledge_base, lock_version=7)
        response = client_for(editor).get(f"/api/documents/{document.pk}")
        assert response.status_code == 200
        assert response.json()["lock_version"] == 7
        assert response["ETag"] == '"7"'

    def test_invisible_or_unknown_document_is_not_found(
        self, viewer, client_for, other_knowledge_base
    ):
        hidden = DocumentFactory(knowledge_base=other_knowledge_base)
        client = client_for(viewer)
        for document_id in (hidden.pk, uuid.uuid4()):
            response = client.get(f"/api/documents/{document_id}")
            assert response.status_code == 404
            assert response.json()["error_code"] == "not_found"

    def test_download_original(self, editor, client_for, knowledge_base):
        document = DocumentFactory(knowledge_base=knowledge_base, content=b"# Hi\n")
        response = client_for(editor).get(f"/api/documents/{document.pk}/file")
        assert response.status_code == 200
        assert b"".join(response.streaming_content) == b"# Hi\n"
        assert document.filename in response["Content-Disposition"]


class TestPublish:
    def test_reviewer_publishes(self, reviewer, client_for, knowledge_base):
        document = DocumentFactory(
            knowledge_base=knowledge_base, review_pending=True, lock_version=2
        )
        before = KnowledgeBase.objects.get(pk="kb-company").index_version

        response = publish(client_for(reviewer), document)

        assert response.status_code == 200
        body = response.json()
        assert body["status"] == "published"
        assert body["lock_version"] == 3
        assert body["published_at"] is not None
        assert KnowledgeBase.objects.get(pk="kb-company").index_version == before + 1

    def test_publishing_archives_previous_version(
        self, reviewer, client_for, knowledge_base
    ):
        old = DocumentFactory(knowledge_base=knowledge_base, published=True)
        new = DocumentFactory(
            knowledge_base=knowledge_base,
            family_id=old.family_id,
            version=2,
            review_pending=True,
        )
        unrelated = DocumentFactory(knowledge_base=knowledge_base, published=True)

        assert publish(client_for(reviewer), new).status_code == 200

        old.refresh_from_db()
        unrelated.refresh_from_db()
        assert old.status == DocumentStatus.ARCHIVED
        assert old.lock_version == 1
        assert unrelated.status == DocumentStatus.PUBLISHED
        assert Document.objects.get(pk=new.pk).status == DocumentStatus.PUBLISHED

    def test_stale_publish_leaves_everything_alone(
        self, reviewer, client_for, knowledge_base
    ):
        old = DocumentFactory(knowledge_base=knowledge_base, published=True)
        new = DocumentFactory(
            knowledge_base=knowledge_base,
            family_id=old.family_id,
            version=2,
            review_pending=True,
            lock_version=4,
        )

        response = publish(client_for(reviewer), new, lock=3)

        assert response.status_code == 409
        assert response.json()["error_code"] == "stale_version"
        old.refresh_from_db()
        new.refresh_from_db()
        assert old.status == DocumentStatus.PUBLISHED
        assert (new.status, new.lock_version) == ("review_pending", 4)

    def test_missing_if_match_is_precondition_required(
        self, reviewer, client_for, knowledge_base
    ):
        document = DocumentFactory(knowledge_base=knowledge_base, review_pending=True)
        response = publish(client_for(reviewer), document, lock=False)
        assert response.status_code == 428
        assert response.json()["error_code"] == "precondition_required"

    @pytest.mark.parametrize("header", ['"0"', 'W/"0"', "0"])
    def test_if_match_forms(self, reviewer, client_for, knowledge_base, header):
        document = DocumentFactory(knowledge_base=knowledge_base, review_pending=True)
        response = client_for(reviewer).post(
            f"/api/documents/{document.pk}/publish", HTTP_IF_MATCH=header
        )
        assert response.status_code == 200

    def test_garbage_if_match_is_a_validation_error(
        self, reviewer, client_for, knowledge_base
    ):
        document = DocumentFactory(knowledge_base=knowledge_base, review_pending=True)
        response = publish(client_for(reviewer), document, lock="abc")
        assert response.status_code == 422

    @pytest.mark.parametrize(
        "state", ["draft", "processing", "published", "archived", "failed"]
    )
    def test_wrong_state_is_a_conflict(
        self, reviewer, client_for, knowledge_base, state
    ):
        document = DocumentFactory(knowledge_base=knowledge_base, status=state)
        response = publish(client_for(reviewer), document)
        assert response.status_code == 409
        assert response.json()["error_code"] == "invalid_transition"
        document.refresh_from_db()
        assert document.status == state

    @pytest.mark.parametrize("role", [Role.VIEWER, Role.EDITOR])
    def test_non_reviewer_is_forbidden(self, member, client_for, knowledge_base, role):
        document = DocumentFactory(knowledge_base=knowledge_base, review_pending=True)
        response = publish(client_for(member(role)), document)
        assert response.status_code == 403
        assert response.json()["error_code"] == "permission_denied"
        document.refresh_from_db()
        assert document.status == "review_pending"

    def test_reviewer_of_another_knowledge_base_cannot_see_it(
        self, member, client_for, other_knowledge_base, knowledge_base
    ):
        document = DocumentFactory(knowledge_base=knowledge_base, review_pending=True)
        outsider = member(Role.REVIEWER, kb=other_knowledge_base)
        assert publish(client_for(outsider), document).status_code == 404


class TestReject:
    def test_reviewer_rejects_with_reason(self, reviewer, client_for, knowledge_base):
        document = DocumentFactory(knowledge_base=knowledge_base, review_pending=True)

        response = reject(client_for(reviewer), document, reason="  Outdated.  ")

        assert response.status_code == 200
        assert response.json()["status"] == "draft"
        assert response.json()["review_note"] == "Outdated."
        assert response.json()["lock_version"] == 1

    @pytest.mark.parametrize("reason", ["", "   "])
    def test_reason_is_required(self, reviewer, client_for, knowledge_base, reason):
        document = DocumentFactory(knowledge_base=knowledge_base, review_pending=True)
        response = reject(client_for(reviewer), document, reason=reason)
        assert response.status_code == 422
        document.refresh_from_db()
        assert document.status == "review_pending"

    def test_stale_reject(self, reviewer, client_for, knowledge_base):
        document = DocumentFactory(
            knowledge_base=knowledge_base, review_pending=True, lock_version=2
        )
        response = reject(client_for(reviewer), document, lock=1)
        assert response.status_code == 409
        assert response.json()["error_code"] == "stale_version"

    def test_editor_cannot_reject(self, editor, client_for, knowledge_base):
        document = DocumentFactory(knowledge_base=knowledge_base, review_pending=True)
        assert reject(client_for(editor), document).status_code == 403

    def test_published_cannot_be_rejected(self, reviewer, client_for, knowledge_base):
        document = DocumentFactory(knowledge_base=knowledge_base, published=True)
        response = reject(client_for(reviewer), document)
        assert response.status_code == 409
        assert response.json()["error_code"] == "invalid_transition"
