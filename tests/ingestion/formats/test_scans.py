"""Scanned PDF pages and images, read by OCR through the formats' parsers."""

from __future__ import annotations

import io

import pypdfium2
import pytest
from PIL import Image, ImageDraw, ImageFont

from ingestion.blocks import OcrTimeout, OcrUnavailable, ParseError, ParseLimits
from ingestion.formats import parse_document
from tests.ingestion.hostile import blank_pages_pdf
from tests.samples import MINIMAL_PDF

OCR_OFF = ParseLimits(ocr_enabled=False)


def scan(text: str, size: tuple[int, int] = (1000, 300)) -> Image.Image:
    image = Image.new("L", size, 255)
    font = ImageFont.load_default(size=50)
    ImageDraw.Draw(image).text((60, 110), text, font=font, fill=0)
    return image


def scanned_pdf(*texts: str) -> bytes:
    pages = [scan(text) for text in texts]
    data = io.BytesIO()
    pages[0].save(
        data, format="PDF", resolution=200, save_all=True, append_images=pages[1:]
    )
    return data.getvalue()


def with_text_page_first(scanned: bytes) -> bytes:
    """MINIMAL_PDF's text page, then the scanned pages."""
    document = pypdfium2.PdfDocument(MINIMAL_PDF)
    document.import_pages(pypdfium2.PdfDocument(scanned))
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def test_scanned_pages_are_read_with_their_confidence():
    blocks = parse_document("pdf", scanned_pdf("Signed lease agreement", "Second page"))

    assert [(b.page, b.text) for b in blocks] == [
        (1, "Signed lease agreement"),
        (2, "Second page"),
    ]
    assert all(0.8 <= b.ocr_confidence <= 1 for b in blocks)


def test_a_text_page_keeps_its_text_layer_beside_a_scan():
    data = with_text_page_first(scanned_pdf("Scanned annex"))

    blocks = parse_document("pdf", data)

    assert blocks[0].ocr_confidence is None  # the file's own text
    assert blocks[0].page == 1
    assert [(b.page, b.text) for b in blocks if b.ocr_confidence] == [
        (2, "Scanned annex")
    ]


def test_ocr_pages_are_shared_by_shards_and_report_progress():
    data = scanned_pdf("Page one", "Page two", "Page three")
    heard, more_time = [], []

    second = parse_document(
        "pdf",
        data,
        shard=(1, 2),
        progress=lambda done, total: heard.append((done, total)),
        more_time=more_time.append,
    )

    assert [(b.page, b.text) for b in second] == [(2, "Page two")]
    assert heard == [(0, 1), (1, 1)]
    assert more_time == [60.0]  # the default per-page limit, asked for once


def test_blank_pages_are_not_read_by_ocr():
    assert parse_document("pdf", blank_pages_pdf(3)) == []


def test_with_ocr_off_a_scan_is_ocr_unavailable_and_text_stays():
    with pytest.raises(OcrUnavailable, match="switched off"):
        parse_document("pdf", scanned_pdf("Nothing else"), OCR_OFF)
    mixed = parse_document("pdf", with_text_page_first(scanned_pdf("Annex")), OCR_OFF)
    assert [b.page for b in mixed] == [1]


def test_the_ocr_page_cap():
    data = scanned_pdf("One", "Two", "Three")
    with pytest.raises(ParseError, match="more than 2 scanned pages"):
        parse_document("pdf", data, ParseLimits(max_ocr_pages=2))


def test_a_page_past_its_time_limit():
    with pytest.raises(OcrTimeout):
        parse_document(
            "pdf", scanned_pdf("Too slow"), ParseLimits(ocr_page_seconds=0.001)
        )


@pytest.mark.parametrize("image_format", ["PNG", "JPEG", "TIFF"])
def test_images_are_read(image_format):
    data = io.BytesIO()
    scan("Delivery note 42").convert("RGB").save(data, format=image_format)

    (block,) = parse_document("image", data.getvalue())

    assert (block.page, block.text) == (1, "Delivery note 42")
    assert block.ocr_confidence >= 0.8


def test_a_tiff_of_several_pages_gives_one_page_each():
    data = io.BytesIO()
    first, second = scan("First sheet"), scan("Second sheet")
    first.save(data, format="TIFF", save_all=True, append_images=[second])

    blocks = parse_document("image", data.getvalue())

    assert [(b.page, b.text) for b in blocks] == [
        (1, "First sheet"),
        (2, "Second sheet"),
    ]


def test_images_with_ocr_off_or_broken():
    data = io.BytesIO()
    scan("x").save(data, format="PNG")
    with pytest.raises(OcrUnavailable):
        parse_document("image", data.getvalue(), OCR_OFF)
    with pytest.raises(ParseError, match="cannot be read"):
        parse_document("image", b"\x89PNG\r\n\x1a\n broken")
