"""OCR engines compared on the same pages: accuracy, speed, memory, load time.

Renders pages of known text (simplified Chinese, traditional Chinese, English), clean,
rotated by 2 degrees and noisy (gaussian noise and a slight blur); reads them with each
engine installed here, one thread each; reports the character error rate (edit
distance over the reference length, whitespace removed) and pages per second. Then
reads the image-only files of ../shared/corpus, and measures each engine's load time
and peak memory in a fresh process.

Engines: RapidOCR 3.x (`rapidocr`, PP-OCRv6, through ingestion/ocr.py, which uses
it), RapidOCR 1.4.4 (`rapidocr-onnxruntime`, PP-OCRv4) and Tesseract (Debian's
`tesseract-ocr` with chi_sim, chi_tra and eng, through `pytesseract`). Those not
installed are left out. Bench-only needs: a CJK font (Debian `fonts-noto-cjk`), and
opencc for s2t.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import CORPUS, markdown_table, write_section
from ocr_texts import CHINESE, ENGLISH

from ingestion import ocr

NOTO_SANS_CJK = Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")
NOTO_SERIF_CJK = Path("/usr/share/fonts/opentype/noto/NotoSerifCJK-Regular.ttc")
WQY_MICROHEI = Path("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc")
DEJAVU = Path("/usr/share/fonts/truetype/dejavu")
PAGE_WIDTH = 1654  # A4 at 200 dpi
MARGIN = 150
FONT_PIXELS = 31  # 11 pt at 200 dpi
CONDITIONS = ("clean", "rotated 2°", "noisy")
LANGUAGES = ("chi_sim", "chi_tra", "eng")
TESSERACT_LANGUAGES = "chi_sim+chi_tra+eng"
CORPUS_PDFS = (
    "pdf/pdfminer.six/nonfree/175.pdf",
    "pdf/pdfminer.six/contrib/pdf-with-jbig2.pdf",
    "pdf/pdfminer.six/contrib/issue-1057-tiff-predictor.pdf",
    "pdf/pypdf/imagemagick-CCITTFaxDecode.pdf",
    "pdf/unstructured/loremipsum-flat.pdf",
)
# A scan with an OCR text layer: its own layer is the (approximate) reference.
CORPUS_OCR_LAYER_PDF = "pdf/pypdf/Seige_of_Vicksburg_Sample_OCR.pdf"


@dataclass
class Engine:
    name: str
    read: Callable[[Image.Image], tuple[str, float]]  # text, mean confidence


def rapidocr_v3() -> Engine:
    def read(image: Image.Image) -> tuple[str, float]:
        page = ocr.ocr_image(image, time_limit=None)
        return page.text, page.confidence

    ocr.ocr_image(Image.new("RGB", (64, 64), "white"))  # load outside the timings
    return Engine("RapidOCR 3.10 (PP-OCRv6 small)", read)


def rapidocr_v1() -> Engine:
    from rapidocr_onnxruntime import RapidOCR

    # As ingestion/ocr.py runs RapidOCR 3: no line classifier, one thread, the
    # same line grouping.
    engine = RapidOCR(use_cls=False, intra_op_num_threads=1, inter_op_num_threads=1)

    def read(image: Image.Image) -> tuple[str, float]:
        array, scale = ocr._scaled_array(image.convert("RGB"))
        result, _ = engine(array)
        boxes = [ocr.layout.text_box(*item, scale) for item in result or ()]
        page = ocr.OcrPage(tuple(ocr.lines_in_reading_order(boxes)), 0, 0, 0.0)
        return page.text, page.confidence

    read(Image.new("RGB", (64, 64), "white"))
    return Engine("RapidOCR 1.4.4 (PP-OCRv4)", read)


def tesseract() -> Engine:
    import pytesseract

    version = pytesseract.get_tesseract_version()

    def read(image: Image.Image) -> tuple[str, float]:
        data = pytesseract.image_to_data(
            image, lang=TESSERACT_LANGUAGES, output_type=pytesseract.Output.DICT
        )
        lines: dict[tuple[int, int, int], list[str]] = {}
        confidences = []
        for i, word in enumerate(data["text"]):
            if not word.strip():
                continue
            key = (data["block_num"][i], data["par_num"][i], data["line_num"][i])
            lines.setdefault(key, []).append(word)
            confidences.append(float(data["conf"][i]) / 100)
        text = "\n".join(" ".join(words) for words in lines.values())
        return text, statistics.mean(confidences) if confidences else 0.0

    return Engine(f"Tesseract {version} ({TESSERACT_LANGUAGES})", read)


ENGINES: dict[str, Callable[[], Engine]] = {
    "rapidocr-3": rapidocr_v3,
    "rapidocr-1.4": rapidocr_v1,
    "tesseract": tesseract,
}


def load_engines(names: list[str]) -> dict[str, Engine]:
    loaded = {}
    for name in names:
        try:
            loaded[name] = ENGINES[name]()
        except Exception as error:  # not installed here: leave it out
            print(f"skipping {name}: {type(error).__name__}: {error}")
    return loaded


def font_for(language: str, serif: bool) -> ImageFont.FreeTypeFont:
    if language == "eng":
        name = "DejaVuSerif.ttf" if serif else "DejaVuSans.ttf"
        return ImageFont.truetype(str(DEJAVU / name), FONT_PIXELS)
    path = NOTO_SERIF_CJK if serif else NOTO_SANS_CJK
    if not path.exists():  # one sans face for both scripts (what CI installs)
        if WQY_MICROHEI.exists():
            return ImageFont.truetype(str(WQY_MICROHEI), FONT_PIXELS)
        raise SystemExit("no CJK font: apt-get install fonts-noto-cjk")
    family = "SC" if language == "chi_sim" else "TC"
    for index in range(10):
        font = ImageFont.truetype(str(path), FONT_PIXELS, index=index)
        if font.getname()[0].endswith(f"CJK {family}"):
            return font
    raise SystemExit(f"no {family} face in {path}: apt-get install fonts-noto-cjk")


def wrap(text: str, font: ImageFont.FreeTypeFont, width: int) -> list[str]:
    """Greedy wrap: by words for English, by characters for Chinese."""
    units = text.split(" ") if " " in text else list(text)
    joiner = " " if " " in text else ""
    lines, current = [], ""
    for unit in units:
        candidate = f"{current}{joiner}{unit}" if current else unit
        if font.getlength(candidate) > width and current:
            lines.append(current)
            current = unit
        else:
            current = candidate
    return [*lines, current] if current else lines


def render_page(text: str, language: str, serif: bool) -> Image.Image:
    font = font_for(language, serif)
    lines = wrap(text, font, PAGE_WIDTH - 2 * MARGIN)
    leading = round(FONT_PIXELS * 1.6)
    height = 2 * MARGIN + leading * len(lines)
    image = Image.new("L", (PAGE_WIDTH, height), 255)
    draw = ImageDraw.Draw(image)
    for row, line in enumerate(lines):
        draw.text((MARGIN, MARGIN + row * leading), line, font=font, fill=0)
    return image


def degrade(image: Image.Image, condition: str, index: int) -> Image.Image:
    if condition == "rotated 2°":
        angle = 2.0 if index % 2 == 0 else -2.0
        return image.rotate(angle, resample=Image.BICUBIC, expand=True, fillcolor=255)
    if condition == "noisy":
        rng = np.random.default_rng(index)
        blurred = np.asarray(image.filter(ImageFilter.GaussianBlur(1.0)), dtype=float)
        noisy = blurred + rng.normal(0, 25, blurred.shape)
        return Image.fromarray(np.clip(noisy, 0, 255).astype(np.uint8))
    return image


def pages(count: int) -> list[tuple[str, str, Image.Image]]:
    """(language, reference, image) for `count` pages of each language."""
    import opencc

    to_traditional = opencc.OpenCC("s2t")
    sources = {
        "chi_sim": CHINESE,
        "chi_tra": [to_traditional.convert(text) for text in CHINESE],
        "eng": ENGLISH,
    }
    rendered = []
    for language in LANGUAGES:
        for index, text in enumerate(sources[language][:count]):
            image = render_page(text, language, serif=index % 2 == 1)
            rendered.append((language, text, image))
    return rendered


def cer(reference: str, hypothesis: str) -> float:
    """Levenshtein distance over the reference's length, whitespace removed."""
    a = "".join(reference.split())
    b = "".join(hypothesis.split())
    if not a:
        return float(bool(b))
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


