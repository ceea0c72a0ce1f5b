"""Conversations: follow-ups on /api/chat, the owner rule, history, pruning."""

from __future__ import annotations

import io
import json
import threading
import uuid
from datetime import timedelta

import pytest
import yaml
from django.core.management import CommandError, call_command
from django.db import connection
from django.utils import timezone

from answers import chat
from answers.types import Answer
from conversations import services
from conversations.models import Conversation, ConversationTurn
from documents.models import Membership, Role
from tests.answers.chat_samples import LEVELS, LEVELS_ZH, TRAVEL, leave
from tests.conversations.test_chat_stream import events, stream
from tests.factories import ConversationFactory, ConversationTurnFactory, UserFactory

pytestmark = pytest.mark.django_db

NOT_FOUND = {"error_code": "not_found", "detail": "Conversation not found."}
LEVEL_1_SENTENCE = "A level 1 incident must be answered within 7 minutes."
LEVEL_2_SENTENCE = "A level 2 incident must be answered within 30 minutes."


def ask(client, question, conversation_id=None, **body):
    if conversation_id is not None:
        body["conversation_id"] = conversation_id
    return client.post("/api/chat", {"question": question, **body}, format="json")


def claims(body: dict) -> list[str]:
    return [claim["text"] for claim in body["claims"]]


class TestFollowUps:
    """Resolved against the previous turn, then answered by the real answerer."""

    def test_a_sibling_item_replaces_the_previous_one(
        self, ingest, viewer, client_for, knowledge_base
    ):
        ingest(knowledge_base, LEVELS, filename="levels.md")
        client = client_for(viewer)

        first = ask(
            client, "Within how many minutes must a level 1 incident be answered?"
        )
        assert first.status_code == 200
        first = first.json()
        assert claims(first) == [LEVEL_1_SENTENCE]
        second = ask(client, "and for level 2?", first["conversation_id"]).json()

        assert second["conversation_id"] == first["conversation_id"]
        assert second["resolved_question"] == (
            "Within how many minutes must a level 2 incident be answered?"
        )
        assert claims(second) == [LEVEL_2_SENTENCE]
        assert second["sources"][0]["heading_path"] == ["Incident response", "Level 2"]

    def test_how_fast_is_answered_for_the_level_named_in_the_follow_up(
        self, ingest, viewer, client_for, knowledge_base
    ):
        ingest(knowledge_base, LEVELS, filename="levels.md")
        client = client_for(viewer)
        first = ask(client, "How fast must a level 1 incident be answered?").json()
        assert claims(first) == [LEVEL_1_SENTENCE]

        second = ask(client, "and for level 2?", first["conversation_id"]).json()

        resolved = "How fast must a level 2 incident be answered?"
        assert second["resolved_question"] == resolved
        assert claims(second) == [LEVEL_2_SENTENCE]
        assert LEVEL_1_SENTENCE not in claims(second)

    def test_chinese_sibling_and_pronoun(
        self, ingest, viewer, client_for, knowledge_base
    ):
        ingest(knowledge_base, LEVELS_ZH, filename="事件.md")
        client = client_for(viewer)
        first = ask(client, "一级事件多少分钟内响应？").json()
        assert claims(first) == ["一级事件必须在 7 分钟内响应，由值班工程师处理。"]

        second = ask(client, "二级呢？", first["conversation_id"]).json()
        assert second["resolved_question"] == "二级事件多少分钟内响应？"
        assert claims(second) == ["二级事件必须在 30 分钟内响应，由团队负责人处理。"]

        third = ask(client, "它由谁负责处理？", first["conversation_id"]).json()
        assert third["resolved_question"] == "二级事件由谁负责处理？"
        found = client.post(
            "/api/search", {"question": third["resolved_question"]}, format="json"
        )
        assert "二级事件必须在 30 分钟内响应" in found.json()["results"][0]["text"]

    def test_a_question_that_stands_alone_is_searched_as_asked(
        self, ingest, viewer, client_for, knowledge_base
    ):
        ingest(knowledge_base, TRAVEL, filename="差旅.md")
        client = client_for(viewer)
        first = ask(client, "一线城市的住宿标准是多少？").json()

        second = ask(client, "餐饮补助每天多少钱？", first["conversation_id"]).json()

        assert second["resolved_question"] == "餐饮补助每天多少钱？"
        assert claims(second) == [
            "出差期间每天发放餐饮补助 100 元，按实际出差天数计算，无需提供发票。"
        ]

    def test_every_answer_starts_or_continues_a_conversation(
        self, ingest, viewer, client_for, knowledge_base
    ):
        ingest(knowledge_base, LEVELS, filename="levels.md")
        client = client_for(viewer)

        first = ask(client, "How many minutes for a level 1 incident?").json()
        second = ask(client, "and for level 2?", first["conversation_id"]).json()
        other = ask(client, "How many minutes for a level 1 incident?").json()

        assert other["conversation_id"] != first["conversation_id"]
        conversation = Conversation.objects.get(pk=first["conversation_id"])
        assert conversation.owner == viewer
        assert conversation.title == "How many minutes for a level 1 incident?"
        turns = list(conversation.turns.order_by("ordinal").values())
        assert [
            (t["ordinal"], t["question"], t["resolved_question"], t["refused"])
            for t in turns
        ] == [
            (1, first["resolved_question"], first["resolved_question"], False),
            (2, "and for level 2?", second["resolved_question"], False),
        ]
        assert turns[1]["answer"] == second["answer"]

    def test_a_refusal_is_a_turn_too(self, viewer, client_for):
        body = ask(client_for(viewer), "年假有多少天？").json()

        assert body["refused"] is True
        (turn,) = ConversationTurn.objects.filter(conversation=body["conversation_id"])
        assert turn.refused is True
        assert turn.answer == body["answer"]


