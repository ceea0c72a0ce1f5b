"""PPTX: presentations built here with python-pptx, and the shared corpus."""

from __future__ import annotations

import io
import zipfile

import pytest
from pptx import Presentation
from pptx.util import Inches

from ingestion.blocks import (
    HEADING,
    LIST_ITEM,
    PARAGRAPH,
    TABLE_ROW,
    ParseError,
    ParseLimits,
    TooManyPages,
)
from ingestion.formats import ParseRequest, parse_document
from ingestion.formats import pptx as pptx_format
from tests.edge_samples import strict_ooxml
from tests.ingestion.formats.common import CORPUS, WHOLE

TITLE_AND_CONTENT, BLANK = 1, 6


def saved(presentation) -> bytes:
    buffer = io.BytesIO()
    presentation.save(buffer)
    return buffer.getvalue()


def textbox(slide, text: str, *, left: float, top: float):
    box = slide.shapes.add_textbox(Inches(left), Inches(top), Inches(3), Inches(0.5))
    box.text_frame.text = text
    return box


def quarterly_deck() -> bytes:
    deck = Presentation()
    results = deck.slides.add_slide(deck.slide_layouts[TITLE_AND_CONTENT])
    results.shapes.title.text = "Quarterly results"
    body = results.placeholders[1].text_frame
    body.text = "Revenue grew in every region"
    detail = body.add_paragraph()
    detail.text = "East grew fastest"
    detail.level = 1
    # Added bottom first: reading order comes from the positions.
    textbox(results, "Source: finance team", left=1, top=7)
    textbox(results, "Right of the footnote", left=5, top=7)
    table = results.shapes.add_table(
        3, 3, Inches(1), Inches(4.5), Inches(6), Inches(1.2)
    ).table
    for row, cells in enumerate(
        [
            ("Region", "Q3 revenue", "Q4 revenue"),
            ("East", "1,204", ""),
            ("West", "980", "1,010"),
        ]
    ):
        for column, value in enumerate(cells):
            table.cell(row, column).text = value
    results.notes_slide.notes_text_frame.text = "Thank the sales team.\nMention East."

    untitled = deck.slides.add_slide(deck.slide_layouts[BLANK])
    group = untitled.shapes.add_group_shape()
    group.shapes.add_textbox(
        Inches(1), Inches(3), Inches(2), Inches(1)
    ).text_frame.text = "Lower member of the group"
    group.shapes.add_textbox(
        Inches(1), Inches(1), Inches(2), Inches(1)
    ).text_frame.text = "Upper member of the group"

    hidden = deck.slides.add_slide(deck.slide_layouts[TITLE_AND_CONTENT])
    hidden.shapes.title.text = "Draft numbers"
    hidden.placeholders[1].text_frame.text = "Not for the audience"
    hidden.element.set("show", "0")

    closing = deck.slides.add_slide(deck.slide_layouts[TITLE_AND_CONTENT])
    closing.shapes.title.text = "Next steps"
    closing.placeholders[1].text_frame.text = "Hire two engineers"
    return saved(deck)


def test_slides_become_sections_in_reading_order() -> None:
    blocks = parse_document("pptx", quarterly_deck())

    assert [(block.kind, block.text, block.page) for block in blocks] == [
        (HEADING, "Quarterly results", 1),
        (LIST_ITEM, "Revenue grew in every region", 1),
        (LIST_ITEM, "East grew fastest", 1),
        (TABLE_ROW, "Region | Q3 revenue | Q4 revenue", 1),
        (TABLE_ROW, "East | 1,204 | ", 1),
        (TABLE_ROW, "West | 980 | 1,010", 1),
        (PARAGRAPH, "Source: finance team", 1),
        (PARAGRAPH, "Right of the footnote", 1),
        (HEADING, "Notes", 1),
        (PARAGRAPH, "Thank the sales team.", 1),
        (PARAGRAPH, "Mention East.", 1),
        (HEADING, "Slide 2", 2),
        (PARAGRAPH, "Upper member of the group", 2),
        (PARAGRAPH, "Lower member of the group", 2),
        # Slide 3 is hidden; the slide after it keeps its number.
        (HEADING, "Next steps", 4),
        (LIST_ITEM, "Hire two engineers", 4),
    ]
    paths = {block.text: block.heading_path for block in blocks}
    assert paths["East grew fastest"] == ("Quarterly results",)
    assert paths["Mention East."] == ("Quarterly results", "Notes")
    assert paths["Hire two engineers"] == ("Next steps",)


def test_table_rows_carry_their_header_row() -> None:
    rows = [b for b in parse_document("pptx", quarterly_deck()) if b.kind == TABLE_ROW]

    assert [row.table_header for row in rows] == [
        "",
        "Region | Q3 revenue | Q4 revenue",
        "Region | Q3 revenue | Q4 revenue",
    ]


