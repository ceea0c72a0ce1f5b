"""PDF: generated files and real PDFs from the shared corpus."""

from __future__ import annotations

import re

import pytest

from ingestion.blocks import OcrUnavailable, ParseError, ParseLimits
from ingestion.formats import parse_document, pdf
from ingestion.formats.pdf import pdf_page_count
from tests.ingestion.formats.common import CORPUS, WHOLE, texts


def corpus_pdf(relative: str) -> bytes:
    path = CORPUS / "pdf" / relative
    if not path.is_file():
        pytest.skip(f"corpus file pdf/{relative} is not present")
    return path.read_bytes()


def make_pdf(*pages: str) -> bytes:
    """A minimal PDF (no xref table) whose pages run the given content streams."""
    count = len(pages)
    font_id = 3 + 2 * count
    objects = [
        b"<</Type/Catalog/Pages 2 0 R>>",
        b"<</Type/Pages/Kids["
        + b" ".join(f"{3 + 2 * i} 0 R".encode() for i in range(count))
        + f"]/Count {count}>>".encode(),
    ]
    for index, content in enumerate(pages):
        stream = content.encode("latin-1")
        objects.append(
            f"<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]/Contents {4 + 2 * index}"
            f" 0 R/Resources<</Font<</F1 {font_id} 0 R>>>>>>".encode()
        )
        objects.append(
            f"<</Length {len(stream)}>>stream\n".encode() + stream + b"\nendstream"
        )
    objects.append(b"<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>")
    body = b"".join(
        f"{number} 0 obj".encode() + obj + b"\nendobj\n"
        for number, obj in enumerate(objects, start=1)
    )
    return b"%PDF-1.4\n" + body + b"trailer<</Root 1 0 R>>\n%%EOF\n"


def lines_at(x: int, y: int, *lines: str, leading: int = 14) -> str:
    """Text operators drawing `lines` downwards from (x, y) in 12 pt Helvetica."""
    ops = [f"BT /F1 12 Tf {leading} TL {x} {y} Td"]
    ops += [f"({line}) Tj T*" for line in lines]
    ops.append("ET")
    return "\n".join(ops)


def test_pdf_paragraphs_hyphenation_and_pages() -> None:
    data = make_pdf(
        lines_at(72, 700, "Annual leave is granted to every", "employee of the com-")
        + "\n"
        + lines_at(72, 672, "pany after probation.")
        + "\n"
        + lines_at(72, 600, "A second paragraph follows."),
        lines_at(72, 700, "Text on the second page."),
    )
    blocks = pdf.parse(data, WHOLE)
    assert texts(blocks) == [
        "Annual leave is granted to every employee of the company after probation.",
        "A second paragraph follows.",
        "Text on the second page.",
    ]
    assert [block.page for block in blocks] == [1, 1, 2]
    assert pdf_page_count(data) == 2


def test_pdf_columns_drawn_row_by_row_come_out_per_paragraph() -> None:
    # Forms and newsletters often draw both columns line by line.
    rows = [
        ("Left column starts here", "Right column is about"),
        ("and continues below.", "something else entirely."),
    ]
    ops = ["BT /F1 12 Tf"]
    for index, (left, right) in enumerate(rows):
        y = 700 - 14 * index
        ops.append(f"1 0 0 1 72 {y} Tm ({left}) Tj 1 0 0 1 320 {y} Tm ({right}) Tj")
    ops.append("ET")
    assert texts(pdf.parse(make_pdf("\n".join(ops)), WHOLE)) == [
        "Left column starts here and continues below.",
        "Right column is about something else entirely.",
    ]


def test_pdf_words_positioned_without_space_glyphs_are_separated() -> None:
    # TJ arrays that move the pen instead of drawing a space (common in LaTeX output).
    data = make_pdf("BT /F1 12 Tf 72 700 Td [(Annual)-300(leave)-300(policy)] TJ ET")
    assert texts(pdf.parse(data, WHOLE)) == ["Annual leave policy"]


def test_not_a_pdf() -> None:
    with pytest.raises(ParseError, match="not a PDF"):
        pdf.parse(b"<html>surely not a PDF</html>", WHOLE)


def test_multi_page_pdf_keeps_page_numbers() -> None:
    data = corpus_pdf("pdfminer.six/nonfree/dmca.pdf")  # 18 pages, empty password
    blocks = pdf.parse(data, WHOLE)
    pages = [block.page for block in blocks]
    assert pdf_page_count(data) == 18
    assert pages == sorted(pages)
    assert pages[0] == 1
    assert pages[-1] == 18
    assert len(set(pages)) >= 15