class TestOwnerRule:
    @pytest.fixture
    def conversation(self, ingest, viewer, client_for, knowledge_base):
        ingest(knowledge_base, leave(25), filename="年假.md")
        body = ask(client_for(viewer), "年假有多少天？").json()
        return Conversation.objects.get(pk=body["conversation_id"])

    @pytest.fixture
    def intruder(self, member):
        # A member of the same knowledge base: membership is not ownership.
        return member(Role.VIEWER, username="mallory")

    def test_another_user_cannot_follow_up(self, conversation, intruder, client_for):
        response = ask(client_for(intruder), "产假呢？", str(conversation.pk))

        assert response.status_code == 404
        assert response.json() == NOT_FOUND
        assert conversation.turns.count() == 1

    def test_an_unknown_id_answers_the_same(self, viewer, client_for):
        response = ask(client_for(viewer), "产假呢？", str(uuid.uuid4()))

        assert response.status_code == 404
        assert response.json() == NOT_FOUND
        assert not Conversation.objects.exists()

    def test_another_user_cannot_read_or_delete(
        self, conversation, intruder, client_for
    ):
        client = client_for(intruder)
        path = f"/api/conversations/{conversation.pk}"

        assert client.get(path).status_code == 404
        assert client.get(path).json() == NOT_FOUND
        deleted = client.delete(path)
        assert deleted.status_code == 404
        assert deleted.json() == NOT_FOUND
        assert Conversation.objects.filter(pk=conversation.pk).exists()
        assert client.get("/api/conversations").json()["results"] == []

    def test_another_user_cannot_stream_into_it(
        self, conversation, intruder, client_for
    ):
        response = stream(
            client_for(intruder), "产假呢？", conversation_id=str(conversation.pk)
        )

        assert response.status_code == 404
        assert response["Content-Type"] == "application/json"
        assert response.json() == NOT_FOUND

    def test_the_owner_lists_reads_and_deletes(self, conversation, viewer, client_for):
        client = client_for(viewer)
        ConversationFactory(owner=UserFactory(username="someone-else"))

        listed = client.get("/api/conversations").json()
        assert listed["count"] == 1
        (item,) = listed["results"]
        assert item == {
            "id": str(conversation.pk),
            "title": "年假有多少天？",
            "created_at": item["created_at"],
            "updated_at": item["updated_at"],
            "turn_count": 1,
            "hidden_turn_count": 0,
        }

        detail = client.get(f"/api/conversations/{conversation.pk}").json()
        assert [turn["question"] for turn in detail["turns"]] == ["年假有多少天？"]
        assert set(detail["turns"][0]) == {
            "ordinal",
            "question",
            "resolved_question",
            "answer",
            "refused",
            "created_at",
            "hidden",
            "hidden_reason",
        }
        assert (detail["turns"][0]["hidden"], detail["turns"][0]["hidden_reason"]) == (
            False,
            None,
        )

        response = client.delete(f"/api/conversations/{conversation.pk}")
        assert response.status_code == 204
        assert not Conversation.objects.filter(owner=viewer).exists()
        assert not ConversationTurn.objects.exists()
        assert Conversation.objects.filter(owner__username="someone-else").exists()
        assert client.get(f"/api/conversations/{conversation.pk}").status_code == 404
        assert ask(client, "产假呢？", str(conversation.pk)).status_code == 404

    @pytest.mark.parametrize(
        ("method", "path"),
        [
            ("get", "/api/conversations"),
            ("get", f"/api/conversations/{uuid.UUID(int=1)}"),
            ("delete", f"/api/conversations/{uuid.UUID(int=1)}"),
        ],
    )
    def test_anonymous_is_refused(self, api_client, method, path):
        response = getattr(api_client, method)(path)
        assert response.status_code == 401
        assert response.json()["error_code"] == "not_authenticated"

    def test_a_path_that_is_no_uuid_is_not_found(self, viewer, client_for):
        response = client_for(viewer).get("/api/conversations/not-a-uuid")
        assert response.status_code == 404
        assert response.json()["error_code"] == "not_found"


