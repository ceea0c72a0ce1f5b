"""What the review page shows of a version: its original a page, slide or sheet
at a time, each beside the chunks that came from it."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.conf import settings
from django.utils.translation import gettext_lazy as _

from documents.models import Document, DocumentStatus
from retrieval.models import Chunk

from .page_images import drawable_kind, page_unit

# Pages (slides, sheets) on one screen; the rest behind "next".
MAX_GROUPS = 20

STATUS_LABELS = {
    DocumentStatus.DRAFT: _("Draft"),
    DocumentStatus.PROCESSING: _("Processing"),
    DocumentStatus.REVIEW_PENDING: _("Waiting for review"),
    DocumentStatus.PUBLISHED: _("Published"),
    DocumentStatus.ARCHIVED: _("Archived"),
    DocumentStatus.FAILED: _("Failed"),
}


@dataclass(frozen=True)
class ShownChunk:
    ordinal: int
    text: str
    heading_path: list[str]
    page: int | None
    ocr_confidence: float | None
    low_confidence: bool

    @property
    def ocr_percent(self) -> int | None:
        if self.ocr_confidence is None:
            return None
        return round(self.ocr_confidence * 100)


@dataclass(frozen=True)
class Group:
    """One page, slide or sheet (`number` None: text with no page)."""

    label: str
    number: int | None
    image_page: int | None  # the page drawn as the original; None: show the text
    chunks: list[ShownChunk] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n\n".join(chunk.text for chunk in self.chunks)


# A page, slide or sheet by its number (`page_unit`).
UNIT_LABELS = {
    "page": _("Page %(number)s"),
    "slide": _("Slide %(number)s"),
    "sheet": _("Sheet %(number)s"),
}


def _unit_label(document: Document, number: int | None) -> str:
    if number is None:
        return str(_("Text"))
    return str(UNIT_LABELS[page_unit(document)] % {"number": number})


def original_groups(document: Document, *, start: int = 0) -> tuple[list[Group], bool]:
    """Up to MAX_GROUPS groups from the `start`-th, and whether more follow.

    A page that yielded no chunk (a blank one) is not listed."""
    pages = list(
        Chunk.objects.filter(document_id=document.pk)
        .order_by("page")
        .values_list("page", flat=True)
        .distinct()
    )
    shown = pages[start : start + MAX_GROUPS]
    if not shown:
        return [], False
    kind = drawable_kind(document)
    floor = settings.OCR_MIN_CONFIDENCE
    numbers = [page for page in shown if page is not None]
    chunks = Chunk.objects.filter(document_id=document.pk).order_by("ordinal")
    if None in shown:
        chunks = chunks.filter(page__isnull=True) | chunks.filter(page__in=numbers)
    else:
        chunks = chunks.filter(page__in=numbers)
    rows = chunks.values_list(
        "ordinal", "text", "heading_path", "page", "ocr_confidence"
    )
    by_page: dict[int | None, list[ShownChunk]] = {}
    for ordinal, text, heading, page, confidence in rows:
        by_page.setdefault(page, []).append(
            ShownChunk(
                ordinal,
                text,
                list(heading or ()),
                page,
                confidence,
                confidence is not None and confidence < floor,
            )
        )
    groups = [
        Group(
            _unit_label(document, page),
            page,
            # An image's text may carry no page: it is the image's one page.
            (page or 1) if kind == "image" else (page if kind == "pdf" else None),
            by_page.get(page, []),
        )
        for page in shown
    ]
    return groups, len(pages) > start + MAX_GROUPS
