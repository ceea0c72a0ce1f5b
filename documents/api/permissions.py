"""Permissions decided before a request's body is read."""

from __future__ import annotations

from rest_framework.permissions import BasePermission

from core.errors import PermissionDenied
from documents import selectors
from documents.models import Role


class MayUpload(BasePermission):
    """Refuses an upload from the headers alone, so a client that may not upload
    cannot make the server read and spool a large body first.

    With `?knowledge_base_id=` the caller's exact role there is checked now (`404`
    for a non-member, `403` below editor); without it, the caller must be editor
    somewhere, and the service checks the form field's knowledge base after the body
    is read. Only the query string and the authenticated user are looked at, never
    `request.data`.
    """

    def has_permission(self, request, view) -> bool:
        if request.method != "POST":
            return True
        knowledge_base_id = request.query_params.get("knowledge_base_id")
        if knowledge_base_id:
            selectors.require_role(request.user, knowledge_base_id, Role.EDITOR)
        elif not selectors.knowledge_base_ids_for(
            request.user, minimum_role=Role.EDITOR
        ):
            raise PermissionDenied(
                "Uploading needs the editor role in a knowledge base."
            )
        return True
