"""Thin HTTP edges over the caller's own conversations: list, read, delete."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from conversations import selectors, services
from core.openapi import error_responses
from core.pagination import StandardPagination

from .serializers import (
    ConversationDetailSerializer,
    ConversationSerializer,
)


class ConversationListView(APIView):
    # Read by drf-spectacular too, so the schema shows the paginated envelope.
    pagination_class = StandardPagination

    @extend_schema(
        responses={200: ConversationSerializer(many=True), **error_responses(401)},
        summary="The caller's conversations, most recently used first",
    )
    def get(self, request):
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(
            selectors.conversations_for(request.user), request, view=self
        )
        return paginator.get_paginated_response(
            ConversationSerializer(page, many=True).data
        )


class ConversationDetailView(APIView):
    @extend_schema(
        responses={200: ConversationDetailSerializer, **error_responses(401, 404)},
        summary="One of the caller's conversations, with its turns in order",
    )
    def get(self, request, conversation_id):
        conversation = selectors.conversation_with_turns(request.user, conversation_id)
        return Response(ConversationDetailSerializer(conversation).data)

    @extend_schema(
        responses={204: None, **error_responses(401, 404)},
        summary="Delete one of the caller's conversations with its turns",
    )
    def delete(self, request, conversation_id):
        services.conversation_delete(user=request.user, conversation_id=conversation_id)
        return Response(status=status.HTTP_204_NO_CONTENT)
