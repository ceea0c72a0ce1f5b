"""Feedback on answers: POST /api/chat/feedback and GET /api/answers/to-check."""

from __future__ import annotations

import uuid

import pytest

from conversations.models import AnswerFeedback
from documents.models import Role
from tests.factories import ConversationFactory, DocumentFactory

pytestmark = pytest.mark.django_db


def source(document, **fields) -> dict:
    """One source as /api/chat returns it."""
    return {
        "id": "S1",
        "document_id": str(document.pk),
        "document_version": document.version,
        "knowledge_base_id": document.knowledge_base_id,
        "filename": document.filename,
        "heading_path": ["Leave"],
        "page": 2,
        "excerpt": "Annual leave is 25 days.",
        **fields,
    }


def give(client, **body):
    payload = {
        "question": "How much leave do I get?",
        "answer": "Annual leave is 25 days.[S1]",
        "helpful": False,
        **body,
    }
    return client.post("/api/chat/feedback", payload, format="json")


@pytest.fixture
def published(knowledge_base):
    return DocumentFactory(knowledge_base=knowledge_base, published=True)


@pytest.fixture
def published_elsewhere(other_knowledge_base):
    return DocumentFactory(knowledge_base=other_knowledge_base, published=True)


class TestGive:
    def test_feedback_is_stored_with_its_sources_read_from_the_documents(
        self, viewer, client_for, published
    ):
        conversation = ConversationFactory(owner=viewer)
        response = give(
            client_for(viewer),
            sources=[source(published, filename="forged.md", knowledge_base_id="x")],
            comment="  It missed part-time staff. ",
            conversation_id=str(conversation.pk),
        )

        assert response.status_code == 201, response.json()
        body = response.json()
        assert body["helpful"] is False
        assert body["comment"] == "It missed part-time staff."
        assert body["username"] == "vera"
        assert body["conversation_id"] == str(conversation.pk)
        assert body["knowledge_base_ids"] == ["kb-company"]
        assert body["sources"] == [
            {
                "id": "S1",
                "document_id": str(published.pk),
                "document_version": 1,
                "filename": published.filename,
                "knowledge_base_id": "kb-company",
                "page": 2,
                "heading_path": ["Leave"],
                "excerpt": "Annual leave is 25 days.",
            }
        ]
        stored = AnswerFeedback.objects.get(pk=body["id"])
        assert stored.user == viewer
        assert list(stored.knowledge_bases.values_list("pk", flat=True)) == [
            "kb-company"
        ]

    def test_a_refusal_belongs_to_the_knowledge_bases_searched(
        self, member, client_for, knowledge_base, other_knowledge_base
    ):
        user = member(Role.VIEWER)
        member(Role.VIEWER, kb=other_knowledge_base, username=user.username)
        response = give(
            client_for(user),
            answer="No published document matches this question.",
            refused=True,
            knowledge_base_ids=["kb-other"],
        )
        assert response.status_code == 201
        assert response.json()["knowledge_base_ids"] == ["kb-other"]

    @pytest.mark.parametrize(
        ("body", "field"),
        [
            ({"helpful": None}, "helpful"),
            ({"question": ""}, "question"),
            ({"answer": ""}, "answer"),
            ({"comment": "x" * 2001}, "comment"),
            ({"sources": [{"document_id": "not-a-uuid"}]}, "sources"),
            ({"sources": [{"document_id": 7}]}, "sources"),
            ({"conversation_id": "nope"}, "conversation_id"),
        ],
    )
    def test_bad_input_is_a_validation_error(self, viewer, client_for, body, field):
        response = give(client_for(viewer), **body)
        assert response.status_code == 422
        assert response.json()["error_code"] == "validation_error"
        assert field in response.json()["fields"]
        assert not AnswerFeedback.objects.exists()

    def test_a_missing_helpful_is_a_validation_error(self, viewer, client_for):
        response = client_for(viewer).post(
            "/api/chat/feedback", {"question": "q", "answer": "a"}, format="json"
        )
        assert response.status_code == 422
        assert "helpful" in response.json()["fields"]

    def test_another_knowledge_bases_document_is_not_found(
        self, viewer, client_for, published_elsewhere
    ):
        response = give(client_for(viewer), sources=[source(published_elsewhere)])
        assert response.status_code == 404
        assert response.json()["error_code"] == "not_found"
        assert not AnswerFeedback.objects.exists()

    def test_a_draft_is_not_found_for_a_viewer(
        self, viewer, client_for, knowledge_base
    ):
        draft = DocumentFactory(knowledge_base=knowledge_base, review_pending=True)
        response = give(client_for(viewer), sources=[source(draft)])
        assert response.status_code == 404

    def test_another_users_conversation_is_not_found(self, viewer, client_for):
        theirs = ConversationFactory()
        response = give(client_for(viewer), conversation_id=str(theirs.pk))
        assert response.status_code == 404
        response = give(client_for(viewer), conversation_id=str(uuid.uuid4()))
        assert response.status_code == 404

    def test_a_foreign_knowledge_base_searched_is_not_found(self, viewer, client_for):
        response = give(client_for(viewer), refused=True, knowledge_base_ids=["kb-x"])
        assert response.status_code == 404

    def test_anonymous_is_refused(self, api_client):
        assert give(api_client).status_code == 401


