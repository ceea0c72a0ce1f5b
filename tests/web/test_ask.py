"""The Ask page, its conversations and the source panel: who sees what."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from conversations.models import Conversation, ConversationTurnSource
from documents.models import Role
from tests.factories import (
    ChunkFactory,
    ConversationFactory,
    ConversationTurnFactory,
    DocumentFactory,
)

pytestmark = pytest.mark.django_db


def signed_in(user, **kwargs) -> Client:
    client = Client(**kwargs)
    client.force_login(user)
    return client


class TestAskPage:
    def test_anonymous_is_sent_to_sign_in(self, client):
        response = client.get("/")
        assert response.status_code == 302
        assert response["Location"] == "/login/?next=/"

    def test_a_member_gets_the_question_box_and_only_their_knowledge_bases(
        self, viewer, other_knowledge_base
    ):
        response = signed_in(viewer).get("/")
        assert response.status_code == 200
        page = response.content.decode()
        for hook in ("ask-question", "ask-submit"):
            assert f'data-testid="{hook}"' in page
        assert '<label for="ask-question">' in page
        assert 'value="kb-company" checked' in page
        assert "kb-other" not in page
        assert "unsafe-inline" not in response["Content-Security-Policy"]
        assert "<script>" not in page
        assert 'data-stream-url="/api/chat/stream"' in page

    def test_someone_with_no_knowledge_base_is_told_so(self, django_user_model):
        user = django_user_model.objects.create_user("lonely", password="x")
        page = signed_in(user).get("/").content.decode()
        assert 'data-testid="no-knowledge-bases"' in page
        assert 'data-testid="ask-question"' not in page

    def test_the_page_speaks_chinese(self, viewer):
        client = signed_in(viewer)
        client.cookies["django_language"] = "zh-hans"
        page = client.get("/").content.decode()
        assert "要搜索的知识库" in page


class TestConversations:
    def test_the_callers_conversations_are_listed_newest_first(self, viewer):
        older = ConversationFactory(owner=viewer, title="Older question")
        newer = ConversationFactory(owner=viewer, title="Newer question")
        Conversation.objects.filter(pk=older.pk).update(updated_at="2024-01-01T00:00Z")
        ConversationFactory(title="Someone else's question")
        page = signed_in(viewer).get("/").content.decode()
        assert page.index("Newer question") < page.index("Older question")
        assert "Someone else" not in page
        assert f"?conversation={newer.pk}" in page

    def test_an_opened_conversation_shows_its_turns_and_continues(self, viewer):
        conversation = ConversationFactory(owner=viewer)
        ConversationTurnFactory(conversation=conversation, answer="Twenty-five days.")
        response = signed_in(viewer).get(f"/?conversation={conversation.pk}")
        page = response.content.decode()
        assert "Twenty-five days." in page
        assert f'name="conversation_id" value="{conversation.pk}"' in page

    @pytest.mark.parametrize(
        ("language", "placeholder", "count"),
        [
            (
                "en",
                "Hidden: you no longer have access to its sources.",
                "1 turn hidden",
            ),
            ("zh-hans", "已隐藏：你已无权访问它引用的来源。", "1 轮已隐藏"),
        ],
    )
    def test_a_turn_quoting_a_knowledge_base_left_is_hidden(
        self, viewer, language, placeholder, count
    ):
        conversation = ConversationFactory(owner=viewer)
        kept = ConversationTurnFactory(conversation=conversation, answer="25 days.")
        ConversationTurnSource.objects.create(turn=kept, knowledge_base_id="kb-company")
        lost = ConversationTurnFactory(
            conversation=conversation,
            question="What is the on-call phone?",
            answer="Call 555-0100.",
        )
        ConversationTurnSource.objects.create(turn=lost, knowledge_base_id="kb-other")
        client = signed_in(viewer)
        client.cookies["django_language"] = language

        page = client.get(f"/?conversation={conversation.pk}").content.decode()

        assert "25 days." in page
        assert "555-0100" not in page
        assert "on-call phone" not in page
        assert page.count('data-testid="hidden-turn"') == 1
        assert placeholder in page
        assert count in client.get("/conversations/").content.decode()

    @pytest.mark.parametrize("raw", ["not-a-uuid", "theirs"])
    def test_another_users_conversation_is_not_found(self, viewer, raw):
        if raw == "theirs":
            raw = ConversationFactory().pk
        assert signed_in(viewer).get(f"/?conversation={raw}").status_code == 404

    def test_the_list_alone_for_refreshing(self, viewer):
        ConversationFactory(owner=viewer, title="Mine")
        response = signed_in(viewer).get("/conversations/")
        assert response.status_code == 200
        assert b"Mine" in response.content
        assert b"<html" not in response.content

    def test_delete_needs_the_csrf_token_and_removes_only_the_callers(self, viewer):
        mine = ConversationFactory(owner=viewer)
        theirs = ConversationFactory()
        client = signed_in(viewer, enforce_csrf_checks=True)
        url = f"/conversations/{mine.pk}/delete/"
        assert client.post(url).status_code == 403
        token = client.get("/").cookies["csrftoken"].value

        response = client.post(url, {"csrfmiddlewaretoken": token})
        assert response.status_code == 302
        assert response["Location"] == "/"
        assert not Conversation.objects.filter(pk=mine.pk).exists()
        other = client.post(
            f"/conversations/{theirs.pk}/delete/", {"csrfmiddlewaretoken": token}
        )
        assert other.status_code == 404
        assert Conversation.objects.filter(pk=theirs.pk).exists()

    def test_delete_by_get_is_not_allowed(self, viewer):
        mine = ConversationFactory(owner=viewer)
        response = signed_in(viewer).get(f"/conversations/{mine.pk}/delete/")
        assert response.status_code == 405
        assert Conversation.objects.filter(pk=mine.pk).exists()

    def test_anonymous_cannot_delete(self, client):
        mine = ConversationFactory()
        response = client.post(f"/conversations/{mine.pk}/delete/")
        assert response.status_code == 302
        assert Conversation.objects.filter(pk=mine.pk).exists()


class TestStreamFromThePage:
    """The page's script calls the API with the session cookie and the CSRF header."""

    def test_session_and_csrf_stream_an_answer(self, viewer):
        client = signed_in(viewer, enforce_csrf_checks=True)
        token = client.get("/").cookies["csrftoken"].value
        body = json.dumps({"question": "How much leave?", "knowledge_base_ids": []})

        refused = client.post("/api/chat/stream", body, content_type="application/json")
        assert refused.status_code == 403

        response = client.post(
            "/api/chat/stream",
            body,
            content_type="application/json",
            HTTP_ACCEPT="text/event-stream",
            HTTP_X_CSRFTOKEN=token,
        )
        assert response.status_code == 200
        raw = b"".join(response.streaming_content).decode()
        assert "event: run.started" in raw
        assert "event: run.completed" in raw
        completed = raw.split("event: run.completed\ndata: ")[1].strip()
        assert json.loads(completed)["refused"] is True

    def test_a_foreign_knowledge_base_is_a_json_404(self, viewer):
        client = signed_in(viewer)
        response = client.post(
            "/api/chat/stream",
            {"question": "q", "knowledge_base_ids": ["kb-other"]},
            content_type="application/json",
            HTTP_ACCEPT="text/event-stream",
        )
        assert response.status_code == 404
        assert response.json()["error_code"] == "not_found"


