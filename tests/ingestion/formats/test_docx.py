"""DOCX: generated documents and the shared corpus."""

from __future__ import annotations

from pathlib import Path

import docx
import pytest
from docx.enum.style import WD_STYLE_TYPE
from docx.oxml import OxmlElement
from docx.oxml.ns import qn
from lxml import etree

from ingestion.blocks import HEADING, LIST_ITEM, PARAGRAPH, TABLE_ROW
from ingestion.chunking import chunk_blocks, full_text, join_chunk_runs
from ingestion.formats import docx as docx_format
from ingestion.formats import parse_document
from tests.ingestion.formats.common import CORPUS, WHOLE, save, texts


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

    blocks = docx_format.parse(save(document, tmp_path), WHOLE)
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
    blocks = docx_format.parse(save(document, tmp_path), WHOLE)
    assert [b.kind for b in blocks] == [HEADING, HEADING, PARAGRAPH]
    assert blocks[-1].heading_path == ("总则", "适用范围")


def test_docx_table_of_contents_entries_are_skipped(tmp_path: Path) -> None:
    document = docx.Document()
    toc = document.styles.add_style("toc 1", WD_STYLE_TYPE.PARAGRAPH)
    document.add_paragraph("1 Scope ........ 3", style=toc)
    document.add_paragraph("Body text.")
    assert texts(docx_format.parse(save(document, tmp_path), WHOLE)) == ["Body text."]


def test_docx_reads_the_corpus_drafts_in_order() -> None:
    folder = CORPUS / "docx" / "langchain-chatchat"
    files = sorted(folder.glob("*.docx")) if folder.is_dir() else []
    if not files:
        pytest.skip("docx corpus is not present")
    blocks = docx_format.parse(files[0].read_bytes(), WHOLE)
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
    assert tree.tag == docx_format._W_DOCUMENT
    monkeypatch.setattr(docx_format, "RETAIN_MAX_DOCX_BYTES", len(data) + 1)
    retained.clear()
    parse_document("docx", data, retain=retained)
    assert len(retained) == 1
    # From the limit on, the tree is freed at once: its memory matters more.
    monkeypatch.setattr(docx_format, "RETAIN_MAX_DOCX_BYTES", len(data))
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


def test_a_cell_spanning_columns_keeps_its_empty_columns(tmp_path: Path) -> None:
    """Empty cells are kept, so that every value stays under its header cell."""
    document = docx.Document()
    table = document.add_table(rows=2, cols=3)
    table.cell(0, 1).merge(table.cell(0, 2)).text = "Years"
    for column, value in enumerate(["Other", "44.1", ""]):
        table.cell(1, column).text = value

    blocks = docx_format.parse(save(document, tmp_path), WHOLE)

    assert [(b.kind, b.text) for b in blocks] == [
        (TABLE_ROW, " | Years | "),
        (TABLE_ROW, "Other | 44.1 | "),
    ]
