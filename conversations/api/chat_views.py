"""Thin HTTP edges over answers: one JSON answer, or the same answer as events.

Every answer is a turn of a conversation (`conversations.services`): a new one
unless the request names one with `conversation_id`.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import uuid
from collections.abc import Iterator
from typing import Any

from django.conf import settings
from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.utils.encoders import JSONEncoder
from rest_framework.views import APIView

from answers import chat
from conversations import services
from core.errors import DomainError
from core.openapi import error_responses
from core.throttling import Slot, SlotHeldStream, Slots
from retrieval.errors import TooManyStreams
from retrieval.metrics import CHAT_SECONDS

from .chat_serializers import ChatRequestSerializer, ChatResponseSerializer

logger = logging.getLogger(__name__)


class ChatView(APIView):
    throttle_scope = "chat"

    @extend_schema(
        request=ChatRequestSerializer,
        responses={
            200: ChatResponseSerializer,
            **error_responses(401, 404, 422, 429, 503),
        },
        summary="Answer from the caller's published documents, with citations",
    )
    def post(self, request):
        serializer = ChatRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        with CHAT_SECONDS.time():
            result = services.conversation_chat(
                user=request.user, **serializer.validated_data
            )
        return Response(_answer_data(result))


def _answer_data(result: services.ConversationAnswer) -> dict:
    """The answer's fields and the turn's, as `ChatResponseSerializer` renders them."""
    answer = result.answer
    fields = {f.name: getattr(answer, f.name) for f in dataclasses.fields(answer)}
    return ChatResponseSerializer(
        {
            **fields,
            "conversation_id": result.conversation_id,
            "resolved_question": result.resolved_question,
        }
    ).data


class JSONBeforeStreaming(DefaultContentNegotiation):
    """Errors raised before the stream starts are JSON, even for
    `Accept: text/event-stream` (which would otherwise be a 406)."""

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


STREAM_DESCRIPTION = """Server-sent events, numbered from 1 (`id:`) in this order:
`run.started` {run_id, question, conversation_id}; `answer.delta` {text} pieces that
join to the answer; one `citation` per returned source; then `run.completed` with the
answer object of `POST /api/chat` (with `conversation_id` and `resolved_question`).
A failure after the start ends the stream with `run.failed` {error_code, detail}
(e.g. `provider_unavailable`) and stores no turn: a new conversation announced in
`run.started` then does not exist."""


class ChatStreamView(APIView):
    renderer_classes = [JSONRenderer]
    content_negotiation_class = JSONBeforeStreaming
    throttle_scope = "chat"

    @extend_schema(
        request=ChatRequestSerializer,
        responses={
            (200, "text/event-stream"): OpenApiResponse(
                response=OpenApiTypes.STR, description=STREAM_DESCRIPTION
            ),
            **error_responses(401, 404, 422, 429),
        },
        summary="The same answer as /api/chat, as server-sent events",
    )
    def post(self, request):
        serializer = ChatRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        # An unknown conversation or knowledge base answers 404 here, before any
        # event is sent; the follow-up is resolved here too.
        turn = services.conversation_prepare(
            user=request.user,
            question=data["question"],
            conversation_id=data.get("conversation_id"),
        )
        scope = chat.chat_scope(request.user, data.get("knowledge_base_ids"))
        slot = _stream_slot(request.user)
        try:
            response = StreamingHttpResponse(
                SlotHeldStream(_numbered(_events(request.user, turn, scope)), slot),
                content_type="text/event-stream",
            )
        except BaseException:
            slot.release()
            raise
        response["Cache-Control"] = "no-cache"
        response["X-Accel-Buffering"] = "no"  # nginx: pass each event on at once
        return response


def _stream_slot(user) -> Slot:
    """One of the caller's CHAT_MAX_CONCURRENT_STREAMS_PER_USER, or `429`."""
    slot = Slots(
        "chat-stream",
        limit=settings.CHAT_MAX_CONCURRENT_STREAMS_PER_USER,
        ttl_seconds=settings.CHAT_STREAM_SLOT_TTL_SECONDS,
    ).acquire(str(user.pk))
    if slot is None:
        raise TooManyStreams()
    return slot


def _events(
    user, turn: services.PreparedTurn, scope: list[str]
) -> Iterator[tuple[str, Any]]:
    yield (
        "run.started",
        {
            "run_id": str(uuid.uuid4()),
            "question": turn.question,
            "conversation_id": str(turn.conversation_id),
        },
    )
    try:
        result = services.conversation_answer(
            user=user, turn=turn, knowledge_base_ids=scope
        )
    except DomainError as error:
        yield "run.failed", {"error_code": error.error_code, "detail": error.detail}
        return
    except Exception:
        logger.exception("chat stream failed")
        yield (
            "run.failed",
            {"error_code": "internal_error", "detail": "An internal error occurred."},
        )
        return
    data = _answer_data(result)
    # The whole answer is checked before the first delta: nothing unchecked streams.
    for line in result.answer.answer.splitlines(keepends=True):
        yield "answer.delta", {"text": line}
    for source in data["sources"]:
        yield "citation", source
    yield "run.completed", data


def _numbered(events: Iterator[tuple[str, Any]]) -> Iterator[bytes]:
    for number, (name, data) in enumerate(events, start=1):
        payload = json.dumps(data, cls=JSONEncoder, ensure_ascii=False)
        yield f"id: {number}\nevent: {name}\ndata: {payload}\n\n".encode()
