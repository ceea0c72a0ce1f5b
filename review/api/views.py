"""Thin HTTP edges over the reviewers' diff: what a version changes against the
published one."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from core.openapi import error_responses
from review import changes

from .serializers import DocumentChangesSerializer


class DocumentChangesView(APIView):
    @extend_schema(
        responses={200: DocumentChangesSerializer, **error_responses(401, 404)},
        summary="What this version changes against its family's published version",
    )
    def get(self, request, document_id):
        result = changes.document_changes_for(request.user, document_id)
        return Response(DocumentChangesSerializer(result).data)
