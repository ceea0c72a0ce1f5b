"""Scanned pages: the pages of a PDF without a text layer, read by OCR.

A page whose own text is thin (fewer than `THIN_TEXT_CHARS` characters) is looked
at again with pypdfium2, which knows whether images cover it (`page_needs_ocr`);
only then is it rasterised and read. The parse's own pdfium document serves, or
one opened on the first thin page, so text PDFs pay nothing.
"""

from __future__ import annotations

import math

import pypdfium2

from .. import ocr
from ..blocks import Block, OcrUnavailable, ParseError, TooManyPages
from .base import ParseRequest

THIN_TEXT_CHARS = 32  # below it a page may be a scan with a stamped page number


class ScannedPages:
    """OCR for one parse's thin pages; `blocks(number, text)` for each page read."""

    def __init__(
        self,
        data: bytes,
        request: ParseRequest,
        document: pypdfium2.PdfDocument | None = None,
    ) -> None:
        self._data = data
        self._request = request
        self._pdf = document
        self._own = document is None  # closed here only if opened here
        limits = request.limits
        # Each shard may read its share of the document's OCR pages.
        self._cap = (
            None
            if limits.max_ocr_pages is None
            else math.ceil(limits.max_ocr_pages / request.shard[1])
        )
        self.read = 0
        self.unread = 0  # pages that needed OCR with OCR switched off

    def blocks(self, number: int, text: str) -> list[Block]:
        """The page's paragraphs by OCR, or [] when its text layer will do."""
        if sum(map(len, text.split())) >= THIN_TEXT_CHARS:  # not whitespace
            return []
        page = self._document()[number - 1]
        if not ocr.page_needs_ocr(page):
            return []
        limits = self._request.limits
        if not limits.ocr_enabled:
            self.unread += 1
            return []
        if self._cap is not None and self.read >= self._cap:
            raise TooManyPages(
                f"more than {limits.max_ocr_pages} scanned pages, the OCR limit"
            )
        self.read += 1
        known = self._request.known_ocr.get(number)
        if known is not None:  # read by an earlier attempt (a checkpoint)
            return list(known)
        # Also what the worker counts OCR pages by (its work budget).
        self._request.more_time(limits.ocr_page_seconds or 0.0)
        scanned = ocr.ocr_image(
            ocr.render_pdf_page(page),
            languages=limits.ocr_languages,
            time_limit=limits.ocr_page_seconds,
        )
        blocks = [
            Block(text=paragraph, page=number, ocr_confidence=scanned.confidence)
            for paragraph in scanned.paragraphs
        ]
        self._request.ocr_read(number, blocks)
        return blocks

    def check_nothing_lost(self, blocks: list[Block]) -> None:
        """A document that is all scans cannot pass as empty while OCR is off."""
        if self.unread and not blocks:
            raise OcrUnavailable("the PDF is scanned and OCR is switched off")

    def close(self) -> None:
        if self._own and self._pdf is not None:
            self._pdf.close()

    def _document(self) -> pypdfium2.PdfDocument:
        if self._pdf is None:
            try:
                self._pdf = pypdfium2.PdfDocument(self._data)
            except pypdfium2.PdfiumError as error:
                raise ParseError(
                    "the PDF's pages cannot be rendered for OCR"
                ) from error
        return self._pdf
