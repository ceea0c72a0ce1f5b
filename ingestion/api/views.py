"""Thin HTTP edges over `ingestion.services` and `ingestion.selectors`."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from core.openapi import error_responses
from core.pagination import StandardPagination
from documents import selectors as document_selectors
from ingestion import selectors, services

from .serializers import IngestionTaskSerializer


class DocumentSubmitView(APIView):
    @extend_schema(
        request=None,
        responses={202: IngestionTaskSerializer, **error_responses(401, 403, 404, 409)},
        summary="Queue a draft document for ingestion (answers at once)",
    )
    def post(self, request, document_id):
        task = services.document_submit(user=request.user, document_id=document_id)
        return Response(
            IngestionTaskSerializer(task).data, status=status.HTTP_202_ACCEPTED
        )


class DocumentTaskListView(APIView):
    @extend_schema(
        responses={
            200: IngestionTaskSerializer(many=True),
            **error_responses(401, 404),
        },
        summary="A document's ingestion history, newest first",
    )
    def get(self, request, document_id):
        document = document_selectors.visible_document(request.user, document_id)
        tasks = document.ingestion_tasks.order_by("-created_at", "id")
        paginator = StandardPagination()
        page = paginator.paginate_queryset(tasks, request, view=self)
        return paginator.get_paginated_response(
            IngestionTaskSerializer(page, many=True).data
        )


class IngestionTaskDetailView(APIView):
    @extend_schema(
        responses={200: IngestionTaskSerializer, **error_responses(401, 404)},
        summary="One ingestion task with its stage and progress",
    )
    def get(self, request, task_id):
        task = selectors.visible_task(request.user, task_id)
        return Response(IngestionTaskSerializer(task).data)

    @extend_schema(
        responses={200: IngestionTaskSerializer, **error_responses(401, 403, 404, 409)},
        summary="Cancel a queued, running or waiting task (document back to draft)",
    )
    def delete(self, request, task_id):
        task = services.ingestion_task_cancel(user=request.user, task_id=task_id)
        return Response(IngestionTaskSerializer(task).data)


class IngestionTaskRetryView(APIView):
    @extend_schema(
        request=None,
        responses={202: IngestionTaskSerializer, **error_responses(401, 403, 404, 409)},
        summary="Queue a failed task again (same task row)",
    )
    def post(self, request, task_id):
        task = services.ingestion_task_retry(user=request.user, task_id=task_id)
        return Response(
            IngestionTaskSerializer(task).data, status=status.HTTP_202_ACCEPTED
        )
