"""A task's progress as HTML (admin pages) and as JSON (the admin's refresh poll)."""

from __future__ import annotations

from django.urls import reverse
from django.utils.html import format_html

from .errors import describe, error_help
from .models import ACTIVE_STATUSES, IngestionTask


def progress_payload(task: IngestionTask) -> dict:
    return {
        "id": str(task.pk),
        "status": task.status,
        "status_display": task.get_status_display(),
        "stage": task.stage,
        "completed": task.completed,
        "total": task.total,
        "percent": task.progress_percent,
        "active": task.status in ACTIVE_STATUSES,
        "error": describe(task.error_code),
        "status_text": status_text(task),
    }


def progress_html(task: IngestionTask) -> str:
    """A `<progress>` bar that `ingestion/progress.js` refreshes while it runs."""
    return format_html(
        '<span class="task-progress" data-task-id="{}" data-progress-url="{}" '
        'data-active="{}"><progress value="{}" max="100" title="{}%"></progress> '
        '<span class="task-status">{}</span> '
        '<span class="task-stage">{} {}/{}</span></span>',
        task.pk,
        reverse("admin:ingestion_ingestiontask_progress"),
        "true" if task.status in ACTIVE_STATUSES else "false",
        task.progress_percent,
        task.progress_percent,
        status_text(task),
        task.stage,
        task.completed,
        task.total,
    )


def status_text(task: IngestionTask) -> str:
    # A yielded task is queued with its progress kept: say why it is not moving.
    return "waiting for its next turn" if task.waiting_for_turn else task.status


def failure_html(code: str | None) -> str:
    """The code, what it means and what to do next; a dash when there is no error."""
    help_ = error_help(code)
    if help_ is None:
        return "—"
    return format_html(
        '<span class="task-error"><code>{}</code>: {} <strong>{}</strong></span>',
        code,
        help_.sentence,
        help_.next_step,
    )
