"""Parsers: real PDFs from the shared corpus, generated DOCX/HTML/Markdown/text."""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

import docx
import pytest
from docx.enum.style import WD_STYLE_TYPE
from docx.oxml import OxmlElement
from docx.oxml.ns import qn
from lxml import etree

from ingestion import parsers
from ingestion.chunking import chunk_blocks, full_text, join_chunk_runs
from ingestion.parsers import (
    HEADING,
    LIST_ITEM,
    PARAGRAPH,
    TABLE_ROW,
    Block,
    ParseError,
    decode_text,
    parse_document,
    parse_docx,
    parse_html,
    parse_markdown,
    parse_pdf,
    parse_text,
    pdf_page_count,
)

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared" / "corpus"

COMMA = "\uff0c"  # fullwidth comma, spelled out to keep ruff's RUF001 quiet


def corpus_pdf(relative: str) -> bytes:
    path = CORPUS / "pdf" / relative
    if not path.is_file():
        pytest.skip(f"corpus file pdf/{relative} is not present")
    return path.read_bytes()


def texts(blocks: list[Block]) -> list[str]:
    return [block.text for block in blocks]


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


# --- parse_document contract ------------------------------------------------------


def test_unknown_kind_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="unsupported document kind"):
        parse_document("xlsx", b"whatever")


def test_unexpected_exception_becomes_parse_error_with_type_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def explode(data: bytes) -> list[Block]:
        raise KeyError("/srv/secret/path.txt")

    monkeypatch.setitem(parsers._PARSERS, "text", explode)
    with pytest.raises(ParseError) as caught:
        parse_document("text", b"hello")
    assert "KeyError" in caught.value.reason
    assert "/srv" not in caught.value.reason


def test_memory_error_is_not_swallowed(monkeypatch: pytest.MonkeyPatch) -> None:
    def exhaust(data: bytes) -> list[Block]:
        raise MemoryError

    monkeypatch.setitem(parsers._PARSERS, "text", exhaust)
    with pytest.raises(MemoryError):
        parse_document("text", b"hello")


def test_parse_error_reason_is_short_and_single_line() -> None:
    error = ParseError("damaged\nPDF: " + "x" * 500)
    assert len(error.reason) <= 200
    assert "\n" not in error.reason
    assert str(error) == error.reason


def test_whitespace_blocks_are_dropped() -> None:
    assert parse_document("text", b"  \n\n \t \n") == []


# --- PDF: generated files -----------------------------------------------------------


def test_pdf_paragraphs_hyphenation_and_pages() -> None:
    data = make_pdf(
        lines_at(72, 700, "Annual leave is granted to every", "employee of the com-")
        + "\n"
        + lines_at(72, 672, "pany after probation.")
        + "\n"
        + lines_at(72, 600, "A second paragraph follows."),
        lines_at(72, 700, "Text on the second page."),
    )
    blocks = parse_pdf(data)
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
    assert texts(parse_pdf(make_pdf("\n".join(ops)))) == [
        "Left column starts here and continues below.",
        "Right column is about something else entirely.",
    ]


def test_pdf_words_positioned_without_space_glyphs_are_separated() -> None:
    # TJ arrays that move the pen instead of drawing a space (common in LaTeX output).
    data = make_pdf("BT /F1 12 Tf 72 700 Td [(Annual)-300(leave)-300(policy)] TJ ET")
    assert texts(parse_pdf(data)) == ["Annual leave policy"]


def test_not_a_pdf() -> None:
    with pytest.raises(ParseError, match="not a PDF"):
        parse_pdf(b"<html>surely not a PDF</html>")


# --- PDF: corpus --------------------------------------------------------------------


def test_multi_page_pdf_keeps_page_numbers() -> None:
    data = corpus_pdf("pdfminer.six/nonfree/dmca.pdf")  # 18 pages, empty password
    blocks = parse_pdf(data)
    pages = [block.page for block in blocks]
    assert pdf_page_count(data) == 18
    assert pages == sorted(pages)
    assert pages[0] == 1
    assert pages[-1] == 18
    assert len(set(pages)) >= 15


