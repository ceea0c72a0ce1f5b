"""Optical character recognition for scanned pages and images (no Django).

    ocr_image(image)          -> OcrPage: lines in reading order, mean confidence
    ocr_pdf_page(pdf, index)  -> OcrPage of one page, rasterised with pypdfium2
    page_needs_ocr(page)      -> whether a PDF page's text layer is missing or thin
    engine_available()        -> whether OCR can run here (loads the engine)
    engine_installed()        -> the same, cheaply, without loading it

One engine, RapidOCR 3 with the PP-OCRv6 models in its wheel, reads simplified and
traditional Chinese and English together (why, and its costs: docs/ocr.md). It is
loaded on a process's first OCR and kept (`engine.py`).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import io
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import pypdfium2
from PIL import Image, ImageOps, UnidentifiedImageError

from ..blocks import ParseError
from .engine import (
    MAX_SIDE_PIXELS,
    OcrTimeout,
    OcrUnavailable,
    deadline,
    engine_available,
    engine_installed,
    get_engine,
    raise_if_out_of_memory,
)
from .layout import OcrLine, OcrPage, TextBox, lines_in_reading_order, text_box
from .pdf import DEFAULT_DPI, image_coverage, page_needs_ocr, render_pdf_page

__all__ = [
    "DEFAULT_DPI",
    "DEFAULT_LANGUAGES",
    "SUPPORTED_LANGUAGES",
    "OcrLine",
    "OcrPage",
    "OcrTimeout",
    "OcrUnavailable",
    "TextBox",
    "engine_available",
    "engine_installed",
    "image_coverage",
    "lines_in_reading_order",
    "ocr_image",
    "ocr_pdf_page",
    "page_needs_ocr",
    "render_pdf_page",
]

# The PP-OCR Chinese model reads simplified, traditional and Latin script alike.
SUPPORTED_LANGUAGES = frozenset({"chi_sim", "chi_tra", "eng"})
DEFAULT_LANGUAGES = ("chi_sim", "chi_tra", "eng")
DEFAULT_TIME_LIMIT = 60.0  # seconds per page
MIN_SIDE_PIXELS = 8
# Below this mean confidence a page is read again turned upside down.
UPRIGHT_CONFIDENCE = 0.8
# A page that reads nothing shrunk is read again in tiles of this size, skipping
# those with less than MIN_INK_SHARE of their pixels darker than INK_LEVEL.
TILE_PIXELS = 800
TILE_OVERLAP = 150
INK_LEVEL = 160
MIN_INK_SHARE = 0.0001


def ocr_image(
    image: Image.Image | bytes,
    *,
    languages: Sequence[str] = DEFAULT_LANGUAGES,
    time_limit: float | None = DEFAULT_TIME_LIMIT,
) -> OcrPage:
    """Read the text of one image (a PIL image or encoded PNG/JPEG/TIFF bytes).

    Raises OcrUnavailable without an engine, OcrTimeout past `time_limit` seconds,
    ParseError for bytes that are not an image or an unsupported language.
    """
    _check_languages(languages)
    engine = get_engine()
    started = time.monotonic()
    picture = _as_rgb(image)
    array, scale = _scaled_array(picture)
    try:
        with deadline(time_limit):
            lines = _read_upright(engine, array, scale)
            if not lines and max(picture.size) > MAX_SIDE_PIXELS:
                lines = _read_in_tiles(engine, picture)
    finally:
        _give_back_freed_memory()
    return OcrPage(
        lines=tuple(lines),
        width=picture.width,
        height=picture.height,
        seconds=time.monotonic() - started,
    )


def _load_libc():
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc.malloc_trim
    return None


_MALLOC_TRIM = _load_libc()


def _give_back_freed_memory() -> None:
    """Return the heap a page's inference freed to the system. glibc keeps it
    otherwise, and the address space of a parser reading a long scan grew by
    about 30 MB a page until its memory limit stopped it near page 29
    (docs/ocr.md)."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


def ocr_pdf_page(
    pdf: pypdfium2.PdfDocument,
    index: int,
    *,
    dpi: int = DEFAULT_DPI,
    languages: Sequence[str] = DEFAULT_LANGUAGES,
    time_limit: float | None = DEFAULT_TIME_LIMIT,
) -> OcrPage:
    """Rasterise page `index` (0-based) of an open PDF at `dpi` and read it."""
    return ocr_image(
        render_pdf_page(pdf[index], dpi=dpi), languages=languages, time_limit=time_limit
    )


