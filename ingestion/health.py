"""What ingestion adds to `/api/health/ready`: whether OCR can read scans here, and
whether PDF pages are read by the compiled reader.

Reported, not required: only workers read scans and PDFs, and text still works.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings

from .ocr.engine import engine_installed

OCR_HINT = (
    "Scanned PDFs and images fail with ocr_unavailable: install the OCR engine "
    "(pip install -r requirements.txt: rapidocr, onnxruntime) or set OCR_ENABLED=false."
)


def ocr_check() -> str:
    if not settings.OCR_ENABLED:
        return "disabled"
    return "ok" if engine_installed() else "unavailable"


# `ingestion.formats.pdf_native.LIBRARY_PATH`, looked at without importing the
# parsing libraries into the web tier (a test holds the two equal).
PDF_READER_PATH = Path(__file__).resolve().parent / "formats/native/pdfium_pages.so"
PDF_READER_HINT = (
    "PDFs are read in Python, about 1.5 times slower: build the compiled PDF page "
    "reader with `make ingestion/formats/native/pdfium_pages.so` (a C compiler)."
)


def pdf_reader_check() -> str:
    return "ok" if PDF_READER_PATH.is_file() else "python"