def test_english_pdf_words_are_not_glued() -> None:
    blocks = pdf.parse(corpus_pdf("pdfminer.six/nonfree/naacl06-shinyama.pdf"), WHOLE)
    text = " ".join(texts(blocks))
    assert (
        "Preemptive Information Extraction using Unrestricted Relation Discovery"
        in (text)
    )
    # "Ex-\nisting" in the PDF is joined back into one word.
    assert "Existing IE systems require a lot of time" in text
    words = re.findall(r"[A-Za-z]+", text)
    glued = [word for word in words if len(word) > 20]
    assert len(words) > 3000
    assert len(glued) < len(words) / 1000, glued[:10]


@pytest.mark.parametrize(
    "relative",
    [
        "pdfminer.six/encryption/rc4-40.pdf",
        "pdfminer.six/encryption/aes-128.pdf",
        "pdfminer.six/encryption/aes-256-r6.pdf",
        "unstructured/password.pdf",
    ],
)
def test_password_protected_pdf(relative: str) -> None:
    data = corpus_pdf(relative)
    with pytest.raises(ParseError, match="password") as caught:
        parse_document("pdf", data)
    assert str(CORPUS) not in caught.value.reason
    with pytest.raises(ParseError, match="password"):
        pdf_page_count(data)


@pytest.mark.parametrize(
    "relative",
    [
        "pdfminer.six/contrib/issue-00352-hash-twos-complement.pdf",
        "unstructured/copy-protected.pdf",
    ],
)
def test_pdf_encrypted_with_empty_password_parses(relative: str) -> None:
    assert pdf.parse(corpus_pdf(relative), WHOLE)


def test_truncated_pdf_is_damaged() -> None:
    data = corpus_pdf("pdfminer.six/nonfree/i1040nr.pdf")
    with pytest.raises(ParseError, match="damaged PDF"):
        parse_document("pdf", data[: len(data) // 2])


def test_pdf_with_corrupt_stream_keeps_what_is_readable() -> None:
    text = " ".join(
        texts(pdf.parse(corpus_pdf("pdfminer.six/zen_of_python_corrupted.pdf"), WHOLE))
    )
    assert "Beautiful is better than ugly." in text


@pytest.mark.parametrize(
    "relative",
    [
        "pdfminer.six/contrib/pdf-with-jbig2.pdf",
        "pypdf/imagemagick-CCITTFaxDecode.pdf",
        "unstructured/loremipsum-flat.pdf",
        # Also has a wrong xref table: the file is rescanned to find its pages.
        "pdfminer.six/nonfree/175.pdf",
    ],
)
def test_image_only_pdf_with_ocr_off_is_ocr_unavailable(relative: str) -> None:
    # With OCR on, these pages are read by it (tests/ingestion/formats/test_scans.py).
    data = corpus_pdf(relative)
    with pytest.raises(OcrUnavailable, match="OCR is switched off"):
        parse_document("pdf", data, ParseLimits(ocr_enabled=False))
    assert pdf_page_count(data) >= 1


def test_cjk_pdf_text_has_no_spaces_between_characters() -> None:
    text = " ".join(
        texts(pdf.parse(corpus_pdf("pdfminer.six/contrib/issue_566_test_2.pdf"), WHOLE))
    )
    assert "甲方" in text
    assert "中国饮料有限公司" in text


def test_multilingual_pdf() -> None:
    text = "\n".join(texts(pdf.parse(corpus_pdf("pypdf/multilang.pdf"), WHOLE)))
    assert "你好世界" in text
    assert "こんにちは世界" in text
    assert "Hello World" in text


def test_vertical_japanese_set_glyph_by_glyph_is_read_in_order() -> None:
    text = "".join(
        texts(pdf.parse(corpus_pdf("pdfminer.six/nonfree/kampo.pdf"), WHOLE))
    )
    assert "第二条第一項の表の青色" in text


def test_rotated_text_is_read_along_its_baseline() -> None:
    text = "\n".join(
        texts(
            pdf.parse(corpus_pdf("pdfminer.six/contrib/issue-449-vertical.pdf"), WHOLE)
        )
    )
    assert text.split() == ["Test", "Vertical", "Layout"]
