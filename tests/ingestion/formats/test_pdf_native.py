"""The compiled reader of PDF pages reads every page as the Python reader does."""

from __future__ import annotations

import io
import math
import random
from pathlib import Path

import numpy as np
import pypdfium2
import pytest
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.cidfonts import UnicodeCIDFont
from reportlab.pdfgen import canvas

from ingestion import health
from ingestion.formats import pdf, pdf_native, pdf_reader
from ingestion.formats.pdf_layout import Line, glyph_lines
from ingestion.formats.pdf_native import NativeGlyphs, NativePages
from ingestion.formats.pdf_pdfium import address, page_drawing, page_words
from tests.ingestion.formats.common import CORPUS, WHOLE
from tests.ingestion.formats.pdf_samples import SALES, SALES_SPANS, table_pdf
from tests.ingestion.formats.test_pdf import lines_at, make_pdf


def test_the_compiled_reader_is_built() -> None:
    assert pdf_native.available(), (
        f"{pdf_native.LIBRARY_PATH} is missing or old: `make venv-dev` builds it "
        "(it needs a C compiler, cc)"
    )


@pytest.fixture
def native() -> NativePages:
    if not pdf_native.available():
        pytest.fail("the compiled PDF page reader is not built: run make venv-dev")
    reader = NativePages()
    yield reader
    reader.close()


def described(paragraphs: list[list[Line]]) -> list[list[tuple]]:
    return [
        [
            (line.direction, line.start, line.end, line.across, line.size, line.text)
            for line in lines
        ]
        for lines in paragraphs
    ]


def differences(data: bytes, native: NativePages) -> list[str]:
    """Pages where the two readers differ: their glyphs, counts, rulings, the
    order of their text objects, or their lines and paragraphs."""
    found = []
    document = pypdfium2.PdfDocument(data)
    try:
        for index in range(len(document)):
            page = document[index]
            textpage = page.get_textpage()
            try:
                drawn = page_drawing(address(page.raw))
                compiled = page_drawing(address(page.raw), native)
                words = page_words(address(textpage.raw), drawn.text_objects)
                compiled_words = page_words(
                    address(textpage.raw), compiled.text_objects, native
                )
            finally:
                textpage.close()
                page.close()
            if isinstance(compiled_words.glyphs, NativeGlyphs) and described(
                glyph_lines(compiled_words.glyphs)
            ) != described(glyph_lines(list(words.glyphs))):
                found.append(f"page {index + 1}: lines")
            if drawn != compiled:
                found.append(f"page {index + 1}: rulings or text objects")
            if words != compiled_words:
                found.append(f"page {index + 1}: words")
            if not words.glyphs and words.chars:
                found.append(f"page {index + 1}: no glyphs read")
    finally:
        document.close()
    return found


def rotated(angle: str) -> str:
    matrices = {"90": "0 1 -1 0", "180": "-1 0 0 -1", "270": "0 -1 1 0"}
    return f"BT /F1 12 Tf {matrices[angle]} 300 400 Tm (Turned {angle}) Tj ET"


def vertical_chinese(beside: str = "") -> bytes:
    """Two columns in a vertical CJK font that pdfium draws but does not read
    (next to a line it reads, when `beside` is given)."""
    font = UnicodeCIDFont("STSong-Light", isVertical=True)
    font.name = font.fontName = "STSong-Light-Vertical"
    pdfmetrics.registerFont(font)
    data = io.BytesIO()
    page = canvas.Canvas(data)
    if beside:
        page.setFont("Helvetica", 12)
        page.drawString(72, 720, beside)
    page.setFont(font.fontName, 14)
    for index, column in enumerate(["劳动合同法第一条", "为了完善劳动合同制度"]):
        page.drawString(500 - 24 * index, 780, column)
    page.showPage()
    page.save()
    return data.getvalue()


def form_with_rulings() -> bytes:
    """A page whose grid is drawn by a form XObject under a scaling matrix."""
    grid = b"0 0 m 200 0 l 200 100 l 0 100 l h S 100 0 m 100 100 l S 0 50 m 200 50 l S"
    data = make_pdf("q 1.5 0 0 1.5 50 300 cm /Fm1 Do Q\n" + lines_at(72, 700, "Grid"))
    form = (
        b"<</Type/XObject/Subtype/Form/BBox[0 0 200 100]/Length "
        + str(len(grid)).encode()
        + b">>stream\n"
        + grid
        + b"\nendstream"
    )
    # make_pdf's objects: 1 catalog, 2 pages, 3 page, 4 content, 5 font.
    data = data.replace(
        b"/Resources<</Font<</F1 5 0 R>>>>",
        b"/Resources<</Font<</F1 5 0 R>>/XObject<</Fm1 6 0 R>>>>",
    )
    return data.replace(b"trailer", b"6 0 obj" + form + b"\nendobj\ntrailer")


