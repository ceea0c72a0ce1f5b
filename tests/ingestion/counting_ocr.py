"""A counting OCR engine for tests, preloaded in the parser processes of a worker
started with `tests.counting_ocr_settings`: each page read by OCR appends its text
as one line to the file that CURATOR_TEST_OCR_LOG names (no Django here)."""

from __future__ import annotations

import os

from ingestion import ocr

_ocr_image = ocr.ocr_image


def _counted(image, **options):
    page = _ocr_image(image, **options)
    with open(os.environ["CURATOR_TEST_OCR_LOG"], "a") as log:
        log.write(" ".join(page.paragraphs) + "\n")
    return page


ocr.ocr_image = _counted