def timed(engine: Engine, image: Image.Image) -> tuple[str, float, float]:
    started = time.perf_counter()
    text, confidence = engine.read(image)
    return text, confidence, time.perf_counter() - started


def rendered_rows(engines: dict[str, Engine], count: int) -> tuple[list, list]:
    accuracy, speed = [], []
    rendered = pages(count)
    for engine in engines.values():
        seconds_all = []
        for language in LANGUAGES:
            row = [engine.name, language]
            for condition in CONDITIONS:
                errors, seconds = [], []
                for index, (lang, reference, image) in enumerate(rendered):
                    if lang != language:
                        continue
                    text, _, took = timed(engine, degrade(image, condition, index))
                    errors.append(cer(reference, text))
                    seconds.append(took)
                    print(f"{engine.name} {language} {condition}: {errors[-1]:.3f}")
                row.append(f"{100 * statistics.mean(errors):.1f} %")
                seconds_all += seconds
            accuracy.append(row)
        median = statistics.median(seconds_all)
        speed.append([engine.name, len(seconds_all), median, 1 / median])
    return accuracy, speed


def corpus_items() -> list[tuple[str, Image.Image, str | None]]:
    """(name, image, reference or None) for the corpus's image-only pages."""
    import pypdfium2

    items: list[tuple[str, Image.Image, str | None]] = []
    for path in sorted((CORPUS / "images").glob("*/*")):
        if path.suffix.lower() not in {".png", ".jpg", ".jpeg", ".tif", ".tiff"}:
            continue
        truth = path.with_suffix(".txt")
        reference = truth.read_text(encoding="utf-8") if truth.exists() else None
        with Image.open(path) as image:
            items.append(
                (str(path.relative_to(CORPUS)), image.convert("RGB"), reference)
            )
    for name in CORPUS_PDFS:
        path = CORPUS / name
        if not path.exists():
            continue
        pdf = pypdfium2.PdfDocument(path)
        for index in range(min(2, len(pdf))):
            assert ocr.page_needs_ocr(pdf[index]), name
            image = ocr.render_pdf_page(pdf[index])
            items.append((f"{name} p{index + 1}", image, None))
    path = CORPUS / CORPUS_OCR_LAYER_PDF
    if path.exists():
        pdf = pypdfium2.PdfDocument(path)
        for index in range(2):
            page = pdf[index]
            reference = page.get_textpage().get_text_bounded()
            image = ocr.render_pdf_page(page)
            items.append((f"{CORPUS_OCR_LAYER_PDF} p{index + 1}", image, reference))
    return items


