"""The parsing half of `bench/peers.py`: Curator's parsers against markitdown.

Per format, over the corpus files of that format that its reference reader opens
(damaged and encrypted files are left out, as `pdf_parse.py` leaves out the PDFs
pdfium cannot open): `ingestion.formats.parse_document(kind, data, limits)` with OCR
off against markitdown's `convert_stream` (its defaults, the file's extension
given), in memory both. Word recall (NFKC, case-folded, a CJK character a word,
counted with repeats) against a reference that is neither of them: pdfminer.six's
`extract_text` for PDF (pdftotext is not installed here), python-docx's text runs
of every paragraph (tables and text boxes included) for DOCX, python-pptx's text of
every shape (groups, tables; not the notes) for PPTX, openpyxl's value of every
cell for XLSX, lxml's text without scripts and styles for HTML, the file itself
for Markdown.

Small documents: the worker's cost per small Markdown document against
markitdown's conversion of the same files.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import subprocess
import sys
import time
from pathlib import Path

from common import CORPUS, REPO, median
from pdf_parse import words

FORMATS = {
    "pdf": (".pdf",),
    "docx": (".docx",),
    "pptx": (".pptx",),
    "xlsx": (".xlsx",),
    "html": (".html", ".htm"),
    "markdown": (".md",),
}
SMALL_BYTES = 8 * 1024
REFERENCE_CACHE = REPO / "var" / "bench" / "peers-references.json"


# --- references --------------------------------------------------------------


def _pdf_reference(data: bytes) -> str:
    import pypdfium2
    from pdfminer.high_level import extract_text

    pypdfium2.PdfDocument(data).close()  # a password or a broken file raises
    return extract_text(io.BytesIO(data))


def _docx_reference(data: bytes) -> str:
    import docx
    from docx.oxml.ns import qn

    body = docx.Document(io.BytesIO(data)).element.body
    paragraphs: dict[object, list[str]] = {}
    for run in body.iter(qn("w:t")):
        paragraph = run.getparent()
        while paragraph is not None and paragraph.tag != qn("w:p"):
            paragraph = paragraph.getparent()
        paragraphs.setdefault(paragraph, []).append(run.text or "")
    return "\n".join("".join(parts) for parts in paragraphs.values())


def _pptx_reference(data: bytes) -> str:
    import pptx

    texts: list[str] = []

    def shape_text(shape) -> None:
        if shape.shape_type == pptx.enum.shapes.MSO_SHAPE_TYPE.GROUP:
            for inner in shape.shapes:
                shape_text(inner)
        if shape.has_text_frame:
            texts.append(shape.text_frame.text)
        if getattr(shape, "has_table", False) and shape.has_table:
            texts.extend(cell.text for row in shape.table.rows for cell in row.cells)

    for slide in pptx.Presentation(io.BytesIO(data)).slides:
        for shape in slide.shapes:
            shape_text(shape)
    return "\n".join(texts)


def _xlsx_reference(data: bytes) -> str:
    import openpyxl

    book = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    cells = [
        str(value)
        for sheet in book.worksheets
        for row in sheet.iter_rows(values_only=True)
        for value in row
        if value is not None
    ]
    book.close()
    return "\n".join(cells)


def _html_reference(data: bytes) -> str:
    import lxml.html

    tree = lxml.html.fromstring(data)
    for element in tree.xpath("//script|//style|//noscript|//template"):
        element.drop_tree()
    return tree.text_content()


def _markdown_reference(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


REFERENCES = {
    "pdf": _pdf_reference,
    "docx": _docx_reference,
    "pptx": _pptx_reference,
    "xlsx": _xlsx_reference,
    "html": _html_reference,
    "markdown": _markdown_reference,
}


# --- the two converters ------------------------------------------------------


def curator_text(kind: str, data: bytes) -> str | None:
    from ingestion.blocks import ParseError, ParseLimits
    from ingestion.formats import parse_document

    try:
        blocks = parse_document(kind, data, ParseLimits(ocr_enabled=False))
    except ParseError:
        return None
    return "\n".join(block.text for block in blocks)


_MARKITDOWN = None


def markitdown_text(suffix: str, data: bytes) -> str | None:
    global _MARKITDOWN
    from markitdown import MarkItDown, StreamInfo

    if _MARKITDOWN is None:
        _MARKITDOWN = MarkItDown()
    try:
        result = _MARKITDOWN.convert_stream(
            io.BytesIO(data), stream_info=StreamInfo(extension=suffix)
        )
    except Exception:  # markitdown's failures are its own exception types
        return None
    return result.text_content


def pdfium_dump(data: bytes) -> str:
    from pdf_parse import bare_dump

    return bare_dump(data)


# --- measuring ---------------------------------------------------------------


def corpus_files(kind: str) -> dict[Path, bytes]:
    """The files of `kind` whose reference reader reads them, with that text."""
    files = {}
    for suffix in FORMATS[kind]:
        for path in sorted(CORPUS.rglob(f"*{suffix}")):
            files[path] = path.read_bytes()
    return files


def references(kind: str, files: dict[Path, bytes]) -> dict[Path, str]:
    """Each readable file's reference text. Kept in var/bench by the file's
    digest: it is no measurement, and pdfminer takes minutes over the PDFs."""
    cache = REFERENCE_CACHE.with_name(f"{REFERENCE_CACHE.stem}-{kind}.json")
    known = json.loads(cache.read_text()) if cache.exists() else {}
    texts = {}
    for path, data in files.items():
        digest = hashlib.sha256(data).hexdigest()
        if digest not in known:
            try:
                known[digest] = REFERENCES[kind](data)
            except Exception:  # damaged and encrypted files stay out
                known[digest] = None
        if known[digest] is not None:
            texts[path] = known[digest]
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(known))
    return texts


def _timed(convert, files: dict[Path, bytes]) -> tuple[float, dict]:
    started = time.perf_counter()
    out = {path: convert(path, data) for path, data in files.items()}
    return time.perf_counter() - started, out


def _recall(texts: dict, reference: dict) -> float:
    hit = total = 0
    for path, expected in reference.items():
        want = words(expected)
        got = words(texts.get(path) or "")
        hit += sum((want & got).values())
        total += sum(want.values())
    return hit / total if total else float("nan")


def parsing(rounds: int) -> dict:
    """Per format: seconds of the whole set (medians over interleaved rounds, the
    ratio taken within each round), failures and word recall."""
    logging.disable(logging.WARNING)  # pdfminer's and markitdown's complaints
    results = {}
    for kind in FORMATS:
        reference = references(kind, corpus_files(kind))
        files = {path: path.read_bytes() for path in reference}
        systems = {
            "curator": lambda path, data, k=kind: curator_text(k, data),
            "markitdown": lambda path, data: markitdown_text(path.suffix, data),
        }
        if kind == "pdf":
            systems["pypdfium2"] = lambda path, data: pdfium_dump(data)
        seconds: dict[str, list[float]] = {name: [] for name in systems}
        texts: dict[str, dict] = {}
        for number in range(rounds):
            names = list(systems) if number % 2 == 0 else list(reversed(systems))
            for name in names:
                took, texts[name] = _timed(systems[name], files)
                seconds[name].append(took)
        ratios = [
            c / m
            for c, m in zip(seconds["curator"], seconds["markitdown"], strict=True)
        ]
        row = {
            "files": len(files),
            "megabytes": sum(map(len, files.values())) / 1e6,
            "curator_s": median(seconds["curator"]),
            "markitdown_s": median(seconds["markitdown"]),
            "ratio": median(ratios),
            "word_recall": _recall(texts["curator"], reference),
            "markitdown_word_recall": _recall(texts["markitdown"], reference),
            "curator_failures": sum(t is None for t in texts["curator"].values()),
            "markitdown_failures": sum(t is None for t in texts["markitdown"].values()),
            "reference_words": sum(sum(words(t).values()) for t in reference.values()),
        }
        if kind == "pdf":
            row["pypdfium2_s"] = median(seconds["pypdfium2"])
            row["ratio_to_pypdfium2"] = median(
                [
                    c / p
                    for c, p in zip(
                        seconds["curator"], seconds["pypdfium2"], strict=True
                    )
                ]
            )
        results[kind] = row
        print(kind, row, file=sys.stderr, flush=True)
    logging.disable(logging.NOTSET)
    return results


# --- small documents -------------------------------------------------------------


def small_files() -> list[Path]:
    return [
        path
        for path in sorted(CORPUS.rglob("*.md"))
        if path.stat().st_size <= SMALL_BYTES
    ]


def small_documents(rounds: int) -> dict:
    """The worker's milliseconds per small Markdown document, against
    markitdown's conversion of the same files, round by round. The worker's
    figure comes from `bench/small_documents.py` where it is there (its own
    method), else from a warm worker draining the files
    (`ingestion_throughput.run_warm_worker`)."""
    paths = small_files()
    files = {path: path.read_bytes() for path in paths}
    script = REPO / "bench" / "small_documents.py"
    markitdown_ms, worker_ms = [], []
    for _ in range(rounds):
        took, _ = _timed(lambda path, data: markitdown_text(".md", data), files)
        markitdown_ms.append(took * 1000 / len(paths))
        if not script.exists():
            worker_ms.append(_warm_worker_seconds(paths) * 1000 / len(paths))
    if script.exists():
        out = subprocess.run(
            [sys.executable, str(script), "--json", "-"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        measured = json.loads(out[out.find("{") : out.rfind("}") + 1])
        worker_ms = [measured["worker_ms_per_document"]]
    return {
        "documents": len(paths),
        "worker_ms_per_document": median(worker_ms),
        "markitdown_ms_per_document": median(markitdown_ms),
        "worker_method": "`bench/small_documents.py` (its method, its files)"
        if script.exists()
        else "a warm worker draining those files "
        "(`ingestion_throughput.run_warm_worker`)",
    }


def _warm_worker_seconds(paths: list[Path]) -> float:
    from ingestion_throughput import reset_queue, run_warm_worker

    try:
        return run_warm_worker(paths, "text/markdown")
    finally:
        reset_queue()