class TestListing:
    def test_most_recently_used_first_and_paginated(self, viewer, client_for):
        now = timezone.now()
        for days in (3, 1, 2):
            conversation = ConversationFactory(owner=viewer, title=f"{days} days ago")
            ConversationTurnFactory.create_batch(days, conversation=conversation)
            Conversation.objects.filter(pk=conversation.pk).update(
                updated_at=now - timedelta(days=days)
            )
        client = client_for(viewer)

        body = client.get("/api/conversations").json()
        assert [c["title"] for c in body["results"]] == [
            "1 days ago",
            "2 days ago",
            "3 days ago",
        ]
        assert [c["turn_count"] for c in body["results"]] == [1, 2, 3]

        page = client.get("/api/conversations", {"page_size": 2, "page": 2}).json()
        assert page["count"] == 3
        assert [c["title"] for c in page["results"]] == ["3 days ago"]
        assert page["previous"] is not None

    def test_turns_are_in_order(self, viewer, client_for):
        conversation = ConversationFactory(owner=viewer)
        for ordinal in (3, 1, 2):
            ConversationTurnFactory(
                conversation=conversation, ordinal=ordinal, question=f"q{ordinal}"
            )

        body = client_for(viewer).get(f"/api/conversations/{conversation.pk}").json()

        assert [turn["ordinal"] for turn in body["turns"]] == [1, 2, 3]
        assert [turn["question"] for turn in body["turns"]] == ["q1", "q2", "q3"]
        assert body["turn_count"] == 3

    def test_a_turn_moves_its_conversation_to_the_top(
        self, ingest, viewer, client_for, knowledge_base
    ):
        ingest(knowledge_base, leave(25))
        client = client_for(viewer)
        older = ask(client, "年假有多少天？").json()["conversation_id"]
        ask(client, "年假有多少天？")

        ask(client, "产假呢？", older)

        listed = client.get("/api/conversations").json()["results"]
        assert listed[0]["id"] == older
        assert listed[0]["turn_count"] == 2


