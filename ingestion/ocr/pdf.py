"""PDF pages: whether one needs OCR, and rasterising it (pypdfium2)."""

from __future__ import annotations

import pypdfium2
import pypdfium2.raw as pdfium_c
from PIL import Image

DEFAULT_DPI = 200  # finer reads no better: docs/benchmarks.md, "OCR engines"
# A page whose text layer has fewer characters than this while images cover at least
# IMAGE_COVER_FOR_OCR of it is a scan (a stamp or a page number printed over it).
NEGLIGIBLE_TEXT_CHARS = 32
IMAGE_COVER_FOR_OCR = 0.5
# Never rasterise a PDF page beyond this many pixels (a 200 x 200 inch page at 200 dpi
# would take gigabytes).
MAX_RENDER_PIXELS = 40_000_000


def render_pdf_page(page: pypdfium2.PdfPage, *, dpi: int = DEFAULT_DPI) -> Image.Image:
    width, height = page.get_size()  # PDF points, 72 to the inch
    scale = dpi / 72
    if width * height * scale * scale > MAX_RENDER_PIXELS:
        scale = (MAX_RENDER_PIXELS / (width * height)) ** 0.5
    # A tiny page holding a scan (a fax page of a few points) is drawn at the scan's
    # own resolution rather than at a handful of pixels.
    scale = max(scale, _image_scale(page))
    return page.render(scale=scale, grayscale=True).to_pil()


def page_needs_ocr(page: pypdfium2.PdfPage) -> bool:
    """A page needs OCR when its text layer is empty but the page is not blank, or
    negligible (fewer than NEGLIGIBLE_TEXT_CHARS characters) while images cover
    most of it."""
    chars = _text_layer_chars(page)
    if chars == 0:
        # A blank page has nothing to read; text turned into outlines (drawn
        # paths) or a scan has.
        return any(True for _ in page.get_objects(max_depth=1))
    return chars < NEGLIGIBLE_TEXT_CHARS and image_coverage(page) >= IMAGE_COVER_FOR_OCR


def image_coverage(page: pypdfium2.PdfPage) -> float:
    """The share of the page (0..1) under image objects, clipped to the page."""
    width, height = page.get_size()
    if width <= 0 or height <= 0:
        return 0.0
    covered = 0.0
    for image in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=4):
        left, bottom, right, top = image.get_bounds()
        covered += max(0.0, min(right, width) - max(left, 0.0)) * max(
            0.0, min(top, height) - max(bottom, 0.0)
        )
    return min(1.0, covered / (width * height))


def _text_layer_chars(page: pypdfium2.PdfPage) -> int:
    text = page.get_textpage().get_text_bounded()
    return sum(1 for char in text if not char.isspace())


def _image_scale(page: pypdfium2.PdfPage) -> float:
    """The scale that draws the page's largest image at its own pixel size."""
    best = 0.0
    for image in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=4):
        left, _, right, _ = image.get_bounds()
        pixels_wide, _ = image.get_px_size()
        if right - left > 0:
            best = max(best, pixels_wide / (right - left))
    width, height = page.get_size()
    cap = (MAX_RENDER_PIXELS / max(1.0, width * height)) ** 0.5
    return min(best, cap)
