"""The reviewers' workplace: documents to publish or reject, with their ingestion
tasks and what changed from the published version.

Actions call the same services as the API, so role and lock checks are the same.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib import admin, messages
from django.http import Http404
from django.template.loader import render_to_string
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from core.errors import DomainError
from documents import selectors as document_selectors
from documents import services
from documents.admin import MemberKnowledgeBaseFilter, MemberScopedAdmin
from documents.downloads import original_file_response
from documents.models import Document, DocumentStatus
from ingestion.models import IngestionTask
from ingestion.progress import failure_html, progress_html

from . import changes


class IngestionTaskInline(admin.TabularInline):
    """The document's execution history, newest first (the first row is the latest)."""

    model = IngestionTask
    extra = 0
    can_delete = False
    show_change_link = True
    ordering = ["-created_at"]
    fields = [
        "status",
        "stage",
        "progress",
        "attempt",
        "failure",
        "error_detail",
        "worker_id",
        "created_at",
        "finished_at",
    ]
    readonly_fields = fields
    verbose_name_plural = "Ingestion tasks (latest first)"

    @admin.display(description="Progress")
    def progress(self, task: IngestionTask) -> str:
        return progress_html(task)

    @admin.display(description="Error")
    def failure(self, task: IngestionTask) -> str:
        return failure_html(task.error_code)

    def has_view_permission(self, request, obj=None) -> bool:
        return True  # the document page is already scoped to the reviewer's KBs

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Document)
class DocumentAdmin(MemberScopedAdmin):
    list_display = [
        "filename",
        "knowledge_base",
        "version",
        "status",
        "changes_vs_published",
        "lock_version",
        "created_by",
        "created_at",
    ]
    list_filter = ["status", ("knowledge_base", MemberKnowledgeBaseFilter)]
    search_fields = ["filename", "sha256"]
    list_select_related = ["knowledge_base", "created_by"]
    date_hierarchy = "created_at"
    actions = ["publish_documents", "reject_documents"]
    fields = [
        "id",
        "knowledge_base",
        "filename",
        "download",
        "content_type",
        "size_bytes",
        "sha256",
        "family_id",
        "version",
        "status",
        "latest_task",
        "lock_version",
        "review_note",
        "created_by",
        "created_at",
        "updated_at",
        "published_at",
        "versions",
        "what_changed",
        "chunks",
    ]
    readonly_fields = fields
    inlines = [IngestionTaskInline]

    class Media:
        js = ["ingestion/progress.js"]

    def visible_to(self, user):
        return document_selectors.documents_visible_to(user)

    def get_queryset(self, request):
        return changes.with_published_version(super().get_queryset(request))

    def get_object(self, request, object_id, from_field=None):
        document = super().get_object(request, object_id, from_field)
        if document is not None:
            # The family as this caller may see it: a viewer is not told of drafts.
            document.family_versions = (
                self.get_queryset(request)
                .filter(family_id=document.family_id)
                .order_by("-version")
            )
        return document

    def get_urls(self):
        download = path(
            "<uuid:document_id>/download/",
            self.admin_site.admin_view(self.download_view),
            name="documents_document_download",
        )
        return [download, *super().get_urls()]

    @admin.display(description="Latest ingestion")
    def latest_task(self, document: Document) -> str:
        task = document.ingestion_tasks.order_by("-created_at").first()
        if task is None:
            return "never submitted"
        url = reverse("admin:ingestion_ingestiontask_change", args=[task.pk])
        return format_html(
            '<a href="{}">{}</a> {}, attempt {}<br>{}',
            url,
            task.get_status_display(),
            progress_html(task),
            task.attempt,
            failure_html(task.error_code) if task.error_code else "",
        )

    @admin.display(description="Versions of this document")
    def versions(self, document: Document) -> str:
        return render_to_string(
            "admin/documents/document/versions.html",
            {"versions": getattr(document, "family_versions", []), "current": document},
        )

    @admin.display(description="Changes vs published")
    def changes_vs_published(self, document: Document) -> str:
        if document.status != DocumentStatus.REVIEW_PENDING:
            return "—"
        summary = changes.change_summary(
            document, published_id=document.published_version_id
        )
        return summary.short if summary else "new"

    @admin.display(description="What changed from the published version")
    def what_changed(self, document: Document) -> str:
        return render_to_string(
            "admin/documents/document/changes.html",
            {
                "changes": changes.document_changes(document),
                "max_passages": changes.MAX_PASSAGES,
            },
        )

    @admin.display(description="Chunks")
    def chunks(self, document: Document) -> str:
        chunks = list(document.chunks.order_by("ordinal"))
        floor = settings.OCR_MIN_CONFIDENCE
        read_by_ocr = [c.ocr_confidence for c in chunks if c.ocr_confidence is not None]
        return render_to_string(
            "admin/documents/document/chunks.html",
            {
                "chunks": chunks,
                "ocr_chunks": len(read_by_ocr),
                "low_confidence": sum(c < floor for c in read_by_ocr),
                "ocr_floor": floor,
                "ocr_floor_percent": round(floor * 100),
            },
        )

    @admin.display(description="File")
    def download(self, document: Document) -> str:
        url = reverse("admin:documents_document_download", args=[document.pk])
        return format_html('<a href="{}">Download {}</a>', url, document.filename)

    def download_view(self, request, document_id):
        document = self.get_queryset(request).filter(pk=document_id).first()
        if document is None:
            raise Http404("Document not found.")
        return original_file_response(document)

    @admin.action(description="Publish selected documents")
    def publish_documents(self, request, queryset):
        return self._review(request, queryset, "publish")

    @admin.action(description="Reject selected documents (back to draft)")
    def reject_documents(self, request, queryset):
        return self._review(request, queryset, "reject")

    def _review(self, request, queryset, decision: str):
        """Confirm on a page that pins each row's lock_version, then apply per row."""
        documents = list(queryset.select_related("knowledge_base"))
        reason = request.POST.get("reason", "").strip()
        if "confirmed" not in request.POST or (decision == "reject" and not reason):
            return TemplateResponse(
                request,
                "admin/documents/document/review_confirmation.html",
                {
                    **self.admin_site.each_context(request),
                    "title": f"{decision.capitalize()} documents",
                    "decision": decision,
                    "documents": documents,
                    "needs_second_person": self._needs_second_person(
                        request, documents, decision
                    ),
                    "reason_missing": "confirmed" in request.POST,
                    "action": f"{decision}_documents",
                    "opts": self.model._meta,
                },
            )
        for document in documents:
            try:
                lock_version = int(request.POST[f"lock_{document.pk}"])
                if decision == "publish":
                    services.document_publish(
                        user=request.user,
                        document_id=document.pk,
                        expected_lock_version=lock_version,
                    )
                else:
                    services.document_reject(
                        user=request.user,
                        document_id=document.pk,
                        expected_lock_version=lock_version,
                        reason=reason,
                    )
            except (KeyError, ValueError):
                self.message_user(
                    request,
                    f"{document}: not {decision}ed, the confirmation was incomplete.",
                    messages.ERROR,
                )
            except DomainError as error:
                self.message_user(
                    request,
                    f"{document}: not {decision}ed "
                    f"({error.error_code}): {error.detail}",
                    messages.ERROR,
                )
            else:
                self.message_user(
                    request, f"{document}: {decision}ed.", messages.SUCCESS
                )
        return None

    def _needs_second_person(self, request, documents, decision: str) -> set:
        """The selected versions this reviewer uploaded: shown before they confirm."""
        if decision != "publish":
            return set()
        return {
            document.pk
            for document in documents
            if services.second_person_required(user=request.user, document=document)
        }