class TestVisibilityEveryTurn:
    """The scope is worked out again on every turn, never taken from the last one."""

    @pytest.fixture
    def two_teams(self, ingest, member, knowledge_base, other_knowledge_base):
        user = member(Role.VIEWER, username="vera")
        member(Role.VIEWER, kb=other_knowledge_base, username="vera")
        ingest(knowledge_base, leave(25), filename="ours.md")
        ingest(other_knowledge_base, leave(30), filename="theirs.md")
        return user

    def test_a_named_knowledge_base_left_is_not_found(
        self, two_teams, client_for, other_knowledge_base
    ):
        client = client_for(two_teams)
        first = ask(client, "年假有多少天？", knowledge_base_ids=["kb-other"]).json()
        assert claims(first) == ["每位员工每年享有 30 天带薪年假。"]
        Membership.objects.filter(
            user=two_teams, knowledge_base=other_knowledge_base
        ).delete()

        response = ask(
            client,
            "年假有多少天？",
            first["conversation_id"],
            knowledge_base_ids=["kb-other"],
        )

        assert response.status_code == 404
        assert response.json() == {
            "error_code": "not_found",
            "detail": "Knowledge base not found: kb-other.",
        }
        assert ConversationTurn.objects.count() == 1

    def test_without_names_a_knowledge_base_left_gives_no_evidence(
        self, two_teams, client_for, other_knowledge_base
    ):
        client = client_for(two_teams)
        first = ask(client, "年假有多少天？").json()
        assert {s["knowledge_base_id"] for s in first["sources"]} == {
            "kb-company",
            "kb-other",
        }
        Membership.objects.filter(
            user=two_teams, knowledge_base=other_knowledge_base
        ).delete()

        second = ask(client, "年假有多少天？", first["conversation_id"]).json()

        assert {s["knowledge_base_id"] for s in second["sources"]} == {"kb-company"}
        assert "30 天" not in json.dumps(second, ensure_ascii=False)

    def test_a_scope_named_once_is_not_kept(
        self, two_teams, client_for, other_knowledge_base
    ):
        client = client_for(two_teams)
        first = ask(client, "年假有多少天？", knowledge_base_ids=["kb-company"]).json()
        assert claims(first) == ["每位员工每年享有 25 天带薪年假。"]

        second = ask(
            client,
            "年假有多少天？",
            first["conversation_id"],
            knowledge_base_ids=["kb-other"],
        ).json()

        assert claims(second) == ["每位员工每年享有 30 天带薪年假。"]