def surrogate_halves() -> bytes:
    """A word whose two letters each map to one half of a surrogate pair (a
    ToUnicode map of <D83D> and <DE00>): pdfium writes them as one character,
    so its text is read a character at a time and keeps two lone surrogates."""
    cmap = (
        b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap "
        b"/CMapName/Halves def /CMapType 2 def "
        b"1 begincodespacerange <00> <FF> endcodespacerange "
        b"2 beginbfchar <41> <D83D> <42> <DE00> endbfchar "
        b"endcmap CMapName currentdict /CMap defineresource pop end end"
    )
    data = make_pdf(lines_at(72, 700, "AB leave"))
    # make_pdf's objects: 1 catalog, 2 pages, 3 page, 4 content, 5 font.
    data = data.replace(b"Helvetica>>", b"Helvetica/ToUnicode 6 0 R>>")
    stream = b"<</Length " + str(len(cmap)).encode() + b">>stream\n" + cmap
    stream += b"\nendstream\nendobj\n"
    return data.replace(b"trailer", b"6 0 obj" + stream + b"trailer")


# Text matrices whose font size, the font size times hypot(c, d), the C
# library's hypot rounds otherwise than Python's math.hypot.
SKEWED = (
    (7, "-0.968522 -0.787084 1.448393 -0.968522"),
    (12, "1.710179 0.496251 -0.984764 1.710179"),
    (12, "-1.018559 -2.508144 5.015093 -1.018559"),
    (10, "0.328443 0.744539 -1.036235 0.328443"),
    (10, "-1.481452 1.360536 -2.555218 -1.481452"),
)


SAMPLES = {
    "lines and a hyphen ending a line": make_pdf(
        lines_at(72, 700, "Annual leave is granted to every", "employee of the com-")
        + "\n"
        + lines_at(72, 672, "pany after probation.")
    ),
    "a note drawn after its baseline": make_pdf(
        lines_at(120, 700, "The leave year starts in", "January and ends in")
        + "\nBT /F1 8 Tf 90 686 Td (NOTE) Tj ET\n"
        + lines_at(120, 672, "December.")
    ),
    "text turned three ways": make_pdf(
        "\n".join(rotated(angle) for angle in ("90", "180", "270"))
    ),
    "letters spread over boxes": make_pdf(
        "BT /F1 12 Tf 40 Tc 72 700 Td (12345) Tj ET\n" + lines_at(72, 650, "Total")
    ),
    "vertical Chinese": vertical_chinese(),
    "vertical Chinese beside lines": vertical_chinese(beside="Annual leave"),
    # Read by pdfminer on any host: pdfium leaves glyphs of no width out.
    "text scaled to nothing": make_pdf(
        lines_at(72, 720, "Leave policy")
        + "\nBT /F1 12 Tf 0 Tz 14 TL 72 690 Td (Annual leave) Tj T* (is long.) Tj ET"
    ),
    "a ruled table": table_pdf(SALES, spans=SALES_SPANS),
    "a grid in a form": form_with_rulings(),
    "an empty page": make_pdf(""),
    "halves of a surrogate pair": surrogate_halves(),
    "text under skewed matrices": make_pdf(
        "\n".join(
            f"BT /F1 {size} Tf {matrix} 300 {400 + 60 * index} Tm (Hello world) Tj ET"
            for index, (size, matrix) in enumerate(SKEWED)
        )
    ),
}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_both_readers_read_each_page_alike(name: str, native: NativePages) -> None:
    assert differences(SAMPLES[name], native) == []


def test_a_lone_surrogate_reads_as_in_python() -> None:
    data = SAMPLES["halves of a surrogate pair"]
    compiled = pdf.parse(data, WHOLE)
    assert [block.text for block in compiled] == ["\ud83d\ude00 leave"]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pdf_reader.NativePages, "open", classmethod(lambda cls: None))
        assert pdf.parse(data, WHOLE) == compiled


def test_the_compiled_hypot_is_pythons() -> None:
    hypot = pdf_native._LIBRARY.curator_hypot
    chosen = random.Random(7)
    pairs = [(3.0, 4.0), (0.0, -0.0), (math.inf, math.nan), (1e308, 1e308)]
    for _ in range(20000):
        exponent = chosen.randint(-60, 60)
        pairs.append(
            (
                chosen.uniform(-1, 1) * 2.0**exponent,
                chosen.uniform(-1, 1) * 2.0 ** (exponent + chosen.randint(-30, 30)),
            )
        )
    assert [pair for pair in pairs if hypot(*pair) != math.hypot(*pair)] == []


def native_glyphs(native: NativePages, glyphs: list) -> NativeGlyphs:
    """`glyphs` (tuples) as the compiled reader keeps them."""
    text = "".join(glyph[0] for glyph in glyphs)
    records, first = [], 0
    for word, direction, start, stop, across, size in glyphs:
        end = first + len(word)
        records.append((first, end, direction, 0, start, stop, across, size))
        first = end
    found = np.array(records, dtype=pdf_native._GLYPH)
    return NativeGlyphs(native, found, text, text.encode("utf-32-le"))


