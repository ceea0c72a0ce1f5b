"""Thin HTTP edges over retrieval."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.views import APIView

from config.openapi import error_responses
from config.pagination import StandardPagination
from documents import selectors as document_selectors

from .serializers import ChunkSerializer


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
