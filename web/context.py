"""What every page's header needs: which pages the caller's roles open."""

from __future__ import annotations

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from documents.models import Role
from documents.selectors import knowledge_base_ids_for


def navigation(request: HttpRequest) -> dict:
    user = request.user

    def pages() -> dict[str, bool]:
        return {
            "library": bool(knowledge_base_ids_for(user, minimum_role=Role.EDITOR)),
            "review": bool(knowledge_base_ids_for(user, minimum_role=Role.REVIEWER)),
        }

    # Lazy: the admin's templates render with this processor too and never ask.
    return {"pages": SimpleLazyObject(pages)}
