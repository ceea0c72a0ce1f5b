"""Knowledge bases, who may do what in them, and the documents they hold."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q


class Role(models.TextChoices):
    """A member's role in one knowledge base; each role includes the ones before."""

    VIEWER = "viewer", "Viewer"
    """Searches and chats."""
    EDITOR = "editor", "Editor"
    """Also uploads and submits documents."""
    REVIEWER = "reviewer", "Reviewer"
    """Also publishes and rejects documents."""

    @classmethod
    def rank(cls, role: str) -> int:
        return [cls.VIEWER, cls.EDITOR, cls.REVIEWER].index(role)


class KnowledgeBase(models.Model):
    id = models.SlugField(primary_key=True, max_length=64)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    # Grows whenever the set of published chunks changes (publish, archive).
    index_version = models.PositiveBigIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="Membership", related_name="knowledge_bases"
    )

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.id})"


class Membership(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    knowledge_base = models.ForeignKey(
        KnowledgeBase, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.VIEWER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["user", "knowledge_base"], name="one_membership_per_user_kb"
            )
        ]
        ordering = ["knowledge_base_id", "user_id"]

    def __str__(self) -> str:
        return f"{self.user} is {self.role} of {self.knowledge_base_id}"


class DocumentStatus(models.TextChoices):
    """Whether a document version may be searched. See `documents/transitions.py`."""

    DRAFT = "draft", "Draft"
    """Uploaded (or sent back); may be submitted for ingestion."""
    PROCESSING = "processing", "Processing"
    """An ingestion task is queued or running for it."""
    REVIEW_PENDING = "review_pending", "Review pending"
    """Ingested; waits for a reviewer. Not searchable."""
    PUBLISHED = "published", "Published"
    """Searchable. At most one version per family."""
    ARCHIVED = "archived", "Archived"
    """Replaced by a newer published version. Not searchable."""
    FAILED = "failed", "Failed"
    """Ingestion failed; the task says why. May be retried."""


class DocumentQuerySet(models.QuerySet):
    def published(self) -> DocumentQuerySet:
        return self.filter(status=DocumentStatus.PUBLISHED)

    def in_knowledge_bases(self, knowledge_base_ids) -> DocumentQuerySet:
        return self.filter(knowledge_base_id__in=knowledge_base_ids)


class Document(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    knowledge_base = models.ForeignKey(
        KnowledgeBase, on_delete=models.PROTECT, related_name="documents"
    )
    family_id = models.UUIDField(default=uuid.uuid4, db_index=True)
    version = models.PositiveIntegerField(default=1)
    filename = models.CharField(max_length=255)
    content_type = models.CharField(max_length=100)
    size_bytes = models.PositiveBigIntegerField()
    sha256 = models.CharField(max_length=64)
    storage_key = models.CharField(max_length=500, editable=False)
    status = models.CharField(
        max_length=20,
        choices=DocumentStatus.choices,
        default=DocumentStatus.DRAFT,
        db_index=True,
    )
    lock_version = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        related_name="documents",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    published_at = models.DateTimeField(null=True, blank=True)
    review_note = models.TextField(blank=True)
    # The last publish or reject: a stale review page names who decided and when.
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)

    objects = DocumentQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["family_id", "version"], name="one_document_per_family_version"
            ),
            models.UniqueConstraint(
                fields=["family_id"],
                condition=Q(status="published"),
                name="one_published_version_per_family",
            ),
        ]
        indexes = [models.Index(fields=["knowledge_base", "status"])]

    def __str__(self) -> str:
        return f"{self.filename} v{self.version}"
