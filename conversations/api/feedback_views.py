"""Thin HTTP edges over feedback on answers: give it, and, for reviewers, the
answers marked not helpful in their knowledge bases."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from conversations import feedback, selectors
from core.body_limits import BodyLimit
from core.openapi import error_responses
from core.pagination import StandardPagination

from .feedback_serializers import FeedbackRequestSerializer, FeedbackSerializer

# The largest valid feedback (the answer and its 20 sources, about 308,000
# characters) with every character written as a \uXXXX escape: 1.85 MB.
FEEDBACK_BODY = BodyLimit(lambda: 2 * 1024 * 1024)


class FeedbackView(APIView):
    request_body_limits = {"POST": FEEDBACK_BODY}

    @extend_schema(
        request=FeedbackRequestSerializer,
        responses={201: FeedbackSerializer, **error_responses(401, 404, 422)},
        summary="Say whether an answer helped, with an optional comment",
    )
    def post(self, request):
        serializer = FeedbackRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        stored = feedback.answer_feedback_create(
            user=request.user, **serializer.validated_data
        )
        return Response(FeedbackSerializer(stored).data, status=status.HTTP_201_CREATED)


class AnswersToCheckView(APIView):
    pagination_class = StandardPagination

    @extend_schema(
        responses={200: FeedbackSerializer(many=True), **error_responses(401)},
        summary="Answers marked not helpful in the knowledge bases the caller "
        "reviews, newest first (empty for everyone else)",
    )
    def get(self, request):
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(
            selectors.answers_to_check_for(request.user), request, view=self
        )
        return paginator.get_paginated_response(
            FeedbackSerializer(page, many=True).data
        )
