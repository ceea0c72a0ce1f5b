"""Reads that carry rules: who sees which knowledge base and document."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from django.db.models import OuterRef, Q, QuerySet, Subquery

from core.errors import NotFound, PermissionDenied
from core.prepared import PreparedRead

from .models import Document, DocumentStatus, KnowledgeBase, Membership, Role

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User


def knowledge_bases_for(user: User | AnonymousUser) -> QuerySet[KnowledgeBase]:
    """The caller's knowledge bases, each annotated with `role`."""
    if not user.is_authenticated:
        return KnowledgeBase.objects.none()
    role = Membership.objects.filter(user=user, knowledge_base=OuterRef("pk")).values(
        "role"
    )[:1]
    return KnowledgeBase.objects.filter(memberships__user=user).annotate(
        role=Subquery(role)
    )


def knowledge_base_ids_query(
    user: User | AnonymousUser, *, minimum_role: str = Role.VIEWER
) -> QuerySet[Membership]:
    """`knowledge_base_ids_for` as a subquery, for a read that stays one query."""
    if not user.is_authenticated:
        return Membership.objects.none().values("knowledge_base_id")
    allowed = [r for r in Role.values if Role.rank(r) >= Role.rank(minimum_role)]
    return Membership.objects.filter(user=user, role__in=allowed).values(
        "knowledge_base_id"
    )


def knowledge_base_ids_for(
    user: User | AnonymousUser, *, minimum_role: str = Role.VIEWER
) -> list[str]:
    query = knowledge_base_ids_query(user, minimum_role=minimum_role)
    return list(query.values_list("knowledge_base_id", flat=True))


_INDEX_VERSIONS = PreparedRead(
    lambda user_id: (
        Membership.objects.filter(user_id=user_id)
        .order_by()
        .values_list("knowledge_base_id", "knowledge_base__index_version")
    ),
    ("knowledge_base_id", "index_version"),
)


def index_versions_for(user: User | AnonymousUser) -> dict[str, int]:
    """The caller's knowledge bases (any role) and their `index_version`, in one
    query: what a search needs to know before it reads an index."""
    if not user.is_authenticated:
        return {}
    return dict(_INDEX_VERSIONS.rows(user.pk))


def role_in(user: User | AnonymousUser, knowledge_base_id: str) -> str | None:
    if not user.is_authenticated:
        return None
    return (
        Membership.objects.filter(user=user, knowledge_base_id=knowledge_base_id)
        .values_list("role", flat=True)
        .first()
    )


def require_role(
    user: User | AnonymousUser, knowledge_base_id: str, minimum_role: str
) -> str:
    """The caller's role; `NotFound` for non-members, `PermissionDenied` if too low."""
    role = role_in(user, knowledge_base_id)
    if role is None:
        raise NotFound("Knowledge base not found.")
    if Role.rank(role) < Role.rank(minimum_role):
        raise PermissionDenied(
            f"This needs the {minimum_role} role in {knowledge_base_id}; "
            f"you are {role}."
        )
    return role


def documents_visible_to(user: User | AnonymousUser) -> QuerySet[Document]:
    """Every version for editors and reviewers; the published ones for viewers.

    A viewer reads what the knowledge base answers from, not drafts or rejected
    versions that no reviewer has passed.
    """
    every_version = knowledge_base_ids_for(user, minimum_role=Role.EDITOR)
    members = knowledge_base_ids_for(user)
    return Document.objects.filter(
        Q(knowledge_base_id__in=every_version)
        | Q(knowledge_base_id__in=members, status=DocumentStatus.PUBLISHED)
    ).select_related("created_by")


def visible_document(
    user: User | AnonymousUser, document_id: uuid.UUID | str
) -> Document:
    document = documents_visible_to(user).filter(pk=document_id).first()
    if document is None:
        raise NotFound("Document not found.")
    return document


def member_document(
    user: User | AnonymousUser, document_id: uuid.UUID | str
) -> Document:
    """Any version in one of the caller's knowledge bases, for an action whose
    role check follows: a viewer who names a draft is told the role it needs."""
    document = (
        Document.objects.filter(
            pk=document_id, knowledge_base_id__in=knowledge_base_ids_for(user)
        )
        .select_related("created_by")
        .first()
    )
    if document is None:
        raise NotFound("Document not found.")
    return document