class TestToCheck:
    @pytest.fixture
    def given(self, member, client_for, published, published_elsewhere):
        """Feedback on each knowledge base's document, and on both at once."""
        asker = member(Role.VIEWER, username="asker")
        member(Role.VIEWER, kb=published_elsewhere.knowledge_base, username="asker")
        client = client_for(asker)
        for sources, helpful in [
            ([source(published)], False),
            ([source(published_elsewhere)], False),
            ([source(published), source(published_elsewhere, id="S2")], False),
            ([source(published)], True),
        ]:
            assert give(client, sources=sources, helpful=helpful).status_code == 201

    def test_a_reviewer_sees_the_not_helpful_answers_of_their_knowledge_bases(
        self, given, member, client_for, other_knowledge_base
    ):
        rita = member(Role.REVIEWER, username="rita")
        body = client_for(rita).get("/api/answers/to-check").json()
        assert body["count"] == 1
        [item] = body["results"]
        assert item["knowledge_base_ids"] == ["kb-company"]
        assert [s["knowledge_base_id"] for s in item["sources"]] == ["kb-company"]
        assert item["helpful"] is False

        other = member(Role.REVIEWER, kb=other_knowledge_base, username="otto")
        body = client_for(other).get("/api/answers/to-check").json()
        assert [item["knowledge_base_ids"] for item in body["results"]] == [
            ["kb-other"]
        ]

    def test_a_reviewer_of_both_sees_the_answer_that_cites_both(
        self, given, member, client_for, other_knowledge_base
    ):
        both = member(Role.REVIEWER, username="bo")
        member(Role.REVIEWER, kb=other_knowledge_base, username="bo")
        body = client_for(both).get("/api/answers/to-check").json()
        assert body["count"] == 3
        assert ["kb-company", "kb-other"] in [
            item["knowledge_base_ids"] for item in body["results"]
        ]

    @pytest.mark.parametrize("role", [Role.VIEWER, Role.EDITOR])
    def test_others_see_none(self, given, member, client_for, role):
        user = member(role, username=f"someone-{role}")
        body = client_for(user).get("/api/answers/to-check").json()
        assert body == {"count": 0, "next": None, "previous": None, "results": []}

    def test_anonymous_is_refused(self, api_client):
        assert api_client.get("/api/answers/to-check").status_code == 401


def test_the_schema_lists_the_feedback_endpoints(api_client):
    import yaml

    paths = yaml.safe_load(api_client.get("/api/schema").content)["paths"]
    assert {"201", "404", "422"} <= set(
        paths["/api/chat/feedback"]["post"]["responses"]
    )
    assert "get" in paths["/api/answers/to-check"]
