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


SAMPLES = {
    "policy.pdf": MINIMAL_PDF,
    "policy.md": b"# Leave\n\nEvery employee receives 25 days of annual leave.\n",
    "policy.html": b"<html><body><h1>Leave</h1><p>25 days.</p></body></html>",
    "policy.txt": "年假为二十五天。".encode(),
}


def upload(name: str, content: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content)
