"""PDF pages read through pdfium, and the pages pdfminer reads instead."""

from __future__ import annotations

import io

import pytest
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.cidfonts import UnicodeCIDFont
from reportlab.pdfgen import canvas

from ingestion.formats import pdf, pdf_reader
from ingestion.formats.pdf_pdfium import PageDrawing, PageWords
from ingestion.formats.pdf_reader import PageReader, pdfminer_reads
from tests.ingestion.formats.common import CORPUS, WHOLE, texts
from tests.ingestion.formats.test_pdf import lines_at, make_pdf


@pytest.fixture
def by_pdfminer(monkeypatch) -> list[int]:
    """The pages of the parses below that pdfminer read, pdfium did not."""
    pages: list[int] = []
    original = PageReader.__init__

    def init(self, data, load_pages):
        original(self, data, load_pages)
        self.by_pdfminer = pages

    monkeypatch.setattr(PageReader, "__init__", init)
    return pages


def corpus_pdf(relative: str) -> bytes:
    path = CORPUS / "pdf" / relative
    if not path.is_file():
        pytest.skip(f"corpus file pdf/{relative} is not present")
    return path.read_bytes()


def test_text_pages_are_read_by_pdfium(by_pdfminer) -> None:
    data = make_pdf(
        lines_at(72, 700, "Annual leave is granted to every", "employee of the com-")
        + "\n"
        + lines_at(72, 672, "pany after probation."),
        lines_at(72, 700, "Text on the second page."),
    )
    assert texts(pdf.parse(data, WHOLE)) == [
        "Annual leave is granted to every employee of the company after probation.",
        "Text on the second page.",
    ]
    assert by_pdfminer == []


def test_pdfminer_reads_the_whole_file_when_pdfium_cannot_open_it(
    monkeypatch, by_pdfminer
) -> None:
    data = make_pdf(
        lines_at(72, 700, "Read by pdfminer alone."), lines_at(72, 700, "Two.")
    )
    monkeypatch.setattr(pdf_reader, "open_document", lambda data: None)
    assert texts(pdf.parse(data, WHOLE)) == ["Read by pdfminer alone.", "Two."]
    assert by_pdfminer == [1, 2]


@pytest.mark.parametrize(
    ("words", "text_objects", "expected"),
    [
        (PageWords([], chars=400), 20, False),
        # Nothing read although the page has text: pdfium skipped it.
        (PageWords([], chars=0), 3, True),
        # A blank page or a scan: nothing to read either way.
        (PageWords([], chars=0), 0, False),
        # Fonts without a Unicode map: pdfium wrote their codes.
        (PageWords([], chars=400, unmapped_share=0.5), 20, True),
        (PageWords([], chars=400, unmapped_share=0.02), 20, False),
        # Replacement, private-use or control characters.
        (PageWords([], chars=400, odd=100), 20, True),
        (PageWords([], chars=400, odd=6), 20, False),
        # Far more text objects than characters: pdfium lost the page's text.
        (PageWords([], chars=19), 2624, True),
        (PageWords([], chars=400), 800, False),
        # Text objects drawn but not read into the text page at all.
        (PageWords([], chars=400, lost_objects=3), 100, True),
        (PageWords([], chars=400, lost_objects=2), 100, False),
    ],
)
def test_which_pages_pdfminer_reads(
    words: PageWords, text_objects: int, expected: bool
) -> None:
    drawing = PageDrawing([], {index: index for index in range(text_objects)})
    assert pdfminer_reads(words, drawing) is expected


def test_a_font_pdfium_cannot_map_is_read_by_pdfminer(by_pdfminer) -> None:
    # A CID font with a non-Unicode CMap: pdfium gives "3HQČåQtSURVWĜHGN...".
    data = corpus_pdf("pdfminer.six/contrib/issue-791-non-unicode-cmap.pdf")
    assert "Peněžní prostředky na účtech" in " ".join(texts(pdf.parse(data, WHOLE)))
    assert by_pdfminer == [1]


def test_chinese_pdfium_maps_to_other_characters_is_read_by_pdfminer() -> None:
    # pdfium reads 黎荣 as 哾㦓: the font's codes, which it marks as unmapped.
    data = corpus_pdf("pdfminer.six/contrib/issue_566_test_1.pdf")
    text = " ".join(texts(pdf.parse(data, WHOLE)))
    assert "黎荣" in text
    assert "哾" not in text


def test_a_note_drawn_after_a_line_on_its_baseline_stays_out_of_it() -> None:
    # pdfium sorts the text objects of one baseline left to right, which would
    # put a margin note drawn after a line at its start, and into the paragraph.
    data = make_pdf(
        lines_at(120, 700, "The leave year starts in", "January and ends in")
        + "\nBT /F1 8 Tf 90 686 Td (NOTE) Tj ET\n"
        + lines_at(120, 672, "December.")
    )
    assert texts(pdf.parse(data, WHOLE)) == [
        "The leave year starts in January and ends in December.",
        "NOTE",
    ]


