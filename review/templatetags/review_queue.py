"""`{% review_queue %}`: the admin home's list of documents waiting for review."""

from __future__ import annotations

from django import template

from review import changes, selectors

register = template.Library()


@register.inclusion_tag("admin/documents/review_queue.html", takes_context=True)
def review_queue(context) -> dict:
    request = context["request"]
    documents = selectors.review_queue(request.user)
    summaries = changes.change_summaries(documents)
    return {"rows": [(document, summaries[document.pk]) for document in documents]}
