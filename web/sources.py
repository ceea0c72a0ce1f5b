"""A cited passage beside the answer: the chunk among its neighbours, where it
sits in its document, and a link to the original.

Visibility is the API's (`documents.selectors.visible_document`): a viewer reads
published versions only, and another knowledge base's document is a 404.
"""

from __future__ import annotations

import re
import uuid

from django.contrib.auth.mixins import LoginRequiredMixin
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views import View

from core.errors import NotFound
from documents.models import Document
from documents.selectors import visible_document
from retrieval.models import Chunk

from .page_images import drawable_kind, page_unit

NEIGHBOURS = 1  # chunks shown on each side of the cited one
# Enough of an excerpt to find its chunk; the whole of one can be 500 characters.
PROBES = (120, 40)

# What a chunk's `page` counts (`page_unit`).
_PLACES = {
    "page": gettext_lazy("Page"),
    "slide": gettext_lazy("Slide"),
    "sheet": gettext_lazy("Sheet"),
}


def _place(document: Document):
    return _PLACES[page_unit(document)]


def _cited_chunk(
    chunks: QuerySet[Chunk], *, chunk_id: str, excerpt: str, page: str
) -> Chunk | None:
    """The chunk named by id, else the one holding the excerpt (on its page
    when one is given), else the page's first."""
    if chunk_id:
        return chunks.filter(pk=chunk_id).first() if chunk_id.isdigit() else None
    on_page = chunks.filter(page=int(page)) if page.isdigit() else chunks
    text = excerpt.strip().strip("…").strip()
    for size in PROBES if text else ():
        for scope in (on_page, chunks):
            found = scope.filter(text__contains=text[:size]).first()
            if found is not None:
                return found
    return on_page.first() or chunks.first()


def _quoted(text: str, quote: str) -> tuple[str, str, str]:
    """The cited chunk as (before, quoted, after): the sentence the answer
    quoted is marked when it is found (line breaks may differ), else all of it."""
    words = quote.replace("…", " ").split()
    if words:
        found = re.search(r"\s+".join(map(re.escape, words)), text)
        if found:
            return text[: found.start()], found.group(), text[found.end() :]
    return "", text, ""


def _image_page(document: Document, cited: Chunk) -> int | None:
    """The page of the original drawn beside the passage (a PDF's or an
    image's), or None when the original cannot be drawn."""
    kind = drawable_kind(document)
    if kind == "image":
        return cited.page or 1
    return cited.page if kind == "pdf" and cited.page else None


class SourceView(LoginRequiredMixin, View):
    def get(self, request: HttpRequest, document_id: uuid.UUID) -> HttpResponse:
        try:
            document = visible_document(request.user, document_id)
        except NotFound:
            raise Http404(_("Document not found.")) from None
        chunks = document.chunks.order_by("ordinal").defer("embedding", "terms")
        cited = _cited_chunk(
            chunks,
            chunk_id=request.GET.get("chunk", ""),
            excerpt=request.GET.get("excerpt", ""),
            page=request.GET.get("page", ""),
        )
        if cited is None:
            raise Http404(_("Passage not found."))
        around = chunks.filter(
            ordinal__gte=cited.ordinal - NEIGHBOURS,
            ordinal__lte=cited.ordinal + NEIGHBOURS,
        )
        before, quoted, after = _quoted(cited.text, request.GET.get("quote", ""))
        # The page asks for the panel alone; a link opened on its own gets a page.
        partial = request.headers.get("HX-Request") == "true"
        return render(
            request,
            "web/ask/source_panel.html" if partial else "web/ask/source_page.html",
            {
                "document": document,
                "cited": cited,
                "before": before,
                "quoted": quoted,
                "after": after,
                "image_page": _image_page(document, cited),
                "chunks": around,
                "place": _place(document),
                "partial": partial,
            },
        )
