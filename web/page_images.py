"""A page of a document's original as a PNG: drawn once in a limited child
process (`page_render_child.py`), then kept in the default storage.

A document version never changes, so a drawing stored under its id, page and
width stays right; a failure is remembered for a while in the cache, so that a
hostile file cannot make every request spend the time limit again.
"""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
from http import HTTPStatus
from pathlib import Path, PurePosixPath

from django.conf import settings
from django.core.cache import cache
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from core.errors import DomainError, NotFound
from documents.kinds import FILE_KINDS
from documents.models import Document
from ingestion.sandbox.processes import SandboxOptions, parser_environment

from . import page_render_child as child

logger = logging.getLogger(__name__)

WIDTHS = (480, 960, 1440)
DEFAULT_WIDTH = 960
_CHILD = Path(child.__file__)
_FAILURE_SECONDS = 3600
_slots = threading.BoundedSemaphore(max(1, settings.PAGE_RENDER_PROCESSES))


class PageUnreadable(DomainError):
    error_code = "page_unreadable"
    http_status = HTTPStatus.UNPROCESSABLE_ENTITY
    default_detail = "This page of the file cannot be drawn: the file is damaged."


class RenderTimeout(PageUnreadable):
    error_code = "render_timeout"
    default_detail = "Drawing this page took longer than the time limit."


class RenderTooLarge(PageUnreadable):
    error_code = "render_too_large"
    default_detail = "Drawing this page needed more memory than the limit."


class RenderBusy(DomainError):
    error_code = "render_busy"
    http_status = HTTPStatus.SERVICE_UNAVAILABLE
    default_detail = "Other pages are being drawn; try again in a moment."
    retry_after = 5


class PageMissing(NotFound):
    error_code = "page_not_found"
    default_detail = "The file has no such page."


class NoPageImages(NotFound):
    error_code = "no_page_images"
    default_detail = "Only PDF and image files have pages to draw."


def drawable_kind(document: Document) -> str | None:
    """The renderer of the original's pages ("pdf", "image": `FileKind.drawn_as`),
    or None (office files need LibreOffice: the pages show the parser's text
    instead)."""
    try:
        return FILE_KINDS.for_content_type(document.content_type).drawn_as
    except ValueError:
        return None


def page_unit(document: Document) -> str:
    """What a chunk's page counts in the original ("page", "slide", "sheet":
    `FileKind.unit`), known from its name as its upload was."""
    try:
        kind, _ = FILE_KINDS.for_extension(PurePosixPath(document.filename).suffix)
    except ValueError:
        return "page"
    return kind.unit


def page_png(document: Document, page: int, width: int = DEFAULT_WIDTH) -> bytes:
    """The PNG of `page` (from 1) of a document the caller may see.

    Raises `NoPageImages`, `PageMissing`, `PageUnreadable` (and its timeout and
    memory kinds) or `RenderBusy`."""
    kind = drawable_kind(document)
    if kind is None:
        raise NoPageImages()
    if width not in WIDTHS or page < 1:
        raise PageMissing()
    key = f"page-images/{document.pk}/{page}-{width}.png"
    if default_storage.exists(key):
        with default_storage.open(key, "rb") as stored:
            return stored.read()
    failure_key = f"curator:page-image-failed:{document.pk}:{page}:{width}"
    failed = cache.get(failure_key)
    if failed is not None:
        raise _ERRORS[failed]()
    try:
        png = _draw(document, kind, page, width)
    except (PageMissing, PageUnreadable) as error:
        cache.set(failure_key, error.error_code, _FAILURE_SECONDS)
        raise
    default_storage.save(key, ContentFile(png))
    return png


def _draw(document: Document, kind: str, page: int, width: int) -> bytes:
    with default_storage.open(document.storage_key, "rb") as original:
        data = original.read(settings.MAX_UPLOAD_BYTES + 1)
    if not _slots.acquire(timeout=settings.PAGE_RENDER_SECONDS):
        raise RenderBusy()
    try:
        result = subprocess.run(  # noqa: S603 - our interpreter and our script
            [
                sys.executable,
                "-I",
                str(_CHILD),
                kind,
                str(page),
                str(width),
                str(settings.PAGE_RENDER_MEMORY_BYTES),
            ],
            input=data,
            capture_output=True,
            timeout=settings.PAGE_RENDER_SECONDS,
            env=parser_environment(SandboxOptions()),
            check=False,
        )
    except subprocess.TimeoutExpired:
        logger.warning("page render timed out document=%s page=%s", document.pk, page)
        raise RenderTimeout(
            f"Drawing this page took longer than {settings.PAGE_RENDER_SECONDS:g} s,"
            " the limit."
        ) from None
    finally:
        _slots.release()
    if result.returncode == 0 and result.stdout.startswith(b"\x89PNG"):
        return result.stdout
    logger.warning(
        "page render failed document=%s page=%s exit=%s",
        document.pk,
        page,
        result.returncode,
    )
    if result.returncode == child.PAGE_MISSING:
        raise PageMissing()
    if result.returncode == child.OUT_OF_MEMORY:
        raise RenderTooLarge()
    raise PageUnreadable()


_ERRORS = {
    error.error_code: error
    for error in (PageMissing, PageUnreadable, RenderTimeout, RenderTooLarge)
}
