"""Small, valid files of every supported type, made in memory."""

from __future__ import annotations

import io

from django.core.files.uploadedfile import SimpleUploadedFile

MINIMAL_PDF = (
    b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n"
    b"2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n"
    b"3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]"
    b"/Contents 4 0 R/Resources<</Font<</F1 5 0 R>>>>>>endobj\n"
    b"4 0 obj<</Length 58>>stream\n"
    b"BT /F1 18 Tf 72 700 Td (Annual leave is 25 days.) Tj ET\n"
    b"endstream endobj\n"
    b"5 0 obj<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>endobj\n"
    b"trailer<</Root 1 0 R>>\n%%EOF\n"
)


def docx_bytes(
    paragraphs: list[str] | None = None, *, headings_every: int | None = None
) -> bytes:
    from docx import Document

    document = Document()
    document.add_heading("Leave policy", level=1)
    texts = paragraphs or ["Every employee receives 25 days of annual leave."]
    for number, text in enumerate(texts):
        if number and headings_every and number % headings_every == 0:
            document.add_heading(f"Section {number // headings_every}", level=2)
        document.add_paragraph(text)
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def xlsx_bytes() -> bytes:
    """A small real workbook: one sheet, a header row and two data rows."""
    from openpyxl import Workbook

    workbook = Workbook()
    sheet = workbook.active
    sheet.title = "Leave"
    for row in (("Grade", "Days"), ("Staff", 25), ("Senior", 30)):
        sheet.append(row)
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()


def pptx_bytes() -> bytes:
    """A small real presentation: one slide with a title and a bullet."""
    from pptx import Presentation

    presentation = Presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[1])
    slide.shapes.title.text = "Leave policy"
    slide.placeholders[1].text_frame.text = "Every employee receives 25 days."
    buffer = io.BytesIO()
    presentation.save(buffer)
    return buffer.getvalue()


def image_bytes(image_format: str, text: str = "Delivery note 42") -> bytes:
    """A scan of one line of text that OCR reads back."""
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("RGB", (1000, 300), "white")
    font = ImageFont.load_default(size=50)
    ImageDraw.Draw(image).text((60, 110), text, font=font, fill="black")
    buffer = io.BytesIO()
    image.save(buffer, format=image_format)
    return buffer.getvalue()


SAMPLES = {
    "policy.pdf": MINIMAL_PDF,
    "policy.md": b"# Leave\n\nEvery employee receives 25 days of annual leave.\n",
    "policy.html": b"<html><body><h1>Leave</h1><p>25 days.</p></body></html>",
    "policy.txt": "年假为二十五天。".encode(),
}


def upload(name: str, content: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content)


def type_samples() -> dict[str, bytes]:
    """A small file of every declared file type (documents/kinds.py), by the
    extension of its stored original; tests/documents/test_kinds.py checks
    that each one sniffs as its type and parses."""
    return {
        ".pdf": MINIMAL_PDF,
        ".docx": docx_bytes(),
        ".pptx": pptx_bytes(),
        ".xlsx": xlsx_bytes(),
        ".md": SAMPLES["policy.md"],
        ".html": SAMPLES["policy.html"],
        ".txt": SAMPLES["policy.txt"],
        ".png": image_bytes("PNG"),
        ".jpg": image_bytes("JPEG"),
        ".tif": image_bytes("TIFF"),
    }