def test_vertical_writing_keeps_its_columns_in_drawing_order() -> None:
    font = UnicodeCIDFont("STSong-Light", isVertical=True)
    # Its own name: registered as "STSong-Light", it would replace the
    # horizontal font other tests draw with.
    font.name = font.fontName = "STSong-Light-Vertical"
    pdfmetrics.registerFont(font)
    columns = ["劳动合同法第一条", "为了完善劳动合同制度", "明确劳动合同双方当事人"]
    data = io.BytesIO()
    page = canvas.Canvas(data)
    page.setFont(font.fontName, 14)
    for index, column in enumerate(columns):
        page.drawString(500 - 24 * index, 780, column)  # right to left
    page.showPage()
    page.save()
    assert texts(pdf.parse(data.getvalue(), WHOLE)) == columns


def test_text_pdfium_draws_but_does_not_read_is_read_by_pdfminer(by_pdfminer) -> None:
    # Glyphs of no width (horizontal scaling 0 here; vertical writing in a CJK
    # font the file does not embed, where the host has no such font, in jo.pdf):
    # pdfium draws the text objects but leaves them out of its text page.
    data = make_pdf(
        lines_at(72, 720, "Leave policy")
        + "\nBT /F1 12 Tf 0 Tz 14 TL 72 690 Td"
        + " (Annual leave is fifteen days.) Tj T* (Sick leave needs a note.) Tj ET"
    )
    assert texts(pdf.parse(data, WHOLE)) == [
        "Leave policy",
        "Annual leave is fifteen days. Sick leave needs a note.",
    ]
    assert by_pdfminer == [1]


def test_vertical_writing_in_a_font_the_file_does_not_embed_is_read_whole() -> None:
    # Read by pdfium where the host has a CJK font, by pdfminer where it has none
    # (pdfium then leaves the columns out of its text page): whole either way.
    font = UnicodeCIDFont("STSong-Light", isVertical=True)
    font.name = font.fontName = "STSong-Light-Vertical"
    pdfmetrics.registerFont(font)
    data = io.BytesIO()
    page = canvas.Canvas(data)
    page.setFont("Helvetica", 12)
    for index, line in enumerate(["Leave policy", "Annual leave is fifteen days."]):
        page.drawString(72, 720 - 16 * index, line)
    page.setFont(font.fontName, 14)
    page.drawString(500, 700, "劳动合同法第一条")
    page.drawString(476, 700, "为了完善劳动合同制度")
    page.showPage()
    page.save()
    assert texts(pdf.parse(data.getvalue(), WHOLE)) == [
        "Leave policy Annual leave is fifteen days.",
        "劳动合同法第一条",
        "为了完善劳动合同制度",
    ]


def _counting_structure_passes(monkeypatch) -> list[int]:
    calls: list[int] = []
    original = pdf._pdf_pages

    def structure(data, stop_after=None):
        calls.append(1)
        return original(data, stop_after)

    monkeypatch.setattr(pdf, "_pdf_pages", structure)
    return calls


@pytest.mark.parametrize("pages", [1, pdf_reader.FEW_PAGES])
def test_a_short_file_pdfium_reads_needs_no_pass_of_pdfminer(
    monkeypatch, pages
) -> None:
    # A page of a short file is repeated at most FEW_PAGES times: pdfminer's pass
    # over the file's structure (pdf_shared.py's reason for it) is left out.
    calls = _counting_structure_passes(monkeypatch)
    data = make_pdf(*(lines_at(72, 700, f"Memo page {n}.") for n in range(pages)))

    assert texts(pdf.parse(data, WHOLE)) == [f"Memo page {n}." for n in range(pages)]
    assert calls == []


def test_a_longer_file_goes_through_pdfminer_first(monkeypatch) -> None:
    calls = _counting_structure_passes(monkeypatch)
    pages = pdf_reader.FEW_PAGES + 1
    data = make_pdf(*(lines_at(72, 700, f"Page {n}.") for n in range(pages)))

    assert texts(pdf.parse(data, WHOLE)) == [f"Page {n}." for n in range(pages)]
    assert calls == [1]


def test_a_short_files_page_pdfium_misreads_is_read_by_pdfminer(
    monkeypatch, by_pdfminer
) -> None:
    calls = _counting_structure_passes(monkeypatch)
    data = make_pdf(
        lines_at(72, 720, "Page one."),
        lines_at(72, 720, "Page two.")
        + "\nBT /F1 12 Tf 0 Tz 14 TL 72 690 Td (Drawn, not read.) Tj ET",
        lines_at(72, 720, "Page three."),
    )

    assert texts(pdf.parse(data, WHOLE)) == [
        "Page one.",
        "Page two.",
        "Drawn, not read.",
        "Page three.",
    ]
    assert by_pdfminer == [2]
    assert calls == [1]  # when page two needed pdfminer, once


def test_a_short_file_whose_pages_pdfminer_counts_otherwise_keeps_pdfiums_reading(
    monkeypatch, by_pdfminer
) -> None:
    original = pdf._pdf_pages
    monkeypatch.setattr(pdf, "_pdf_pages", lambda *a, **k: original(*a, **k)[:1])
    data = make_pdf(
        lines_at(72, 720, "Page one."),
        lines_at(72, 720, "Page two.")
        + "\nBT /F1 12 Tf 0 Tz 14 TL 72 690 Td (Drawn, not read.) Tj ET",
    )

    # pdfminer's first page is not pdfium's second: pdfium's reading stands.
    assert texts(pdf.parse(data, WHOLE)) == ["Page one.", "Page two."]
    assert by_pdfminer == []
