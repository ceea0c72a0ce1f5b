"""Ingestion tasks for operators and reviewers: progress, errors, Cancel and Retry."""

from __future__ import annotations

import uuid

from django.contrib import admin, messages
from django.http import JsonResponse
from django.urls import path, reverse
from django.utils.html import format_html

from core.errors import DomainError
from documents.admin import MemberKnowledgeBaseFilter, MemberScopedAdmin

from . import selectors, services
from .models import IngestionTask
from .progress import failure_html, progress_html, progress_payload

MAX_POLLED_TASKS = 200


@admin.register(IngestionTask)
class IngestionTaskAdmin(MemberScopedAdmin):
    list_display = [
        "short_id",
        "document_link",
        "knowledge_base",
        # Status and stage are inside the bar's cell, which refreshes itself.
        "progress",
        "lane",
        "attempt",
        "failure",
        "worker_id",
        "created_at",
        "started_at",
        "finished_at",
    ]
    list_filter = [
        "status",
        "lane",
        "stage",
        "error_code",
        ("document__knowledge_base", MemberKnowledgeBaseFilter),
    ]
    search_fields = ["worker_id", "document__filename"]
    list_select_related = ["document"]
    actions = ["cancel_tasks", "retry_tasks"]
    fields = [
        "id",
        "document_link",
        "knowledge_base",
        "status",
        "stage",
        "progress",
        "stage_timings",
        "lane",
        "attempt",
        "work_cpu_seconds",
        "work_ocr_pages",
        "failure",
        "error_detail",
        "worker_id",
        "available_at",
        "lease_expires_at",
        "created_at",
        "updated_at",
        "started_at",
        "finished_at",
    ]
    readonly_fields = fields

    class Media:
        js = ["ingestion/progress.js"]

    def get_urls(self):
        progress = path(
            "progress/",
            self.admin_site.admin_view(self.progress_view),
            name="ingestion_ingestiontask_progress",
        )
        return [progress, *super().get_urls()]

    def progress_view(self, request):
        """`?ids=a,b,c` -> the progress of those tasks the caller may see."""
        if not self.has_view_permission(request):
            return JsonResponse({"tasks": []}, status=403)
        ids = [i for i in request.GET.get("ids", "").split(",") if i][:MAX_POLLED_TASKS]
        valid = []
        for task_id in ids:
            try:
                valid.append(str(uuid.UUID(task_id)))
            except ValueError:
                continue
        tasks = self.get_queryset(request).filter(pk__in=valid)
        return JsonResponse({"tasks": [progress_payload(task) for task in tasks]})

    def visible_to(self, user):
        return selectors.tasks_visible_to(user)

    @admin.display(description="Task")
    def short_id(self, task: IngestionTask) -> str:
        return str(task.pk)[:8]

    @admin.display(description="Document")
    def document_link(self, task: IngestionTask) -> str:
        url = reverse("admin:documents_document_change", args=[task.document_id])
        return format_html('<a href="{}">{}</a>', url, task.document)

    @admin.display(description="Knowledge base")
    def knowledge_base(self, task: IngestionTask) -> str:
        return task.document.knowledge_base_id

    @admin.display(description="Status and progress", ordering="status")
    def progress(self, task: IngestionTask) -> str:
        return progress_html(task)

    @admin.display(description="Seconds per stage (latest run)")
    def stage_timings(self, task: IngestionTask) -> str:
        timings = task.stage_seconds or {}
        return ", ".join(f"{stage} {seconds:.2f}" for stage, seconds in timings.items())

    @admin.display(description="Error", ordering="error_code")
    def failure(self, task: IngestionTask) -> str:
        return failure_html(task.error_code)

    @admin.action(description="Cancel selected tasks")
    def cancel_tasks(self, request, queryset):
        self._apply(request, queryset, services.ingestion_task_cancel, "cancelled")

    @admin.action(description="Retry selected failed tasks")
    def retry_tasks(self, request, queryset):
        self._apply(request, queryset, services.ingestion_task_retry, "queued again")

    def _apply(self, request, queryset, service, done: str) -> None:
        for task in queryset:
            try:
                service(user=request.user, task_id=task.pk)
            except DomainError as error:
                self.message_user(
                    request,
                    f"{task.document} (task {str(task.pk)[:8]}): not {done} "
                    f"({error.error_code}): {error.detail}",
                    messages.ERROR,
                )
            else:
                self.message_user(
                    request,
                    f"{task.document} (task {str(task.pk)[:8]}): {done}.",
                    messages.SUCCESS,
                )
