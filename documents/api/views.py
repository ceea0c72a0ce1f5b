"""Thin HTTP edges over `documents.services` and `documents.selectors`."""

from __future__ import annotations

import re
import threading
import time

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from core import readiness
from core.body_limits import BodyLimit
from core.errors import PreconditionRequired, ValidationFailed
from core.openapi import error_responses
from core.pagination import StandardPagination
from documents import selectors, services
from documents.downloads import original_file_response
from documents.uploads import FileTooLarge

from .permissions import MayUpload
from .serializers import (
    DocumentFilterSerializer,
    DocumentSerializer,
    DocumentUploadSerializer,
    KnowledgeBaseSerializer,
    RejectSerializer,
)

IF_MATCH = OpenApiParameter(
    "If-Match",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    required=True,
    description="The document's current lock_version.",
)
UPLOAD_KNOWLEDGE_BASE = OpenApiParameter(
    "knowledge_base_id",
    OpenApiTypes.STR,
    OpenApiParameter.QUERY,
    required=False,
    description=(
        "The knowledge base to upload to, instead of (or equal to) the form field: "
        "a caller who is not its editor is refused before the file is read."
    ),
)
# The file, and up to 64 KiB for the form around it (names, boundaries); its size
# must be declared, to be checked before a byte of it is read.
UPLOAD_BODY = BodyLimit(
    lambda: settings.MAX_UPLOAD_BYTES + 64 * 1024,
    error_code=FileTooLarge.error_code,
    length_required=True,
)
_IF_MATCH_VALUE = re.compile(r'^\s*(?:W/)?"?(\d+)"?\s*$')


def expected_lock_version(request) -> int:
    raw = request.headers.get("If-Match")
    if raw is None:
        raise PreconditionRequired()
    match = _IF_MATCH_VALUE.match(raw)
    if match is None:
        raise ValidationFailed("If-Match must be the document's lock_version.")
    return int(match.group(1))


def _database_check() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception:
        return "unavailable"
    return "ok"


def _migrations_check() -> str:
    try:
        executor = MigrationExecutor(connection)
        plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    except Exception:
        return "unavailable"
    return "ok" if not plan else "pending"


def _storage_check() -> str:
    try:
        name = default_storage.save("health/probe", ContentFile(b"ok"))
        default_storage.delete(name)
    except Exception:
        return "unwritable"
    return "ok"


class _OpenView(APIView):
    authentication_classes = []
    permission_classes = [AllowAny]


class HealthView(_OpenView):
    @extend_schema(
        responses={200: OpenApiTypes.OBJECT, 503: OpenApiTypes.OBJECT},
        summary="Status and database check",
    )
    def get(self, request):
        database = _database_check()
        healthy = database == "ok"
        return Response(
            {"status": "ok" if healthy else "degraded", "database": database},
            status=status.HTTP_200_OK if healthy else 503,
        )


class LivenessView(_OpenView):
    @extend_schema(
        responses={200: OpenApiTypes.OBJECT},
        summary="Liveness: the process answers (no dependencies checked)",
    )
    def get(self, request):
        return Response({"status": "ok"})


def _dependency_checks() -> dict[str, str]:
    checks = {"database": _database_check()}
    checks["migrations"] = (
        _migrations_check() if checks["database"] == "ok" else "unknown"
    )
    checks["storage"] = _storage_check()
    return checks


def _readiness(dependencies: dict[str, str]) -> tuple[dict, int]:
    """The dependencies' checks (reused a while), and the process's own, which
    cost nothing (a search warm-up under way)."""
    checks = {**dependencies, **readiness.required_checks()}
    ready = all(value in readiness.READY_STATES for value in checks.values())
    warming = readiness.WARMING in checks.values()
    # Reported, not required (OCR: only workers read scans, and text still works).
    checks.update(readiness.reported_checks())
    state = "ready" if ready else "warming" if warming else "not_ready"
    body = {"status": state, "checks": checks}
    hints = readiness.hints_for(checks)
    if hints:
        body["hints"] = hints
    return body, status.HTTP_200_OK if ready else 503