def corpus_rows(engines: dict[str, Engine]) -> list[list]:
    rows = []
    for name, image, reference in corpus_items():
        row = [f"`{name}`", f"{image.width}x{image.height}"]
        for engine in engines.values():
            text, confidence, took = timed(engine, image)
            chars = len("".join(text.split()))
            error = f"{100 * cer(reference, text):.1f} %" if reference else "–"
            row.append(f"{chars} / {error} / {confidence:.2f} / {took:.1f}")
            print(name, engine.name, chars, error, f"{took:.1f}s", repr(text[:60]))
        rows.append(row)
    return rows


def dpi_rows(count: int) -> list[list]:
    """The engine in use on pages saved as image-only PDFs, rasterised at each dpi."""
    import pypdfium2

    rows = []
    for dpi in (150, 200, 300):
        errors, seconds = [], []
        for _, reference, image in pages(count):
            # The page as a scan in a PDF: drawn at 400 dpi so rasterising decides.
            big = image.resize((image.width * 2, image.height * 2), Image.LANCZOS)
            scan = io.BytesIO()
            big.save(scan, format="PDF", resolution=400)
            pdf = pypdfium2.PdfDocument(scan.getvalue())
            started = time.perf_counter()
            page = ocr.ocr_pdf_page(pdf, 0, dpi=dpi, time_limit=None)
            seconds.append(time.perf_counter() - started)
            errors.append(cer(reference, page.text))
            pdf.close()
        rows.append(
            [dpi, f"{100 * statistics.mean(errors):.1f} %", statistics.median(seconds)]
        )
    return rows


