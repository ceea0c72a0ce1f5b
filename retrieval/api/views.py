"""Thin HTTP edges over retrieval."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from core.errors import PermissionDenied
from core.openapi import error_responses
from core.pagination import StandardPagination
from documents import selectors as document_selectors
from documents.models import Role
from retrieval import changes, search
from retrieval.metrics import SEARCH_SECONDS

from .change_serializers import DocumentChangesSerializer
from .serializers import (
    ChunkSerializer,
    DebugRequestSerializer,
    DebugResponseSerializer,
    SearchRequestSerializer,
    SearchResponseSerializer,
)


class DocumentChunkListView(APIView):
    @extend_schema(
        responses={200: ChunkSerializer(many=True), **error_responses(401, 404)},
        summary="The chunks the worker produced for a document, in order",
    )
    def get(self, request, document_id):
        document = document_selectors.visible_document(request.user, document_id)
        chunks = document.chunks.order_by("ordinal").defer("embedding")
        paginator = StandardPagination()
        page = paginator.paginate_queryset(chunks, request, view=self)
        return paginator.get_paginated_response(ChunkSerializer(page, many=True).data)


class DocumentChangesView(APIView):
    @extend_schema(
        responses={200: DocumentChangesSerializer, **error_responses(401, 404)},
        summary="What this version changes against its family's published version",
    )
    def get(self, request, document_id):
        result = changes.document_changes_for(request.user, document_id)
        return Response(DocumentChangesSerializer(result).data)


class SearchView(APIView):
    throttle_scope = "search"

    @extend_schema(
        request=SearchRequestSerializer,
        responses={
            200: SearchResponseSerializer,
            **error_responses(401, 404, 422, 429, 503),
        },
        summary="Search the published chunks of the caller's knowledge bases",
    )
    def post(self, request):
        serializer = SearchRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        with SEARCH_SECONDS.time():
            run = search.search(user=request.user, **serializer.validated_data)
        return Response(SearchResponseSerializer(run).data)


def _ranked(hits) -> list[dict]:
    return [
        {
            "rank": rank,
            "chunk_id": hit.chunk_id,
            "document_id": hit.document_id,
            "knowledge_base_id": hit.knowledge_base_id,
            "score": hit.score,
        }
        for rank, hit in enumerate(hits, start=1)
    ]


class RetrievalDebugView(APIView):
    throttle_scope = "search"

    @extend_schema(
        request=DebugRequestSerializer,
        responses={
            200: DebugResponseSerializer,
            **error_responses(401, 403, 422, 429, 503),
        },
        summary="Every stage of a search, with ranks and scores (reviewers, staff)",
    )
    def post(self, request):
        user = request.user
        if not (
            user.is_staff
            or document_selectors.knowledge_base_ids_for(
                user, minimum_role=Role.REVIEWER
            )
        ):
            raise PermissionDenied("Retrieval debugging is for reviewers and staff.")
        serializer = DebugRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        run = search.search(user=user, top_k=10, **serializer.validated_data)
        return Response(
            DebugResponseSerializer(
                {
                    "profile": run.profile,
                    "keyword": _ranked(run.keyword),
                    "vector": _ranked(run.vector),
                    "fused": _ranked(run.fused),
                    "reranked": _ranked(run.reranked),
                }
            ).data
        )