class _RecentReport:
    """The last readiness report, reused for `READINESS_CACHE_SECONDS`.

    Anonymous callers would otherwise make every request query the database and
    write to storage; callers that arrive together wait for one check.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._report: dict[str, str] | None = None
        self._taken_at = 0.0

    def get(self) -> dict[str, str]:
        with self._lock:
            age = time.monotonic() - self._taken_at
            if self._report is None or age >= settings.READINESS_CACHE_SECONDS:
                self._report = _dependency_checks()
                self._taken_at = time.monotonic()
            return self._report


_recent_readiness = _RecentReport()


class ReadinessView(_OpenView):
    @extend_schema(
        responses={200: OpenApiTypes.OBJECT, 503: OpenApiTypes.OBJECT},
        summary="Readiness: database reachable, migrations applied, storage writable",
    )
    def get(self, request):
        body, code = _readiness(_recent_readiness.get())
        return Response(body, status=code)


class KnowledgeBaseListView(APIView):
    @extend_schema(
        responses={200: KnowledgeBaseSerializer(many=True), **error_responses(401)},
        summary="The caller's knowledge bases and role in each",
    )
    def get(self, request):
        knowledge_bases = selectors.knowledge_bases_for(request.user)
        return Response(KnowledgeBaseSerializer(knowledge_bases, many=True).data)


class DocumentListView(APIView):
    parser_classes = [MultiPartParser, FormParser]
    # Refused from the Content-Length before the body (core.middleware).
    request_body_limits = {"POST": UPLOAD_BODY}
    permission_classes = [IsAuthenticated, MayUpload]

    @property
    def throttle_scope(self) -> str | None:
        # Listing is cheap; an upload stores a file and queues a parse.
        return "upload" if self.request.method == "POST" else None

    @extend_schema(
        parameters=[DocumentFilterSerializer],
        responses={200: DocumentSerializer(many=True), **error_responses(401, 422)},
        summary="Documents in the caller's knowledge bases",
    )
    def get(self, request):
        filters = DocumentFilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        documents = selectors.documents_visible_to(request.user).order_by(
            "-created_at", "id"
        )
        if "knowledge_base_id" in filters.validated_data:
            documents = documents.filter(
                knowledge_base_id=filters.validated_data["knowledge_base_id"]
            )
        if "status" in filters.validated_data:
            documents = documents.filter(status=filters.validated_data["status"])
        paginator = StandardPagination()
        page = paginator.paginate_queryset(documents, request, view=self)
        return paginator.get_paginated_response(
            DocumentSerializer(page, many=True).data
        )

    @extend_schema(
        request={"multipart/form-data": DocumentUploadSerializer},
        parameters=[UPLOAD_KNOWLEDGE_BASE],
        responses={
            201: DocumentSerializer,
            **error_responses(401, 403, 404, 411, 413, 415, 422, 429),
        },
        summary="Upload a file as a new draft document",
    )
    def post(self, request):
        serializer = DocumentUploadSerializer(
            data=request.data,
            context={
                "query_knowledge_base_id": request.query_params.get("knowledge_base_id")
            },
        )
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        document = services.document_upload(
            user=request.user,
            knowledge_base_id=data["knowledge_base_id"],
            uploaded_file=data["file"],
            family_id=data.get("document_family_id"),
            version=data.get("version"),
        )
        return Response(
            DocumentSerializer(document).data, status=status.HTTP_201_CREATED
        )


class DocumentDetailView(APIView):
    @extend_schema(
        responses={200: DocumentSerializer, **error_responses(401, 404)},
        summary="One document",
    )
    def get(self, request, document_id):
        document = selectors.visible_document(request.user, document_id)
        response = Response(DocumentSerializer(document).data)
        response["ETag"] = f'"{document.lock_version}"'
        return response


class DocumentFileView(APIView):
    @extend_schema(
        responses={
            (200, "application/octet-stream"): OpenApiTypes.BINARY,
            **error_responses(401, 404),
        },
        summary="Download the original file",
    )
    def get(self, request, document_id):
        document = selectors.visible_document(request.user, document_id)
        return original_file_response(document)


class DocumentPublishView(APIView):
    @extend_schema(
        request=None,
        parameters=[IF_MATCH],
        responses={200: DocumentSerializer, **error_responses(401, 403, 404, 409, 428)},
        description=(
            "Refused with 403 separation_of_duties when the caller uploaded this "
            "version (REVIEW_REQUIRE_SECOND_PERSON)."
        ),
        summary="Publish a reviewed document (archives the previous version)",
    )
    def post(self, request, document_id):
        lock_version = expected_lock_version(request)
        document = services.document_publish(
            user=request.user,
            document_id=document_id,
            expected_lock_version=lock_version,
        )
        return Response(DocumentSerializer(document).data)


class DocumentRejectView(APIView):
    @extend_schema(
        request=RejectSerializer,
        parameters=[IF_MATCH],
        responses={
            200: DocumentSerializer,
            **error_responses(401, 403, 404, 409, 422, 428),
        },
        summary="Send a document under review back to draft with a reason",
    )
    def post(self, request, document_id):
        lock_version = expected_lock_version(request)
        serializer = RejectSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        document = services.document_reject(
            user=request.user,
            document_id=document_id,
            expected_lock_version=lock_version,
            reason=serializer.validated_data["reason"],
        )
        return Response(DocumentSerializer(document).data)
