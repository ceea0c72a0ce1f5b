"""PDF tables: rows that keep their row label and column header."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pdfplumber.table import edges_to_intersections, merge_edges

from ingestion.blocks import PARAGRAPH, TABLE_ROW, Block
from ingestion.formats import pdf, pdf_tables
from ingestion.formats.base import ParseRequest
from ingestion.formats.pdf_layout import glyph_paragraphs
from tests.ingestion.formats import pdf_samples as samples
from tests.ingestion.formats.common import CORPUS, WHOLE, texts


def rows(blocks: list[Block]) -> list[str]:
    return [block.text for block in blocks if block.kind == TABLE_ROW]


def paragraphs(blocks: list[Block]) -> list[str]:
    return [block.text for block in blocks if block.kind == PARAGRAPH]


def paragraphs_only(glyphs, rulings, *, page, clean) -> list[Block]:
    """The page as it was read before tables were."""
    lines = (clean(lines) for lines in glyph_paragraphs(glyphs))
    return [Block(text=text, page=page) for text in lines if text]


def parse_without_tables(data: bytes, monkeypatch) -> list[Block]:
    with monkeypatch.context() as patch:
        patch.setattr(pdf, "page_blocks", paragraphs_only)
        return pdf.parse(data, WHOLE)


def corpus_pdf(relative: str) -> bytes:
    path = CORPUS / "pdf" / relative
    if not path.is_file():
        pytest.skip(f"corpus file pdf/{relative} is not present")
    return path.read_bytes()


GAPS_ROWS = [
    "Region | Q1 | Q2 | Q3",
    "East | 1,204 |  | 1,390",
    "West |  | 877 | 901",
    "North | 455 | 470 | ",
]


@pytest.mark.parametrize("ruled", [True, False], ids=["ruled", "unruled"])
def test_a_table_gives_its_header_row_then_rows_with_empty_cells_in_place(ruled):
    blocks = pdf.parse(samples.table_pdf(samples.GAPS, ruled=ruled), WHOLE)

    assert rows(blocks) == GAPS_ROWS
    assert {block.page for block in blocks} == {1}


@pytest.mark.parametrize("ruled", [True, False], ids=["ruled", "unruled"])
def test_text_around_the_table_stays_paragraphs_in_reading_order_once(ruled):
    blocks = pdf.parse(samples.table_pdf(samples.GAPS, ruled=ruled), WHOLE)

    assert texts(blocks) == [samples.BEFORE, *GAPS_ROWS, samples.AFTER]
    assert [block.kind for block in blocks] == [
        PARAGRAPH,
        *[TABLE_ROW] * 4,
        PARAGRAPH,
    ]


@pytest.mark.parametrize("ruled", [True, False], ids=["ruled", "unruled"])
def test_a_two_row_header_with_a_caption_over_the_years(ruled):
    data = samples.table_pdf(samples.INCOME, spans=samples.INCOME_SPANS, ruled=ruled)

    assert rows(pdf.parse(data, WHOLE)) == [
        " | Years ended June 30, |  | ",
        "(in millions) | 2019 | 2018 | Change",
        "Revenue | 125,843 | 110,360 | 14%",
        "Cost of revenue | 42,910 | 38,353 | 12%",
        "Operating expenses: |  |  | ",
        "Research and development | 16,876 | 14,726 | 15%",
        "Sales and marketing | 18,213 | 17,469 | ",
        "Operating income | 42,959 | 35,058 | 23%",
    ]


@pytest.mark.parametrize("ruled", [True, False], ids=["ruled", "unruled"])
def test_a_chinese_table(ruled):
    data = samples.table_pdf(samples.CJK, ruled=ruled, font=samples.CJK_FONT)

    assert rows(pdf.parse(data, WHOLE)) == [
        "项目 | 2019年 | 2018年",
        "营业收入 | 8,520.3 | 7,910.6",
        "营业成本 | 5,112.8 | 4,870.1",
        "净利润 | 1,204.5 | 998.2",
    ]


def test_a_table_right_under_another_keeps_its_rows_to_itself():
    second = [
        ["City", "Q1", "Q2", "Q3"],
        ["Lyon", "310", "322", "340"],
        ["Nice", "120", "131", ""],
    ]
    data = samples.table_pdf([*samples.GAPS, *second], ruled=False)

    assert rows(pdf.parse(data, WHOLE)) == [
        *GAPS_ROWS,
        "City | Q1 | Q2 | Q3",
        "Lyon | 310 | 322 | 340",
        "Nice | 120 | 131 | ",
    ]


def test_a_detached_currency_sign_stays_with_its_amount():
    blocks = pdf.parse(
        samples.table_pdf(samples.SALES, spans=samples.SALES_SPANS, ruled=False),
        WHOLE,
    )

    assert "Total sales | $ 1,496.5 | $ 1,202.9 | $ 1,107.7" in rows(blocks)


def test_pages_without_tables_read_as_before(monkeypatch):
    data = samples.text_pdf(3)

    blocks = pdf.parse(data, WHOLE)

    assert blocks == parse_without_tables(data, monkeypatch)
    assert not rows(blocks)


@pytest.mark.parametrize(
    "relative",
    [
        "unstructured/korean-text-with-tables.pdf",
        "pdfminer.six/simple3.pdf",
        "pdfminer.six/simple1.pdf",
    ],
)
def test_corpus_pages_without_a_grid_or_amounts_read_as_before(relative, monkeypatch):
    data = corpus_pdf(relative)

    assert pdf.parse(data, WHOLE) == parse_without_tables(data, monkeypatch)


def test_a_ruled_invoice_from_the_corpus_keeps_its_columns(monkeypatch):
    data = corpus_pdf("pdfminer.six/contrib/issue-625-identity-cmap.pdf")

    blocks = pdf.parse(data, WHOLE)

    assert rows(blocks)[:3] == [
        "Lp | Nazwa | Jedn | Ilość | Cena netto | Stawka | Wartość netto "
        "| Wartość brutto",
        "1 | Testy Książę | szt. | 1 | 33,00 | 23% | 33,00 | 40,59",
        "2 | Dokumentacja - żółw | szt. | 2 | 44,00 | 23% | 88,00 | 108,24",
    ]


@pytest.mark.parametrize(
    "relative",
    [
        "pdfminer.six/contrib/issue-625-identity-cmap.pdf",
        "pdfminer.six/nonfree/i1040nr.pdf",  # tax tables one under the other
        "pdfminer.six/nonfree/nlp2004slides.pdf",  # Japanese tables
    ],
)
def test_tables_of_the_corpus_lose_or_repeat_no_text(relative, monkeypatch):
    data = corpus_pdf(relative)

    assert characters(pdf.parse(data, WHOLE)) == characters(
        parse_without_tables(data, monkeypatch)
    )


def characters(blocks: list[Block]) -> list[str]:
    """Every character once per occurrence, whatever the order (cell separators,
    which the files themselves also use, and spaces aside)."""
    text = " ".join(texts(blocks)).replace(" | ", " ")
    return sorted(char for char in text if not char.isspace() and char != "|")


def test_each_shard_finds_the_tables_of_its_own_pages():
    tables = [(samples.GAPS, []), (samples.CJK, [])]
    data = samples.tables_pdf(tables, font=samples.CJK_FONT)

    shards = [pdf.parse(data, ParseRequest(shard=(index, 2))) for index in range(2)]

    assert [rows(blocks) for blocks in shards] == [
        rows(pdf.parse(samples.table_pdf(samples.GAPS, font=samples.CJK_FONT), WHOLE)),
        rows(pdf.parse(samples.table_pdf(samples.CJK, font=samples.CJK_FONT), WHOLE)),
    ]
    assert [{block.page for block in blocks} for blocks in shards] == [{1}, {2}]


def test_prose_with_numbers_in_two_columns_is_not_a_table():
    data = samples.tables_pdf(
        [([["In 2019 the plant made 1,200 units.", "It sold 1,100 of them."]], [])],
        ruled=False,
        before="",
        after="",
    )

    assert not rows(pdf.parse(data, WHOLE))


# Rulings near a few grid lines, so that edges snap, join and cross, often just
# at the tolerance (3 points) where a < against a <= would tell.
_LINES = st.sampled_from([10.0, 50.0, 90.0, 130.0])
_NUDGE = st.sampled_from([0.0, 1.0, 3.0, -3.0, 0.3, 2.9, 3.1, -0.4]) | st.floats(-4, 4)
_LENGTH = st.sampled_from([2.0, 3.0, 5.0, 37.0, 40.0, 43.0, 80.0]) | st.floats(0, 150)


@st.composite
def _rulings(draw) -> list[tuple[float, float, float, float]]:
    rulings = []
    for _ in range(draw(st.integers(0, 30))):
        x = draw(_LINES) + draw(_NUDGE)
        y = -(draw(_LINES) + draw(_NUDGE))
        length = draw(_LENGTH)
        if draw(st.booleans()):
            rulings.append((x, y, x + length, y))
        else:
            rulings.append((x, y - length, x, y))
    return rulings


@settings(max_examples=300, deadline=None)
@given(_rulings())
def test_the_grid_search_merges_and_crosses_edges_as_pdfplumber_does(rulings):
    """`pdf_tables` copies pdfplumber's edge merging and crossing on tuples:
    the same edges, in the same order, and the same crossings."""
    dicts = [
        {
            "x0": x0,
            "x1": x1,
            "top": top,
            "bottom": bottom,
            "doctop": top,
            "width": x1 - x0,
            "height": bottom - top,
            "orientation": "h" if top == bottom else "v",
        }
        for x0, top, x1, bottom in rulings
    ]
    theirs = merge_edges(dicts, 3.0, 3.0, 3.0, 3.0)
    ours = pdf_tables._merged_edges(rulings)

    def box(edge: dict) -> tuple:
        return (edge["x0"], edge["top"], edge["x1"], edge["bottom"])

    flat = [(*box(e), e["width"], e["height"], e["orientation"] == "h") for e in theirs]
    assert ours == flat

    long = [e for e in theirs if max(e["width"], e["height"]) >= 3.0]
    crossings = {
        point: ({box(e) for e in sides["v"]}, {box(e) for e in sides["h"]})
        for point, sides in edges_to_intersections(long, 3.0, 3.0).items()
    }
    ours_long = [e for e in ours if max(e[4], e[5]) >= 3.0]
    assert pdf_tables._intersections(ours_long) == crossings
