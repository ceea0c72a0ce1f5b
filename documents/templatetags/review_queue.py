"""`{% review_queue %}`: the admin home's list of documents waiting for review."""

from __future__ import annotations

from django import template

from documents import selectors

register = template.Library()


@register.inclusion_tag("admin/documents/review_queue.html", takes_context=True)
def review_queue(context) -> dict:
    request = context["request"]
    return {"documents": selectors.review_queue(request.user)}