class TestKnowledgeBaseLost:
    """A turn is shown only while its owner still reads every knowledge base its
    answer quotes: as search and chat leave a knowledge base left out of new
    turns, the conversation hides the old ones."""

    @pytest.fixture
    def two_teams(self, ingest, member, knowledge_base, other_knowledge_base):
        user = member(Role.VIEWER, username="vera")
        member(Role.VIEWER, kb=other_knowledge_base, username="vera")
        ingest(knowledge_base, leave(25), filename="ours.md")
        ingest(other_knowledge_base, LEVELS, filename="levels.md")
        return user

    def leave_other(self, user, other_knowledge_base) -> None:
        Membership.objects.filter(
            user=user, knowledge_base=other_knowledge_base
        ).delete()

    def test_the_turn_is_hidden_and_said_to_be(
        self, two_teams, client_for, other_knowledge_base
    ):
        client = client_for(two_teams)
        first = ask(
            client,
            "Within how many minutes must a level 1 incident be answered?",
            knowledge_base_ids=["kb-other"],
        ).json()
        assert claims(first) == [LEVEL_1_SENTENCE]
        conversation_id = first["conversation_id"]
        ask(
            client, "年假有多少天？", conversation_id, knowledge_base_ids=["kb-company"]
        )
        self.leave_other(two_teams, other_knowledge_base)

        detail = client.get(f"/api/conversations/{conversation_id}").json()
        listed = client.get("/api/conversations").json()["results"]

        hidden, shown = detail["turns"]
        assert hidden == {
            "ordinal": 1,
            "question": None,
            "resolved_question": None,
            "answer": None,
            "refused": None,
            "created_at": hidden["created_at"],
            "hidden": True,
            "hidden_reason": "sources_unreadable",
        }
        assert (shown["hidden"], shown["question"]) == (False, "年假有多少天？")
        assert "25 天" in shown["answer"]
        assert "7 minutes" not in json.dumps(detail)
        assert (detail["turn_count"], detail["hidden_turn_count"]) == (2, 1)
        assert (listed[0]["turn_count"], listed[0]["hidden_turn_count"]) == (2, 1)

    def test_a_follow_up_does_not_read_a_hidden_turn(
        self, two_teams, client_for, other_knowledge_base
    ):
        client = client_for(two_teams)
        first = ask(
            client,
            "Within how many minutes must a level 1 incident be answered?",
            knowledge_base_ids=["kb-other"],
        ).json()
        self.leave_other(two_teams, other_knowledge_base)

        follow_up = ask(client, "and for level 2?", first["conversation_id"]).json()

        assert follow_up["resolved_question"] == "and for level 2?"
        assert "level 1" not in json.dumps(follow_up)

    def test_membership_given_back_shows_the_turn_again(
        self, two_teams, client_for, member, other_knowledge_base
    ):
        client = client_for(two_teams)
        first = ask(
            client,
            "Within how many minutes must a level 1 incident be answered?",
            knowledge_base_ids=["kb-other"],
        ).json()
        self.leave_other(two_teams, other_knowledge_base)
        path = f"/api/conversations/{first['conversation_id']}"
        assert client.get(path).json()["turns"][0]["hidden"] is True

        member(Role.VIEWER, kb=other_knowledge_base, username="vera")

        (turn,) = client.get(path).json()["turns"]
        assert (turn["hidden"], turn["answer"]) == (False, first["answer"])


