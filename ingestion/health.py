"""What ingestion adds to `/api/health/ready`: whether OCR can read scans here.

Reported, not required: only workers read scans, and text still works.
"""

from __future__ import annotations

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
