"""Hostile inputs made at test time: slow and huge PDFs, zip bombs, cut files."""

from __future__ import annotations

import io
import zipfile
import zlib

import pytest

from tests.ingestion.conftest import CORPUS


def build_pdf(objects: list[bytes]) -> bytes:
    """A PDF with a correct cross-reference table; object 1 is the catalog."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<</Size %d/Root 1 0 R>>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def _stream(content: bytes) -> bytes:
    packed = zlib.compress(content, 9)
    return b"<</Length %d/Filter/FlateDecode>>stream\n%s\nendstream" % (
        len(packed),
        packed,
    )


def slow_pdf(operations: int) -> bytes:
    """One page whose content stream shows text `operations` times.

    A few KiB on disk; pdfminer needs about 65 microseconds per operation, so
    200,000 of them keep a parser busy for many seconds.
    """
    return build_pdf(
        [
            b"<</Type/Catalog/Pages 2 0 R>>",
            b"<</Type/Pages/Kids[3 0 R]/Count 1>>",
            b"<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]/Contents 4 0 R"
            b"/Resources<</Font<</F1 5 0 R>>>>>>",
            _stream(b"BT /F1 12 Tf 72 700 Td (Annual leave) Tj ET\n" * operations),
            b"<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>",
        ]
    )


def blank_pages_pdf(pages: int) -> bytes:
    """A PDF of `pages` empty pages sharing one empty content stream."""
    kids = b" ".join(b"%d 0 R" % (4 + n) for n in range(pages))
    page = b"<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]/Contents 3 0 R>>"
    return build_pdf(
        [
            b"<</Type/Catalog/Pages 2 0 R>>",
            b"<</Type/Pages/Kids[%s]/Count %d>>" % (kids, pages),
            _stream(b""),
            *[page] * pages,
        ]
    )


def docx_zip_bomb(inflated_bytes: int) -> bytes:
    """A DOCX-shaped zip whose body inflates to `inflated_bytes` of zeros."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(
            "[Content_Types].xml",
            '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/'
            'package/2006/content-types"/>',
        )
        with archive.open("word/document.xml", "w", force_zip64=True) as member:
            block = b"\0" * (1 << 20)
            for _ in range(inflated_bytes // len(block)):
                member.write(block)
    return buffer.getvalue()


def corpus_bytes(relative: str) -> bytes:
    """A corpus file's bytes; the test is skipped when ../shared/corpus is absent."""
    path = CORPUS / relative
    if not path.is_file():
        pytest.skip("../shared/corpus is not present")
    return path.read_bytes()


def first_half(relative: str) -> bytes:
    data = corpus_bytes(relative)
    return data[: len(data) // 2]


def text_pages_pdf(pages: list[str], *, slow_page: int | None = None) -> bytes:
    """One page per text (ASCII), in Helvetica; `slow_page` (0-based) repeats its
    text 200,000 times, to keep whoever parses that page busy for many seconds."""
    objects = [
        b"<</Type/Catalog/Pages 2 0 R>>",
        b"",  # the page tree, once the page numbers are known
        b"<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>",
    ]
    kids = []
    for index, text in enumerate(pages):
        show = b"BT /F1 12 Tf 72 700 Td (%s) Tj ET\n" % text.encode("ascii")
        content = show * (200_000 if index == slow_page else 1)
        objects.append(_stream(content))
        objects.append(
            b"<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]/Contents %d 0 R"
            b"/Resources<</Font<</F1 3 0 R>>>>>>" % len(objects)
        )
        kids.append(b"%d 0 R" % len(objects))
    objects[1] = b"<</Type/Pages/Kids[%s]/Count %d>>" % (b" ".join(kids), len(kids))
    return build_pdf(objects)