def probe(name: str) -> None:
    """In a fresh process: load one engine, read one page, print the costs as JSON."""
    started = time.perf_counter()
    engine = ENGINES[name]()
    load = time.perf_counter() - started
    image = pages(1)[0][2]
    first = timed(engine, image)[2]
    status = Path("/proc/self/status").read_text()
    peak_virtual = int(status.split("VmPeak:")[1].split()[0]) * 1024
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    print(
        json.dumps(
            {
                "load": load,
                "first_page": first,
                "peak_rss": max(own, child),
                "peak_virtual": peak_virtual,
                "rss_in_child": child > own,
            }
        )
    )


def cost_rows(names: list[str]) -> list[list]:
    rows = []
    for name in names:
        done = subprocess.run(
            [sys.executable, __file__, "--probe", name],
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, "OMP_THREAD_LIMIT": "1"},
        )
        if done.returncode:
            continue
        costs = json.loads(done.stdout.strip().splitlines()[-1])
        rss = costs["peak_rss"] / 2**20
        where = " (tesseract process)" if costs["rss_in_child"] else ""
        rows.append(
            [
                name,
                costs["load"],
                costs["first_page"],
                f"{rss:.0f}{where}",
                f"{costs['peak_virtual'] / 2**20:.0f}",
            ]
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pages", type=int, default=3, help="pages per language")
    parser.add_argument("--quick", action="store_true", help="one page per language")
    parser.add_argument("--engines", nargs="+", default=list(ENGINES), choices=ENGINES)
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument("--probe", choices=ENGINES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")  # Tesseract: one thread
    random.seed(0)
    if args.probe:
        probe(args.probe)
        return
    count = 1 if args.quick else args.pages
    costs = cost_rows(args.engines)
    engines = load_engines(args.engines)
    accuracy, speed = rendered_rows(engines, count)
    corpus = corpus_rows(engines) if (CORPUS / "images").exists() else []
    dpi = dpi_rows(count) if "rapidocr-3" in engines else []
    body = (
        "Character error rate on rendered pages (mean over pages):\n\n"
        + markdown_table(["engine", "language", *CONDITIONS], accuracy)
        + "\n\nSpeed on those pages, one thread each:\n\n"
        + markdown_table(["engine", "pages", "median s/page", "pages/s"], speed)
        + "\n\nCost in a fresh process (load: import and models; first page "
        "includes warm-up):\n\n"
        + markdown_table(
            ["engine", "load s", "first page s", "peak RSS MiB", "peak virtual MiB"],
            costs,
        )
    )
    if dpi:
        body += (
            "\n\nRapidOCR 3.10 through `ingestion.ocr` on the same pages saved as "
            "image-only PDFs (400 dpi "
            "scans), rasterised by `ocr_pdf_page` at each dpi:\n\n"
            + markdown_table(["dpi", "CER", "median s/page"], dpi)
        )
    if corpus:
        body += (
            "\n\nImage-only corpus files (PDF pages rasterised at "
            f"{ocr.DEFAULT_DPI} dpi). Each cell: non-space characters read / CER "
            "where a reference exists / mean confidence / seconds:\n\n"
            + markdown_table(
                ["file", "pixels", *(e.name for e in engines.values())], corpus
            )
        )
    print(body)
    if not args.no_write:
        write_section(
            "ocr-engines",
            "OCR engines",
            f"`python bench/ocr_engines.py`: {count} rendered page(s) per language, "
            "each one paragraph of 12 to 15 lines (A4 width at 200 dpi, 11 pt "
            "text, sans and serif faces: Noto CJK, DejaVu), the traditional ones "
            "the simplified text through OpenCC s2t; "
            "*rotated*: turned 2° (alternately either way); *noisy*: gaussian blur "
            "of 1 px then gaussian noise of σ 25 grey levels. CER: edit distance "
            "over the reference's length, whitespace removed (so it also counts "
            "reading order). Every engine reads every page with all three "
            "languages on, one thread. Tesseract's peak memory is its own "
            "process's.",
            body,
        )


if __name__ == "__main__":
    main()
