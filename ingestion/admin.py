"""Ingestion tasks for operators and reviewers: progress, errors, Cancel and Retry."""

from __future__ import annotations

from django.contrib import admin, messages
from django.urls import reverse
from django.utils.html import format_html

from config.errors import DomainError
from documents.admin import MemberScopedAdmin

from . import services
from .models import IngestionTask


@admin.register(IngestionTask)
class IngestionTaskAdmin(MemberScopedAdmin):
    knowledge_base_field = "document__knowledge_base_id"
    list_display = [
        "short_id",
        "document_link",
        "knowledge_base",
        "status",
        "stage",
        "progress",
        "attempt",
        "error_code",
        "worker_id",
        "created_at",
        "started_at",
        "finished_at",
    ]
    list_filter = ["status", "stage", "error_code", "document__knowledge_base"]
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
        "attempt",
        "error_code",
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

    def knowledge_base_of(self, task: IngestionTask) -> str:
        return task.document.knowledge_base_id

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

    @admin.display(description="Progress")
    def progress(self, task: IngestionTask) -> str:
        return format_html(
            '<progress value="{}" max="100" title="{}%"></progress> {} {}/{}',
            task.progress_percent,
            task.progress_percent,
            task.stage,
            task.completed,
            task.total,
        )

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
