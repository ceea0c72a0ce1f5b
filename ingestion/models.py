"""Ingestion tasks (one row per execution history) and the transactional outbox."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from documents.models import Document


class TaskStatus(models.TextChoices):
    """How one execution is going. See `ingestion/transitions.py`."""

    QUEUED = "queued", "Queued"
    """Waiting for a worker."""
    RUNNING = "running", "Running"
    """A worker holds it (worker_id, claim_token)."""
    SUCCEEDED = "succeeded", "Succeeded"
    """Chunks written; the document waits for review."""
    FAILED = "failed", "Failed"
    """Stopped with a stable error_code; may be retried by a person."""
    CANCELLED = "cancelled", "Cancelled"
    """Given up by a person; the document went back to draft."""
    RETRY_WAIT = "retry_wait", "Waiting to retry"
    """Claimable like queued once available_at has passed (automatic backoff)."""


CLAIMABLE_STATUSES = (TaskStatus.QUEUED, TaskStatus.RETRY_WAIT)
ACTIVE_STATUSES = (TaskStatus.QUEUED, TaskStatus.RUNNING, TaskStatus.RETRY_WAIT)
FINISHED_STATUSES = (TaskStatus.SUCCEEDED, TaskStatus.FAILED, TaskStatus.CANCELLED)

# The order workers claim in: each submitter's turns, fairly interleaved (see
# `enqueue.next_turn`), then oldest first within a turn.
CLAIM_ORDER = ("turn", "available_at", "created_at")

# The length of a task's error_detail and an event's last_error; longer texts are cut.
ERROR_DETAIL_LIMIT = 500


class TaskLane(models.TextChoices):
    """How much work a task is, as far as cheap facts tell: which workers take it
    (`run_ingestion_worker --lanes`). See `ingestion/lanes.py`."""

    LIGHT = "light", "Light"
    """Small as far as is known: text formats, small files, PDFs of few pages
    that need no OCR."""
    HEAVY = "heavy", "Heavy"
    """Needs OCR (an image, a scanned page), or has many pages or bytes."""


class TaskStage(models.TextChoices):
    """Where a running execution is; progress is `completed/total` of the stage."""

    DOWNLOAD = "download", "Download"
    """Reading the original from storage."""
    PARSE = "parse", "Parse"
    """Extracting text and cutting it into chunks (and, with the local embedder,
    embedding them: the parser processes do all three)."""
    EMBEDDING = "embedding", "Embedding"
    """Embedding chunks in the worker, in batches (total = number of chunks)."""
    INDEXING = "indexing", "Indexing"
    """Writing chunks and vectors."""
    FINALIZING = "finalizing", "Finalizing"
    """Moving task and document to their final states."""


class ErrorCode(models.TextChoices):
    """Stable reasons a task failed (or, on `retry_wait`, why the last run stopped).

    Clients may branch on them. `TRANSIENT_ERROR_CODES` are retried automatically.
    """

    PARSE_ERROR = "parse_error", "The file could not be parsed (damaged or mislabelled)"
    OBJECT_READ_ERROR = "object_read_error", "The original could not be read"
    EMPTY_DOCUMENT = "empty_document", "No indexable text in the file"
    DOCUMENT_NOT_FOUND = "document_not_found", "The task's document no longer exists"
    INTERNAL_ERROR = "internal_error", "Unexpected error in the worker"
    PROVIDER_UNAVAILABLE = "provider_unavailable", "Embedding provider unavailable"
    DATABASE_UNAVAILABLE = "database_unavailable", "The database connection failed"
    LEASE_EXPIRED = "lease_expired", "The worker stopped renewing its lease"
    FILE_TOO_LARGE = "file_too_large", "Too large to parse (size or memory limit)"
    TOO_MANY_PAGES = "too_many_pages", "More pages than the PDF page limit"
    PARSE_TIMEOUT = "parse_timeout", "Parsing took longer than the time limit"
    PASSWORD_PROTECTED = "password_protected", "The file is protected by a password"
    OCR_UNAVAILABLE = "ocr_unavailable", "The file needs OCR, which is not available"
    TEXT_TOO_LARGE = "text_too_large", "More text than one document may produce"
    TOO_MANY_CHUNKS = "too_many_chunks", "More chunks than one document may produce"
    WORK_BUDGET_EXCEEDED = (
        "work_budget_exceeded",
        "The document used up its work budget (CPU seconds or OCR pages)",
    )


# Failures that may go away by themselves: the task waits (`retry_wait`) and runs
# again, up to INGESTION_MAX_ATTEMPTS runs. Every other code fails at once.
TRANSIENT_ERROR_CODES = frozenset(
    {
        ErrorCode.OBJECT_READ_ERROR,
        ErrorCode.PROVIDER_UNAVAILABLE,
        ErrorCode.DATABASE_UNAVAILABLE,
    }
)


class IngestionTaskQuerySet(models.QuerySet):
    def claimable(self, now=None) -> IngestionTaskQuerySet:
        return self.filter(
            status__in=CLAIMABLE_STATUSES, available_at__lte=now or timezone.now()
        )

    def active(self) -> IngestionTaskQuerySet:
        return self.filter(status__in=ACTIVE_STATUSES)

    def running(self) -> IngestionTaskQuerySet:
        return self.filter(status=TaskStatus.RUNNING)

    def lease_expired(self, now=None) -> IngestionTaskQuerySet:
        # A running task without a lease has no worker renewing it.
        return self.running().filter(
            Q(lease_expires_at__lt=now or timezone.now())
            | Q(lease_expires_at__isnull=True)
        )


class IngestionTask(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # No database constraint: a task must outlive a deleted document row so the
    # worker can report `document_not_found` instead of vanishing.
    document = models.ForeignKey(
        Document,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        related_name="ingestion_tasks",
    )
    # Who queued this run (submit or retry): the unit of fair claiming, so one
    # person's flood of uploads waits its turns behind everyone else's. A key
    # more than a relation: it outlives a deleted user, as `document` does.
    submitted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        db_index=False,
        null=True,
        blank=True,
        related_name="+",
    )
    # The submitter's place in the round: each task entering the queue takes the
    # turn served now or the one after its submitter's last active task.
    turn = models.BigIntegerField(default=0)
    status = models.CharField(
        max_length=20, choices=TaskStatus.choices, default=TaskStatus.QUEUED
    )
    # Set at submit from the file's type and size, moved to heavy by the first
    # run that finds pages to OCR or many pages (`ingestion/lanes.py`).
    lane = models.CharField(
        max_length=10, choices=TaskLane.choices, default=TaskLane.LIGHT
    )
    stage = models.CharField(
        max_length=20, choices=TaskStage.choices, default=TaskStage.DOWNLOAD
    )
    completed = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    # Seconds per finished stage of the latest run, e.g. {"parse": 0.42}; written
    # with the progress, read by /metrics.
    stage_seconds = models.JSONField(default=dict, blank=True)
    attempt = models.PositiveIntegerField(default=0)
    # Work spent on this document by every run so far (`ingestion/budget.py`):
    # kept across retries, reclaims and releases, so that no file can hold the
    # workers past INGESTION_WORK_BUDGET_* however often it runs.
    work_cpu_seconds = models.FloatField(default=0.0)
    work_ocr_pages = models.PositiveIntegerField(default=0)
    # NULL, not "", is the API's "no error" and "no worker".
    error_code = models.CharField(max_length=40, null=True, blank=True)  # noqa: DJ001
    error_detail = models.CharField(  # noqa: DJ001
        max_length=ERROR_DETAIL_LIMIT, null=True, blank=True
    )
    worker_id = models.CharField(max_length=200, null=True, blank=True)  # noqa: DJ001
    claim_token = models.UUIDField(null=True, blank=True, editable=False)
    available_at = models.DateTimeField(default=timezone.now)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # When a worker last gave it back at a checkpoint for other tasks' turns
    # (`yield_turn`): queued with it set is "waiting for its next turn". Cleared
    # by release and retry, which start it afresh.
    yielded_at = models.DateTimeField(null=True, blank=True)
    # How many times it was given back so (each run after the first resumes).
    yields = models.PositiveIntegerField(default=0)

    objects = IngestionTaskQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(
                fields=list(CLAIM_ORDER),
                condition=Q(status__in=["queued", "retry_wait"]),
                name="ingestion_claim_order_idx",
            ),
            # A worker of one lane claims in claim order within it.
            models.Index(
                fields=["lane", *CLAIM_ORDER],
                condition=Q(status__in=["queued", "retry_wait"]),
                name="ingestion_lane_claim_order_idx",
            ),
            models.Index(
                fields=["submitted_by", "turn"],
                condition=Q(status__in=["queued", "running", "retry_wait"]),
                name="ingestion_active_turn_idx",
            ),
            models.Index(fields=["document", "-created_at"]),
            models.Index(fields=["status"]),
        ]

    def __str__(self) -> str:
        return f"task {self.pk} ({self.status})"

    @property
    def waiting_for_turn(self) -> bool:
        """Queued again after its turn was over, progress kept (`yield_turn`)."""
        return self.status == TaskStatus.QUEUED and self.yielded_at is not None

    @property
    def progress_percent(self) -> int:
        if self.status == TaskStatus.SUCCEEDED:
            return 100
        return int(100 * self.completed / self.total) if self.total else 0


class OutboxEventQuerySet(models.QuerySet):
    def undelivered(self) -> OutboxEventQuerySet:
        return self.filter(delivered_at__isnull=True)


class OutboxEvent(models.Model):
    """An event written in the same transaction as the change it announces.

    `relay_outbox` (`ingestion/outbox.py`) publishes it once committed and sets
    `delivered_at`; a failed publish counts in `attempts` and `last_error`.
    """

    topic = models.CharField(max_length=100)
    payload = models.JSONField()
    created_at = models.DateTimeField(default=timezone.now)
    delivered_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.CharField(max_length=ERROR_DETAIL_LIMIT, blank=True)

    objects = OutboxEventQuerySet.as_manager()

    class Meta:
        ordering = ["id"]
        indexes = [
            models.Index(
                fields=["id"],
                condition=Q(delivered_at__isnull=True),
                name="outbox_undelivered_idx",
            )
        ]

    def __str__(self) -> str:
        return f"{self.topic} #{self.pk}"


class WorkerCounter(models.Model):
    """Events that happen inside worker processes, kept so any API host can export them.

    One row per (name, worker): workers never contend for the same row. `/metrics`
    sums them per name.
    """

    name = models.CharField(max_length=50)
    worker_id = models.CharField(max_length=200)
    value = models.PositiveBigIntegerField(default=0)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["name", "worker_id"], name="one_counter_per_name_worker"
            )
        ]

    def __str__(self) -> str:
        return f"{self.name}[{self.worker_id}] = {self.value}"