def test_english_pdf_words_are_not_glued() -> None:
    blocks = parse_pdf(corpus_pdf("pdfminer.six/nonfree/naacl06-shinyama.pdf"))
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
    assert parse_pdf(corpus_pdf(relative))


def test_truncated_pdf_is_damaged() -> None:
    data = corpus_pdf("pdfminer.six/nonfree/i1040nr.pdf")
    with pytest.raises(ParseError, match="damaged PDF"):
        parse_document("pdf", data[: len(data) // 2])


def test_pdf_with_corrupt_stream_keeps_what_is_readable() -> None:
    text = " ".join(
        texts(parse_pdf(corpus_pdf("pdfminer.six/zen_of_python_corrupted.pdf")))
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
def test_image_only_pdf_gives_no_blocks(relative: str) -> None:
    data = corpus_pdf(relative)
    assert parse_document("pdf", data) == []
    assert pdf_page_count(data) >= 1


def test_cjk_pdf_text_has_no_spaces_between_characters() -> None:
    text = " ".join(
        texts(parse_pdf(corpus_pdf("pdfminer.six/contrib/issue_566_test_2.pdf")))
    )
    assert "甲方" in text
    assert "中国饮料有限公司" in text


def test_multilingual_pdf() -> None:
    text = "\n".join(texts(parse_pdf(corpus_pdf("pypdf/multilang.pdf"))))
    assert "你好世界" in text
    assert "こんにちは世界" in text
    assert "Hello World" in text


def test_vertical_japanese_set_glyph_by_glyph_is_read_in_order() -> None:
    text = "".join(texts(parse_pdf(corpus_pdf("pdfminer.six/nonfree/kampo.pdf"))))
    assert "第二条第一項の表の青色" in text


def test_rotated_text_is_read_along_its_baseline() -> None:
    text = "\n".join(
        texts(parse_pdf(corpus_pdf("pdfminer.six/contrib/issue-449-vertical.pdf")))
    )
    assert text.split() == ["Test", "Vertical", "Layout"]


# --- DOCX ---------------------------------------------------------------------------


def save(document: docx.document.Document, tmp_path: Path) -> bytes:
    path = tmp_path / "sample.docx"
    document.save(str(path))
    return path.read_bytes()


def test_docx_headings_tables_and_order(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_heading("Handbook", level=0)  # style "Title"
    document.add_heading("Leave", level=1)
    document.add_paragraph("Every employee receives 25 days.")
    table = document.add_table(rows=3, cols=3)
    merged = table.cell(0, 0).merge(table.cell(0, 1))
    merged.text = "Days by year"
    table.cell(0, 2).text = "Notes"
    for column, value in enumerate(["2024", "25", "25"]):
        table.cell(1, column).text = value
    # row 2 stays empty
    document.add_heading("Carry-over", level=2)
    document.add_paragraph("Up to five days carry over.", style="List Bullet")
    hidden = document.add_paragraph("Visible text")
    hidden.add_run(" hidden note").font.hidden = True
    document.add_heading("Expenses", level=1)
    document.add_paragraph("Keep receipts.")

    blocks = parse_docx(save(document, tmp_path))
    assert [(b.kind, b.text, b.heading_path) for b in blocks] == [
        (HEADING, "Handbook", ("Handbook",)),
        (HEADING, "Leave", ("Handbook", "Leave")),
        (PARAGRAPH, "Every employee receives 25 days.", ("Handbook", "Leave")),
        # The merged cell keeps the column it spans: values stay under headers.
        (TABLE_ROW, "Days by year |  | Notes", ("Handbook", "Leave")),
        (TABLE_ROW, "2024 | 25 | 25", ("Handbook", "Leave")),
        (HEADING, "Carry-over", ("Handbook", "Leave", "Carry-over")),
        (LIST_ITEM, "Up to five days carry over.", ("Handbook", "Leave", "Carry-over")),
        (PARAGRAPH, "Visible text", ("Handbook", "Leave", "Carry-over")),
        (HEADING, "Expenses", ("Handbook", "Expenses")),
        (PARAGRAPH, "Keep receipts.", ("Handbook", "Expenses")),
    ]


def test_docx_chinese_heading_styles_and_outline_levels(tmp_path: Path) -> None:
    document = docx.Document()
    chinese = document.styles.add_style("标题 1", WD_STYLE_TYPE.PARAGRAPH)
    # Chinese standard templates mark clause titles with an outline level only.
    clause = document.styles.add_style("Clause title", WD_STYLE_TYPE.PARAGRAPH)
    outline = OxmlElement("w:outlineLvl")
    outline.set(qn("w:val"), "1")
    clause.element.get_or_add_pPr().append(outline)

    document.add_paragraph("总则", style=chinese)
    document.add_paragraph("适用范围", style=clause)
    document.add_paragraph("本标准适用于核电厂。")
    blocks = parse_docx(save(document, tmp_path))
    assert [b.kind for b in blocks] == [HEADING, HEADING, PARAGRAPH]
    assert blocks[-1].heading_path == ("总则", "适用范围")


def test_docx_table_of_contents_entries_are_skipped(tmp_path: Path) -> None:
    document = docx.Document()
    toc = document.styles.add_style("toc 1", WD_STYLE_TYPE.PARAGRAPH)
    document.add_paragraph("1 Scope ........ 3", style=toc)
    document.add_paragraph("Body text.")
    assert texts(parse_docx(save(document, tmp_path))) == ["Body text."]


def test_docx_reads_the_corpus_drafts_in_order() -> None:
    folder = CORPUS / "docx" / "langchain-chatchat"
    files = sorted(folder.glob("*.docx")) if folder.is_dir() else []
    if not files:
        pytest.skip("docx corpus is not present")
    blocks = parse_docx(files[0].read_bytes())
    headings = [b for b in blocks if b.kind == HEADING]
    assert len(headings) > 10
    assert any(len(b.heading_path) >= 3 for b in blocks)
    assert any(b.kind == TABLE_ROW for b in blocks)


def sectioned_docx(tmp_path: Path) -> bytes:
    """Chapters with parts, tables, headings in a row and a heading with nothing
    under it: the shapes a cut at a heading must keep as the whole has them."""
    document = docx.Document()
    document.add_heading("Handbook", level=0)
    for chapter in range(12):
        document.add_heading(f"Chapter {chapter}", level=1)
        if chapter % 3 == 0:
            document.add_heading(f"Part {chapter}", level=2)  # right after a heading
        for rule in range(4):
            document.add_paragraph(
                f"Rule {chapter}.{rule}. " + "Keep the receipt of every trip. " * 30
            )
        if chapter % 4 == 1:
            table = document.add_table(rows=4, cols=2)
            for row in range(4):
                table.cell(row, 0).text = f"Item {chapter}.{row}"
                table.cell(row, 1).text = f"{row * 10} EUR"
        if chapter % 5 == 2:
            document.add_heading(f"Notes {chapter}", level=2)  # nothing under it
    return save(document, tmp_path)


@pytest.mark.parametrize("count", [2, 3, 5])
def test_docx_shards_are_cut_at_headings_and_add_up_to_the_whole(
    tmp_path: Path, count: int
) -> None:
    data = sectioned_docx(tmp_path)
    whole = parse_document("docx", data)

    shards = [parse_document("docx", data, shard=(i, count)) for i in range(count)]

    assert [block for shard in shards for block in shard] == whole
    assert all(shards)
    assert all(shard[0].kind == HEADING for shard in shards[1:])
    # Chunked apart, the shards give exactly the chunks of the whole.
    runs = [(chunk_blocks(shard), len(full_text(shard))) for shard in shards]
    assert join_chunk_runs(runs) == chunk_blocks(whole)


def test_a_docx_tree_is_handed_to_the_caller_to_free_after_answering(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = sectioned_docx(tmp_path)
    retained: list = []

    blocks = parse_document("docx", data, shard=(1, 2), retain=retained)

    assert blocks == parse_document("docx", data, shard=(1, 2))
    [tree] = retained
    assert tree.tag == parsers._W_DOCUMENT
    monkeypatch.setattr(parsers, "RETAIN_MAX_DOCX_BYTES", len(data) + 1)
    retained.clear()
    parse_document("docx", data, retain=retained)
    assert len(retained) == 1
    # From the limit on, the tree is freed at once: its memory matters more.
    monkeypatch.setattr(parsers, "RETAIN_MAX_DOCX_BYTES", len(data))
    retained.clear()
    assert parse_document("docx", data, retain=retained) == parse_document("docx", data)
    assert retained == []


def test_a_docx_without_headings_stays_in_one_shard(tmp_path: Path) -> None:
    document = docx.Document()
    for n in range(50):
        document.add_paragraph(f"Paragraph {n} without any heading above it.")
    data = save(document, tmp_path)

    assert parse_document("docx", data, shard=(0, 2)) == parse_document("docx", data)
    assert parse_document("docx", data, shard=(1, 2)) == []


def test_corpus_docx_shards_chunk_like_the_whole() -> None:
    files = sorted((CORPUS / "docx").rglob("*.docx"))
    if not files:
        pytest.skip("docx corpus is not present")
    split = 0
    for path in files:
        data = path.read_bytes()
        whole = chunk_blocks(parse_document("docx", data))
        shards = [parse_document("docx", data, shard=(i, 2)) for i in range(2)]
        runs = [(chunk_blocks(shard), len(full_text(shard))) for shard in shards]
        assert join_chunk_runs(runs) == whole, path.name
        split += all(shards)
    assert split >= 5  # the four drafts and the handbook have cut points


@pytest.mark.parametrize(
    "data",
    [b"not a zip at all", b"", b"PK\x03\x04 truncated"],
    ids=["garbage", "empty", "truncated-zip"],
)
def test_broken_docx(data: bytes) -> None:
    with pytest.raises(ParseError, match="not a valid DOCX archive"):
        parse_document("docx", data)


def test_a_docx_body_without_paragraphs_splits_into_empty_shards(
    tmp_path: Path,
) -> None:
    document = docx.Document()
    for paragraph in document.paragraphs:
        paragraph._p.getparent().remove(paragraph._p)
    data = save(document, tmp_path)

    assert [parse_document("docx", data, shard=(i, 2)) for i in range(2)] == [[], []]


def test_docx_paragraph_properties_after_a_comment_still_count(
    tmp_path: Path,
) -> None:
    document = docx.Document()
    heading = document.add_heading("Leave", level=1)
    heading._p.insert(0, etree.Comment("written by another tool"))
    document.add_paragraph("Twenty-five days.")

    blocks = parse_document("docx", save(document, tmp_path))

    assert [(b.kind, b.heading_path) for b in blocks] == [
        (HEADING, ("Leave",)),
        (PARAGRAPH, ("Leave",)),
    ]


def test_docx_parts_are_found_by_relationship_not_by_name(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_heading("Leave", level=1)
    document.add_paragraph("Twenty-five days.")
    renamed = {"word/document.xml": "content/main.xml"}
    buffer = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(save(document, tmp_path))) as original,
        zipfile.ZipFile(buffer, "w") as moved,
    ):
        for info in original.infolist():
            data = original.read(info)
            if info.filename in ("[Content_Types].xml", "_rels/.rels"):
                data = data.replace(b"/word/document.xml", b"/content/main.xml")
                data = data.replace(b'"word/document.xml"', b'"content/main.xml"')
            if info.filename == "word/_rels/document.xml.rels":
                info.filename = "content/_rels/main.xml.rels"
                styles = b'Target="../word/styles.xml"'  # relative to the moved part
                data = data.replace(b'Target="styles.xml"', styles)
            moved.writestr(renamed.get(info.filename, info.filename), data)

    blocks = parse_document("docx", buffer.getvalue())

    assert [(b.kind, b.text) for b in blocks] == [
        (HEADING, "Leave"),
        (PARAGRAPH, "Twenty-five days."),
    ]


def test_zip_that_is_not_a_docx() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("hello.txt", "hi")
    with pytest.raises(ParseError, match="DOCX"):
        parse_document("docx", buffer.getvalue())


def test_truncated_real_docx(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_paragraph("Some text " * 200)
    data = save(document, tmp_path)
    with pytest.raises(ParseError):
        parse_document("docx", data[: len(data) // 2])


# --- HTML ---------------------------------------------------------------------------

PAGE = """<!DOCTYPE html>
<html><head>
<meta charset="utf-8"><title>Browser title</title>
<style>body { color: red }</style>
<script>var secret = "do not index";</script>
</head><body>
<noscript>Enable JavaScript</noscript>
<template><p>template text</p></template>
<!-- a comment -->
<h1>Leave &amp; absence</h1>
<p>Every <b>employee</b> <i>receives</i>&nbsp;25&nbsp;days.<br>Second line.</p>
<div hidden>hidden div</div>
<div style="display: none">invisible</div>
<h2>Details</h2>
<ul><li>First item</li><li>Second <a href="/x">item</a></li></ul>
<table>
  <tr><th>Year</th><th>Days</th></tr>
  <tr><td>2024</td><td>25</td></tr>
  <tr><td colspan="2">Total: 25</td></tr>
</table>
<h2>Other</h2>
<pre>line one
  line two</pre>
</body></html>
"""


def test_html_visible_text_structure() -> None:
    blocks = parse_html(PAGE.encode())
    assert [(b.kind, b.text, b.heading_path) for b in blocks] == [
        (HEADING, "Leave & absence", ("Leave & absence",)),
        (
            PARAGRAPH,
            "Every employee receives 25 days. Second line.",
            ("Leave & absence",),
        ),
        (HEADING, "Details", ("Leave & absence", "Details")),
        (LIST_ITEM, "First item", ("Leave & absence", "Details")),
        (LIST_ITEM, "Second item", ("Leave & absence", "Details")),
        (TABLE_ROW, "Year | Days", ("Leave & absence", "Details")),
        (TABLE_ROW, "2024 | 25", ("Leave & absence", "Details")),
        (TABLE_ROW, "Total: 25", ("Leave & absence", "Details")),
        (HEADING, "Other", ("Leave & absence", "Other")),
        (PARAGRAPH, "line one\n  line two", ("Leave & absence", "Other")),
    ]
    everything = " ".join(texts(blocks))
    for dropped in (
        "secret",
        "color",
        "Browser title",
        "JavaScript",
        "template",
        "comment",
        "hidden",
        "invisible",
    ):
        assert dropped not in everything


def test_html_double_br_splits_paragraphs() -> None:
    assert texts(parse_html(b"<p>one<br><br>two</p>")) == ["one", "two"]


CHINESE = "年假为二十五天。"


@pytest.mark.parametrize(
    "meta",
    [
        '<meta charset="gbk">',
        '<meta http-equiv="Content-Type" content="text/html; charset=gb2312">',
    ],
)
def test_html_declared_gbk_charset(meta: str) -> None:
    data = f"<html><head>{meta}</head><body><p>{CHINESE}</p></body></html>".encode(
        "gbk"
    )
    assert texts(parse_html(data)) == [CHINESE]


def test_html_declared_charset_loses_to_valid_utf8() -> None:
    # Like the corpus page qq.html: UTF-8 bytes, <meta> says gb2312.
    data = f'<meta charset="gb2312"><p>{CHINESE}</p>'.encode()
    assert texts(parse_html(data)) == [CHINESE]


def test_html_wrong_declared_charset_falls_back() -> None:
    data = '<meta charset="utf-8"><p>Café crème \u20ac5</p>'.encode("cp1252")
    assert texts(parse_html(data)) == ["Café crème \u20ac5"]


def test_html_utf16_with_bom() -> None:
    data = "<p>Grüße 世界</p>".encode("utf-16")
    assert texts(parse_html(data)) == ["Grüße 世界"]


def test_html_corpus_utf16_page() -> None:
    path = CORPUS / "html" / "unstructured" / "example-steelJIS-datasheet-utf-16.html"
    if not path.is_file():
        pytest.skip("html corpus is not present")
    text = " ".join(texts(parse_html(path.read_bytes())))
    assert "SNB22-3" in text
    assert "成分" in text


# --- decoding -----------------------------------------------------------------------

SAMPLE = "Grüße aus Köln \u2013 中文"


@pytest.mark.parametrize(
    "encoding", ["utf-8", "utf-8-sig", "utf-16", "utf-16-be", "utf-32"]
)
def test_decode_unicode_encodings(encoding: str) -> None:
    data = SAMPLE.encode(encoding)
    if encoding == "utf-16-be":
        data = b"\xfe\xff" + data
    assert decode_text(data) == SAMPLE


@pytest.mark.parametrize("encoding", ["gb18030", "gbk"])
def test_decode_chinese_legacy_encodings(encoding: str) -> None:
    text = f"核电厂定期安全审查{COMMA}年假为二十五天。 ISO 9001"
    assert decode_text(text.encode(encoding)) == text


@pytest.mark.parametrize(
    "text",
    [
        "Müller über Straße und Grüße",
        "déjà vu, naïve café",
        "äöüß",
    ],
)
def test_decode_latin1_is_not_mistaken_for_chinese(text: str) -> None:
    assert decode_text(text.encode("latin-1")) == text


def test_decode_cp1252_punctuation() -> None:
    text = "\u201cQuoted\u201d \u2013 costs \u20ac5"
    assert decode_text(text.encode("cp1252")) == text


def test_decode_honours_a_declared_charset() -> None:
    text = "Привет, мир"
    assert decode_text(text.encode("koi8-r"), declared="koi8-r") == text


@pytest.mark.parametrize("declared", ["no-such-charset", "rot13", "zlib", "idna"])
def test_decode_ignores_unusable_declared_charsets(declared: str) -> None:
    text = "café"
    assert decode_text(text.encode("latin-1"), declared=declared) == text


def test_markdown_in_latin1_from_corpus() -> None:
    path = CORPUS / "markdown" / "unstructured" / "umlauts-non-utf8.md"
    if not path.is_file():
        pytest.skip("markdown corpus is not present")
    blocks = parse_markdown(path.read_bytes())
    assert texts(blocks) == ["können", "können", "äöüß"]


# --- Markdown -----------------------------------------------------------------------

MARKDOWN = """---
title: Handbook
tags: [hr]
---
# Leave policy

Every **employee** gets _25_ days, see [the rules](https://example.com/rules)
and `config.yaml`. ![diagram](img/leave.png)

Carry-over
==========

- First item
- Second item with __bold__
  continued on the next line

```python
# not a heading
print("hi")
```

## Table

| Year | Days |
|------|-----:|
| 2024 | 25 |

### Deep
Text under deep.

## Back up
Text under back up.
"""


def test_markdown_structure() -> None:
    blocks = parse_markdown(MARKDOWN.encode())
    assert [(b.kind, b.text, b.heading_path) for b in blocks] == [
        (HEADING, "Leave policy", ("Leave policy",)),
        (
            PARAGRAPH,
            "Every employee gets 25 days, see the rules and config.yaml.",
            ("Leave policy",),
        ),
        (HEADING, "Carry-over", ("Carry-over",)),
        (LIST_ITEM, "First item", ("Carry-over",)),
        (
            LIST_ITEM,
            "Second item with bold continued on the next line",
            ("Carry-over",),
        ),
        (PARAGRAPH, '# not a heading\nprint("hi")', ("Carry-over",)),
        (HEADING, "Table", ("Carry-over", "Table")),
        (TABLE_ROW, "Year | Days", ("Carry-over", "Table")),
        (TABLE_ROW, "2024 | 25", ("Carry-over", "Table")),
        (HEADING, "Deep", ("Carry-over", "Table", "Deep")),
        (PARAGRAPH, "Text under deep.", ("Carry-over", "Table", "Deep")),
        (HEADING, "Back up", ("Carry-over", "Back up")),
        (PARAGRAPH, "Text under back up.", ("Carry-over", "Back up")),
    ]


def test_markdown_setext_dash_is_level_two_and_rule_is_not_a_heading() -> None:
    data = b"Top\n===\n\nSub\n---\n\ntext\n\n---\n\nafter rule\n"
    blocks = parse_markdown(data)
    assert [(b.kind, b.text, b.heading_path) for b in blocks] == [
        (HEADING, "Top", ("Top",)),
        (HEADING, "Sub", ("Top", "Sub")),
        (PARAGRAPH, "text", ("Top", "Sub")),
        (PARAGRAPH, "after rule", ("Top", "Sub")),
    ]


def test_markdown_chinese_lines_join_without_spaces() -> None:
    data = "# 标题\n\n第一行\n第二行。\n".encode()
    assert texts(parse_markdown(data)) == [
        "标题",
        "第一行第二行。",
    ]


def test_markdown_hash_without_space_is_not_a_heading() -> None:
    blocks = parse_markdown(b"#hashtag is text\n")
    assert [(b.kind, b.text) for b in blocks] == [(PARAGRAPH, "#hashtag is text")]


# --- plain text ---------------------------------------------------------------------


def test_text_paragraphs() -> None:
    data = ("First line\nsame paragraph.\r\n\r\nSecond.\n\n\n第一\n第二").encode()
    assert texts(parse_text(data)) == [
        "First line same paragraph.",
        "Second.",
        "第一第二",
    ]


class TestEmptyTableCells:
    """Empty cells are kept, so that every value stays under its header cell."""

    def test_markdown(self) -> None:
        blocks = parse_markdown(
            b"|  | 2019 | 2018 |\n|---|---|---|\n| Other | 44.1 |  |\n|  |  |  |\n"
        )
        assert [(b.kind, b.text) for b in blocks] == [
            (TABLE_ROW, " | 2019 | 2018"),
            (TABLE_ROW, "Other | 44.1 | "),
        ]

    def test_html(self) -> None:
        blocks = parse_html(
            b"<table><tr><th></th><th>2019</th></tr>"
            b"<tr><td>Other</td><td>44.1</td></tr><tr><td></td><td> </td></tr></table>"
        )
        assert [(b.kind, b.text) for b in blocks] == [
            (TABLE_ROW, " | 2019"),
            (TABLE_ROW, "Other | 44.1"),
        ]

    def test_docx_cell_spanning_columns(self, tmp_path: Path) -> None:
        document = docx.Document()
        table = document.add_table(rows=2, cols=3)
        table.cell(0, 1).merge(table.cell(0, 2)).text = "Years"
        for column, value in enumerate(["Other", "44.1", ""]):
            table.cell(1, column).text = value

        blocks = parse_docx(save(document, tmp_path))

        assert [(b.kind, b.text) for b in blocks] == [
            (TABLE_ROW, " | Years | "),
            (TABLE_ROW, "Other | 44.1 | "),
        ]