def _read_upright(engine: Any, array: np.ndarray, scale: float) -> list[OcrLine]:
    """Read the page; if it reads poorly, read it turned by 180 degrees too and keep
    the more confident reading (a scan fed in upside down)."""
    lines = _read(engine, array, scale)
    if lines and _mean_confidence(lines) < UPRIGHT_CONFIDENCE:
        turned = _read(engine, np.ascontiguousarray(array[::-1, ::-1]), scale)
        if _mean_confidence(turned) > _mean_confidence(lines):
            height, width = array.shape[0] / scale, array.shape[1] / scale
            return [_turned_line(line, width, height) for line in turned]
    return lines


def _read_in_tiles(engine: Any, picture: Image.Image) -> list[OcrLine]:
    """Small print on a large page, lost when the page is shrunk for the detector:
    the page read again in overlapping tiles at its own resolution. Blank tiles are
    skipped, so a blank page costs little."""
    grey = np.asarray(picture.convert("L"))
    boxes = []
    step = TILE_PIXELS - TILE_OVERLAP
    for top in range(0, max(1, grey.shape[0] - TILE_OVERLAP), step):
        for left in range(0, max(1, grey.shape[1] - TILE_OVERLAP), step):
            tile = grey[top : top + TILE_PIXELS, left : left + TILE_PIXELS]
            if (tile < INK_LEVEL).mean() < MIN_INK_SHARE:
                continue
            array = np.ascontiguousarray(np.repeat(tile[:, :, None], 3, axis=2))
            for box in _boxes(engine, array, 1.0):
                moved = box.moved(left, top)
                # Each box once: from the tile whose share of the overlap holds
                # its centre.
                if _owned_by(moved, left, top, grey.shape):
                    boxes.append(moved)
    return lines_in_reading_order(boxes)


def _owned_by(box: TextBox, left: int, top: int, shape: tuple[int, ...]) -> bool:
    x, y = box.centre
    half = TILE_OVERLAP / 2
    low_x = left + half if left else 0
    low_y = top + half if top else 0
    high_x = left + TILE_PIXELS - half if left + TILE_PIXELS < shape[1] else shape[1]
    high_y = top + TILE_PIXELS - half if top + TILE_PIXELS < shape[0] else shape[0]
    return low_x <= x < high_x and low_y <= y < high_y


def _read(engine: Any, array: np.ndarray, scale: float) -> list[OcrLine]:
    return lines_in_reading_order(_boxes(engine, array, scale))


def _boxes(engine: Any, array: np.ndarray, scale: float) -> list[TextBox]:
    if min(array.shape[:2]) < MIN_SIDE_PIXELS:
        return []  # nothing legible, and the detector cannot resize it
    try:
        result = engine(array)
    except (OcrTimeout, MemoryError):
        raise
    except Exception as error:
        raise_if_out_of_memory(error)
        raise ParseError("OCR failed on this page") from error
    if result.boxes is None or result.txts is None:
        return []
    return [
        text_box(points, text, score, scale)
        for points, text, score in zip(
            result.boxes, result.txts, result.scores, strict=True
        )
    ]


def _turned_line(line: OcrLine, width: float, height: float) -> OcrLine:
    left, top, right, bottom = line.box
    box = (
        round(width - right),
        round(height - bottom),
        round(width - left),
        round(height - top),
    )
    return OcrLine(line.text, line.confidence, box, line.paragraph)


def _mean_confidence(lines: Sequence[OcrLine]) -> float:
    return OcrPage(tuple(lines), 0, 0, 0.0).confidence


def _check_languages(languages: Sequence[str]) -> None:
    unknown = sorted(set(languages) - SUPPORTED_LANGUAGES)
    if unknown or not languages:
        raise ParseError(
            f"unsupported OCR language {', '.join(unknown) or '(none)'}; "
            f"supported: {', '.join(sorted(SUPPORTED_LANGUAGES))}"
        )


def _as_rgb(image: Image.Image | bytes) -> Image.Image:
    if isinstance(image, bytes | bytearray):
        try:
            image = Image.open(io.BytesIO(image))
            image.load()
        except (UnidentifiedImageError, OSError, ValueError) as error:
            raise ParseError("the image cannot be read") from error
    image = ImageOps.exif_transpose(image)
    if image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info:
        # Transparent pixels over white, as a viewer shows them.
        image = image.convert("RGBA")
        canvas = Image.new("RGBA", image.size, "white")
        image = Image.alpha_composite(canvas, image)
    return image.convert("RGB")


def _scaled_array(image: Image.Image) -> tuple[np.ndarray, float]:
    longer = max(image.size)
    scale = 1.0
    if longer > MAX_SIDE_PIXELS:
        scale = MAX_SIDE_PIXELS / longer
        image = image.resize(
            (round(image.width * scale), round(image.height * scale)), resample=3
        )
    # RapidOCR expects OpenCV's channel order.
    return np.ascontiguousarray(np.asarray(image)[:, :, ::-1]), scale