def lay_out(document):
    return [
        ChunkFactory(document=document, ordinal=number, text=text, page=page)
        for number, (text, page) in enumerate(
            [
                ("Chapter one opens the handbook.", 1),
                ("Annual leave is 25 days for every employee.", 2),
                ("Part-time staff get a share of it.", 2),
                ("Chapter three is about travel.", 3),
            ]
        )
    ]


class TestSourcePanel:
    @pytest.fixture
    def published(self, knowledge_base):
        document = DocumentFactory(
            knowledge_base=knowledge_base, published=True, filename="handbook.pdf"
        )
        lay_out(document)
        return document

    def url(self, document, **query):
        from urllib.parse import urlencode

        return f"/sources/{document.pk}/?{urlencode(query)}"

    def test_the_cited_passage_is_marked_among_its_neighbours(self, viewer, published):
        response = signed_in(viewer).get(
            self.url(published, page=2, excerpt="…leave is 25 days for every")
        )
        assert response.status_code == 200
        page = response.content.decode()
        assert 'data-testid="source-panel"' in page
        assert "<mark>Annual leave is 25 days for every employee.</mark>" in page
        assert "Chapter one opens" in page  # the neighbour before
        assert "Part-time staff" in page  # and after
        assert "Chapter three" not in page
        assert "handbook.pdf" in page
        assert f"/api/documents/{published.pk}/file" in page
        assert "<html" in page  # opened on its own: a whole page

    def test_the_page_asks_for_the_panel_alone(self, viewer, published):
        chunk = published.chunks.get(ordinal=3)
        response = signed_in(viewer).get(
            self.url(published, chunk=chunk.pk), HTTP_HX_REQUEST="true"
        )
        page = response.content.decode()
        assert "<html" not in page
        assert "<mark>Chapter three is about travel.</mark>" in page
        assert "data-close-source" in page

    def test_the_quoted_sentence_alone_is_marked_in_a_long_chunk(
        self, viewer, knowledge_base
    ):
        document = DocumentFactory(knowledge_base=knowledge_base, published=True)
        ChunkFactory(
            document=document,
            ordinal=0,
            text="Leave policy\n\nEmployees receive 15 days of paid\nannual leave. "
            "Sick leave is 10 days.",
            page=1,
        )
        page = (
            signed_in(viewer)
            .get(
                self.url(
                    document,
                    excerpt="Leave policy",
                    quote="Employees receive 15 days of paid annual leave.",
                )
            )
            .content.decode()
        )
        assert (
            '<p class="cited">Leave policy<br><br>'
            "<mark>Employees receive 15 days of paid<br>annual leave.</mark>"
            " Sick leave is 10 days.</p>"
        ) in page
        # A quote the chunk does not hold: all of the chunk is marked.
        page = signed_in(viewer).get(self.url(document, quote="Not there.")).content
        assert b"<mark>Leave policy<br><br>Employees" in page

    def test_a_pdf_page_is_drawn_beside_the_passage(self, viewer, knowledge_base):
        pdf = DocumentFactory(
            knowledge_base=knowledge_base,
            published=True,
            filename="handbook.pdf",
            content_type="application/pdf",
        )
        lay_out(pdf)
        page = signed_in(viewer).get(self.url(pdf, page=2)).content.decode()
        assert f'src="/documents/{pdf.pk}/pages/2.png?width=960"' in page
        assert 'alt="Page 2 of handbook.pdf"' in page

    def test_a_text_file_is_not_drawn(self, viewer, published):
        page = signed_in(viewer).get(self.url(published, page=2)).content.decode()
        assert 'data-testid="source-image"' not in page

    def test_slides_and_sheets_are_named_as_such(self, viewer, knowledge_base):
        deck = DocumentFactory(
            knowledge_base=knowledge_base, published=True, filename="deck.pptx"
        )
        lay_out(deck)
        page = signed_in(viewer).get(self.url(deck, page=2)).content.decode()
        assert "<dt>Slide</dt><dd>2</dd>" in page

    def test_a_viewer_cannot_see_a_drafts_chunk(self, viewer, editor, knowledge_base):
        draft = DocumentFactory(knowledge_base=knowledge_base, review_pending=True)
        lay_out(draft)
        assert signed_in(viewer).get(self.url(draft, page=2)).status_code == 404
        assert signed_in(editor).get(self.url(draft, page=2)).status_code == 200

    def test_another_knowledge_base_is_not_found(
        self, member, published, other_knowledge_base
    ):
        outsider = member(Role.REVIEWER, kb=other_knowledge_base, username="otto")
        response = signed_in(outsider).get(self.url(published, page=2))
        assert response.status_code == 404
        assert b"Annual leave" not in response.content

    def test_a_chunk_of_another_document_is_not_found(
        self, viewer, published, other_knowledge_base
    ):
        elsewhere = DocumentFactory(knowledge_base=other_knowledge_base, published=True)
        [foreign, *_] = lay_out(elsewhere)
        response = signed_in(viewer).get(self.url(published, chunk=foreign.pk))
        assert response.status_code == 404

    def test_anonymous_is_sent_to_sign_in(self, client, published):
        response = client.get(self.url(published))
        assert response.status_code == 302
        assert response["Location"].startswith("/login/")