def test_a_paragraph_without_a_bullet_in_a_body_placeholder_is_a_paragraph() -> None:
    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[TITLE_AND_CONTENT])
    slide.shapes.title.text = "Plain"
    paragraph = slide.placeholders[1].text_frame.paragraphs[0]
    paragraph.text = "No bullet here"
    paragraph._p.get_or_add_pPr().insert(
        0, paragraph._p.makeelement(pptx_format._A_BU_NONE)
    )

    blocks = parse_document("pptx", saved(deck))

    assert [(b.kind, b.text) for b in blocks] == [
        (HEADING, "Plain"),
        (PARAGRAPH, "No bullet here"),
    ]


def test_more_slides_than_allowed_is_too_many_pages() -> None:
    deck = Presentation()
    for _ in range(3):
        deck.slides.add_slide(deck.slide_layouts[BLANK])

    with pytest.raises(TooManyPages, match="3 slides, more than the 2 limit"):
        pptx_format.parse(saved(deck), ParseRequest(limits=ParseLimits(max_slides=2)))


def test_a_damaged_or_foreign_package_is_a_parse_error() -> None:
    data = quarterly_deck()
    with pytest.raises(ParseError, match="not a valid PPTX archive"):
        parse_document("pptx", data[: len(data) // 2])
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
    with pytest.raises(ParseError, match="not a valid PPTX presentation"):
        parse_document("pptx", buffer.getvalue())


def test_the_zip_checks_apply() -> None:
    limits = ParseLimits(max_docx_uncompressed_bytes=1000)
    with pytest.raises(ParseError, match="the PPTX holds"):
        pptx_format.parse(quarterly_deck(), ParseRequest(limits=limits))


def test_a_strict_presentation_reads_like_its_transitional_original() -> None:
    transitional = quarterly_deck()
    strict = strict_ooxml(transitional)
    with zipfile.ZipFile(io.BytesIO(strict)) as archive:
        slide = archive.read("ppt/slides/slide1.xml")
    assert b"purl.oclc.org/ooxml/presentationml" in slide

    assert parse_document("pptx", strict) == parse_document("pptx", transitional)


def test_a_title_placeholder_too_long_for_a_title_is_read_as_body_text() -> None:
    # science-exploration-1p.pptx: python-pptx takes the slide's first
    # placeholder for its title; there it holds a list of 600 characters.
    lines = [
        f"Code {600 + 10 * n}: Division number {n} of the directorate" for n in range(8)
    ]
    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[TITLE_AND_CONTENT])
    slide.shapes.title.text = "\n".join(lines)
    textbox(slide, "Virtual Machine Environment Scorecard", left=1, top=6)

    blocks = parse_document("pptx", saved(deck))

    assert [(block.kind, block.text) for block in blocks[:1]] == [(HEADING, "Slide 1")]
    body = [block.text for block in blocks[1:]]
    assert body == [*lines, "Virtual Machine Environment Scorecard"]
    assert all(block.heading_path == ("Slide 1",) for block in blocks)


def test_a_short_title_is_still_the_slide_heading_and_not_repeated() -> None:
    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[TITLE_AND_CONTENT])
    slide.shapes.title.text = "Quarterly results"
    slide.placeholders[1].text_frame.text = "Revenue grew"

    blocks = parse_document("pptx", saved(deck))

    assert [(block.kind, block.text) for block in blocks] == [
        (HEADING, "Quarterly results"),
        (LIST_ITEM, "Revenue grew"),
    ]


def test_every_word_of_science_exploration_is_kept() -> None:
    path = CORPUS / "pptx" / "unstructured" / "science-exploration-1p.pptx"
    if not path.is_file():
        pytest.skip(
            "corpus file pptx/unstructured/science-exploration-1p.pptx is absent"
        )
    shapes = Presentation(str(path)).slides[0].shapes
    expected = " ".join(
        shape.text_frame.text for shape in shapes if shape.has_text_frame
    ).split()

    text = " ".join(block.text for block in parse_document("pptx", path.read_bytes()))

    assert len(expected) > 80
    assert sorted(text.split()) == sorted([*expected, "Slide", "1"])  # + heading


UNREADABLE_CORPUS_FILES = {
    "pptx/poi/Divino_Revelado.pptx",  # truncated: the zip has no central directory
}


def corpus_presentations() -> list:
    folder = CORPUS / "pptx"
    return sorted(folder.rglob("*.pptx")) if folder.is_dir() else []


@pytest.mark.skipif(not corpus_presentations(), reason="no PPTX corpus")
@pytest.mark.parametrize(
    "path", corpus_presentations(), ids=lambda path: path.relative_to(CORPUS).as_posix()
)
def test_corpus_presentations_parse_or_fail_cleanly(path) -> None:
    if path.relative_to(CORPUS).as_posix() in UNREADABLE_CORPUS_FILES:
        with pytest.raises(ParseError):
            pptx_format.parse(path.read_bytes(), WHOLE)
        return
    blocks = pptx_format.parse(path.read_bytes(), WHOLE)
    headings = [block for block in blocks if block.kind == HEADING]
    assert headings, path
    assert all(block.page is not None and block.page >= 1 for block in blocks)
