"""Images (PNG, JPEG, TIFF): every frame read by OCR, one page each."""

from __future__ import annotations

import io

from PIL import Image, ImageSequence, UnidentifiedImageError

from .. import ocr
from ..blocks import Block, OcrUnavailable, ParseError, TooManyPages
from .base import ParseRequest

# Decompression bombs: Pillow refuses images past this many pixels.
Image.MAX_IMAGE_PIXELS = 100_000_000


def parse(data: bytes, request: ParseRequest) -> list[Block]:
    limits = request.limits
    if not limits.ocr_enabled:
        raise OcrUnavailable("images are read by OCR, which is switched off")
    try:
        image = Image.open(io.BytesIO(data))
        frames = getattr(image, "n_frames", 1)
    except (UnidentifiedImageError, Image.DecompressionBombError, OSError) as error:
        raise ParseError("the image cannot be read") from error
    cap = limits.max_ocr_pages
    if cap is not None and frames > cap:
        raise TooManyPages(f"the image has more than {cap} pages, the OCR limit")
    blocks: list[Block] = []
    request.progress(0, frames)
    for number, frame in enumerate(ImageSequence.Iterator(image), start=1):
        # Also what the worker counts OCR pages by (its work budget).
        request.more_time(limits.ocr_page_seconds or 0.0)
        scanned = ocr.ocr_image(
            frame.copy(),
            languages=limits.ocr_languages,
            time_limit=limits.ocr_page_seconds,
        )
        blocks.extend(
            Block(text=paragraph, page=number, ocr_confidence=scanned.confidence)
            for paragraph in scanned.paragraphs
        )
        request.progress(number, frames)
    return blocks