class TestHistory:
    def test_the_oldest_turns_go_beyond_the_bound(
        self, ingest, viewer, client_for, knowledge_base, settings
    ):
        settings.CHAT_CONVERSATION_MAX_TURNS = 3
        ingest(knowledge_base, leave(25))
        client = client_for(viewer)
        conversation_id = ask(client, "年假有多少天？ 1").json()["conversation_id"]
        for n in range(2, 6):
            ask(client, f"年假有多少天？ {n}", conversation_id)

        turns = ConversationTurn.objects.filter(conversation=conversation_id)
        assert list(turns.order_by("ordinal").values_list("ordinal", "question")) == [
            (3, "年假有多少天？ 3"),
            (4, "年假有多少天？ 4"),
            (5, "年假有多少天？ 5"),
        ]
        listed = client.get("/api/conversations").json()["results"]
        assert listed[0]["turn_count"] == 3

    def test_a_provider_that_is_down_stores_nothing(
        self, ingest, viewer, client_for, knowledge_base, use_stub
    ):
        ingest(knowledge_base, TRAVEL)
        client = client_for(viewer)
        first = ask(client, "一线城市的住宿标准是多少？").json()
        before = Conversation.objects.get(pk=first["conversation_id"]).updated_at
        stub = use_stub(chat=True)
        stub.mode = "error"

        follow_up = ask(client, "其他城市呢？", first["conversation_id"])
        fresh = ask(client, "一线城市的住宿标准是多少？")

        assert follow_up.status_code == fresh.status_code == 503
        assert follow_up.json()["error_code"] == "provider_unavailable"
        assert Conversation.objects.count() == 1
        conversation = Conversation.objects.get()
        assert conversation.turns.count() == 1
        assert conversation.updated_at == before

    @pytest.mark.django_db(transaction=True)
    def test_concurrent_turns_get_their_own_ordinals(self, viewer, monkeypatch):
        conversation = ConversationFactory(owner=viewer)
        both_answered = threading.Barrier(2, timeout=10)

        def answered(**kwargs) -> Answer:
            both_answered.wait()  # both turns are stored at the same moment
            return Answer(
                question=kwargs["question"],
                answer="a",
                refused=True,
                refusal_reason=None,
                claims=[],
                sources=[],
                partial=False,
                missing_information=[],
                provider="test",
                profile="test",
            )

        monkeypatch.setattr(chat, "chat_answer", answered)
        errors = []

        def turn(question: str) -> None:
            try:
                services.conversation_chat(
                    user=viewer, question=question, conversation_id=conversation.pk
                )
            except Exception as error:  # reported below
                errors.append(error)
            finally:
                connection.close()

        threads = [threading.Thread(target=turn, args=(q,)) for q in ("a?", "b?")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

        assert errors == []
        assert sorted(
            ConversationTurn.objects.filter(conversation=conversation).values_list(
                "ordinal", flat=True
            )
        ) == [1, 2]
        conversation.refresh_from_db()
        assert conversation.last_ordinal == 2


class TestStream:
    def test_a_follow_up_streams_in_its_conversation(
        self, ingest, viewer, client_for, knowledge_base
    ):
        ingest(knowledge_base, LEVELS, filename="levels.md")
        client = client_for(viewer)
        first = ask(client, "How many minutes for a level 1 incident?").json()

        sent = events(
            stream(client, "and for level 2?", conversation_id=first["conversation_id"])
        )

        started, completed = sent[0]["data"], sent[-1]["data"]
        assert started["conversation_id"] == first["conversation_id"]
        assert started["question"] == "and for level 2?"
        assert completed["conversation_id"] == first["conversation_id"]
        assert (
            completed["resolved_question"] == "How many minutes for a level 2 incident?"
        )
        assert claims(completed) == [LEVEL_2_SENTENCE]
        assert Conversation.objects.get().turns.count() == 2

    def test_a_new_conversation_is_announced_and_stored(
        self, ingest, viewer, client_for, knowledge_base
    ):
        ingest(knowledge_base, TRAVEL)

        sent = events(stream(client_for(viewer), "一线城市的住宿标准是多少？"))

        conversation = Conversation.objects.get()
        assert sent[0]["data"]["conversation_id"] == str(conversation.pk)
        assert sent[-1]["data"]["conversation_id"] == str(conversation.pk)
        assert sent[-1]["data"]["resolved_question"] == "一线城市的住宿标准是多少？"
        assert conversation.turns.count() == 1

    def test_a_failed_run_stores_nothing(
        self, ingest, viewer, client_for, knowledge_base, use_stub
    ):
        ingest(knowledge_base, TRAVEL)
        stub = use_stub(chat=True)
        stub.mode = "error"

        sent = events(stream(client_for(viewer), "一线城市的住宿标准是多少？"))

        assert [e["event"] for e in sent] == ["run.started", "run.failed"]
        assert not Conversation.objects.filter(
            pk=sent[0]["data"]["conversation_id"]
        ).exists()

    def test_an_unknown_conversation_is_a_json_404(self, viewer, client_for):
        response = stream(
            client_for(viewer), "二级呢？", conversation_id=str(uuid.uuid4())
        )
        assert response.status_code == 404
        assert response.json() == NOT_FOUND


class TestValidation:
    @pytest.mark.parametrize("value", ["not-a-uuid", "123", 42, ["x"], {"id": 1}])
    def test_a_malformed_id_is_422(self, viewer, client_for, value):
        client = client_for(viewer)
        for response in (
            ask(client, "年假有多少天？", value),
            stream(client, "年假有多少天？", conversation_id=value),
        ):
            assert response.status_code == 422
            assert response.json()["error_code"] == "validation_error"
            assert "conversation_id" in response.json()["detail"]
        assert not Conversation.objects.exists()

    def test_a_null_id_starts_a_conversation(self, viewer, client_for):
        response = client_for(viewer).post(
            "/api/chat",
            {"question": "年假有多少天？", "conversation_id": None},
            format="json",
        )
        assert response.status_code == 200
        assert Conversation.objects.filter(pk=response.json()["conversation_id"])


class TestPruning:
    def call(self, *args) -> str:
        out = io.StringIO()
        call_command("prune_conversations", *args, stdout=out)
        return out.getvalue()

    def test_conversations_unused_for_longer_go(self, viewer):
        now = timezone.now()
        ages = {"old": 40, "older": 90, "recent": 2}
        made = {}
        for title, days in ages.items():
            made[title] = ConversationFactory(owner=viewer, title=title)
            ConversationTurnFactory(conversation=made[title])
            Conversation.objects.filter(pk=made[title].pk).update(
                updated_at=now - timedelta(days=days)
            )
        # Created long ago but used yesterday: it stays.
        made["revived"] = ConversationFactory(owner=viewer, title="revived")
        Conversation.objects.filter(pk=made["revived"].pk).update(
            created_at=now - timedelta(days=100)
        )

        out = self.call("--older-than", "30")

        assert "pruned conversations=2" in out
        assert set(Conversation.objects.values_list("title", flat=True)) == {
            "recent",
            "revived",
        }
        assert ConversationTurn.objects.count() == 1

    def test_nothing_to_prune(self):
        assert "pruned conversations=0" in self.call("--older-than", "0.5")

    @pytest.mark.parametrize("args", [[], ["--older-than", "0"], ["--older-than", "x"]])
    def test_bad_arguments_are_refused(self, args):
        with pytest.raises(CommandError):
            self.call(*args)

    def test_batches_cover_everything(self, viewer):
        old = timezone.now() - timedelta(days=10)
        for _ in range(5):
            ConversationFactory(owner=viewer)
        Conversation.objects.update(updated_at=old)

        assert services.conversation_prune(older_than=timedelta(days=1), batch=2) == 5
        assert not Conversation.objects.exists()


class TestSchemaAndAdmin:
    def test_schema_documents_conversations(self, api_client):
        schema = yaml.safe_load(api_client.get("/api/schema").content)
        paths = schema["paths"]
        assert {"get"} <= set(paths["/api/conversations"])
        assert {"get", "delete"} <= set(paths["/api/conversations/{conversation_id}"])
        detail = paths["/api/conversations/{conversation_id}"]
        assert {"200", "401", "404"} <= set(detail["get"]["responses"])
        assert {"204", "404"} <= set(detail["delete"]["responses"])
        listed = paths["/api/conversations"]["get"]["responses"]["200"]
        ref = listed["content"]["application/json"]["schema"]["$ref"]
        assert ref.endswith("/PaginatedConversationList")

        components = schema["components"]["schemas"]
        request = components["ChatRequestRequest"]["properties"]
        assert request["conversation_id"]["format"] == "uuid"
        assert "conversation_id" not in components["ChatRequestRequest"].get(
            "required", []
        )
        response = components["ChatResponse"]
        assert {"conversation_id", "resolved_question"} <= set(response["properties"])
        assert {"conversation_id", "resolved_question"} <= set(response["required"])
        assert "turns" in components["ConversationDetail"]["properties"]
        stream = paths["/api/chat/stream"]["post"]
        assert "conversation_id" in stream["responses"]["200"]["description"]

    def test_admin_lists_conversations_read_only(self, client, viewer):
        admin = UserFactory(username="root", is_staff=True, is_superuser=True)
        conversation = ConversationFactory(owner=viewer)
        ConversationTurnFactory.create_batch(2, conversation=conversation)
        client.force_login(admin)

        page = client.get("/admin/conversations/conversation/")
        assert page.status_code == 200
        assert "vera" in page.content.decode()
        detail = client.get(
            f"/admin/conversations/conversation/{conversation.pk}/change/"
        )
        assert detail.status_code == 200
        # Counts only: the questions and answers stay out of the admin.
        assert conversation.title not in detail.content.decode()
        add = client.get("/admin/conversations/conversation/add/")
        assert add.status_code == 403