@pytest.mark.parametrize("sizes", [(12.0, math.nan), (math.nan, 12.0)])
def test_a_turn_with_no_font_size_is_placed_as_in_python(
    sizes: tuple[float, float], native: NativePages
) -> None:
    # The second line starts where the first ends, turned: max() of the two
    # sizes keeps the first, NaN or not, unless the second is larger.
    glyphs = [
        ("ab", 0, 0.0, 10.0, 0.0, sizes[0]),
        ("cd", 1, 0.0, 5.0, -10.0, sizes[1]),
    ]
    compiled = glyph_lines(native_glyphs(native, glyphs))
    assert [[line.text for line in lines] for lines in compiled] == [
        [line.text for line in lines] for lines in glyph_lines(glyphs)
    ]


def test_pages_pdfminer_reads_are_placed_alike() -> None:
    # pdfium loses this page's text: pdfminer reads it, and the compiled reader
    # places its glyphs into lines (`NativePages.glyphs_from`).
    pages = pdfminer_pages(SAMPLES["text scaled to nothing"])
    assert len(pages) == 1
    for glyphs in pages:
        assert isinstance(glyphs, NativeGlyphs)
        tuples = list(glyphs)
        assert tuples
        assert list(NativePages().glyphs_from(tuples)) == tuples
        assert described(glyph_lines(glyphs)) == described(glyph_lines(tuples))


def pdfminer_pages(data: bytes) -> list:
    """The glyphs of each page of `data` that pdfminer read."""
    reader = pdf_reader.PageReader(data, lambda: pdf._pdf_pages(data))
    try:
        glyphs = {
            number: reader.read(number)[0] for number in range(1, reader.count + 1)
        }
        return [glyphs[number] for number in reader.by_pdfminer]
    finally:
        reader.close()


def test_a_form_draws_its_rulings_under_its_matrix(native: NativePages) -> None:
    document = pypdfium2.PdfDocument(form_with_rulings())
    page = document[0]
    try:
        rulings = page_drawing(address(page.raw), native).rulings
    finally:
        page.close()
        document.close()
    assert (50.0, -300.0, 350.0, -300.0) in rulings  # the bottom edge, scaled
    assert (200.0, -450.0, 200.0, -300.0) in rulings  # the middle column


def corpus_pdfs() -> list[Path]:
    return sorted(CORPUS.rglob("*.pdf")) if CORPUS.is_dir() else []


def test_both_readers_read_every_corpus_page_alike(native: NativePages) -> None:
    files = corpus_pdfs()
    if not files:
        pytest.skip(f"{CORPUS} is not here")
    found = {}
    for path in files:
        try:
            pypdfium2.PdfDocument(path.read_bytes()).close()
        except pypdfium2.PdfiumError:
            continue  # encrypted or broken: pdfminer's to read or refuse
        problems = differences(path.read_bytes(), native)
        for glyphs in pdfminer_pages(path.read_bytes()):
            if described(glyph_lines(glyphs)) != described(glyph_lines(list(glyphs))):
                problems.append("lines of a page pdfminer read")
        if problems:
            found[path.name] = problems
    assert found == {}


def test_without_the_compiled_reader_a_pdf_reads_the_same(monkeypatch) -> None:
    data = table_pdf(SALES, spans=SALES_SPANS)
    compiled = pdf.parse(data, WHOLE)
    monkeypatch.setattr(pdf_reader.NativePages, "open", classmethod(lambda cls: None))
    assert pdf.parse(data, WHOLE) == compiled


def test_glyphs_kept_past_their_document_are_placed_in_python() -> None:
    document = pypdfium2.PdfDocument(SAMPLES["lines and a hyphen ending a line"])
    page = document[0]
    textpage = page.get_textpage()
    reader = NativePages()
    try:
        glyphs = page_words(address(textpage.raw), {}, reader).glyphs
        assert isinstance(glyphs, NativeGlyphs)
        placed = described(glyph_lines(glyphs))
    finally:
        reader.close()
        textpage.close()
        page.close()
        document.close()
    # The reader's buffers are gone: the Python loop places the same lines.
    assert described(glyph_lines(glyphs)) == placed
    assert [[line.text for line in lines] for lines in glyph_lines(glyphs)] == [
        [
            "Annual leave is granted to every",
            "employee of the com-",
            "pany after probation.",
        ]
    ]


def test_the_health_check_looks_where_the_reader_is_loaded_from() -> None:
    assert health.PDF_READER_PATH == pdf_native.LIBRARY_PATH


def test_when_the_reader_cannot_order_the_words_python_does(
    native: NativePages, monkeypatch
) -> None:
    data = SAMPLES["a note drawn after its baseline"]
    expected = differences(data, native)
    monkeypatch.setattr(NativePages, "arranged", lambda self, *args: None)
    assert differences(data, native) == expected == []


def test_a_missing_build_leaves_the_python_reader(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(pdf_native, "LIBRARY_PATH", tmp_path / "pdfium_pages.so")
    assert pdf_native._load() is None


def test_a_build_that_cannot_be_loaded_leaves_the_python_reader(
    monkeypatch, tmp_path
) -> None:
    broken = tmp_path / "pdfium_pages.so"
    broken.write_bytes(b"not a shared object")
    monkeypatch.setattr(pdf_native, "LIBRARY_PATH", broken)
    assert pdf_native._load() is None
