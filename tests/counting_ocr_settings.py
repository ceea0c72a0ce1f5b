"""Test-only settings: the real settings, with parsers whose OCR calls are counted
(`tests/ingestion/counting_ocr.py`) into the file CURATOR_TEST_OCR_LOG names."""

from __future__ import annotations

from config.settings import *  # noqa: F403
from config.settings import INGESTION_PARSER_ENV
from ingestion.sandbox import processes

processes.PRELOAD = (*processes.PRELOAD, "tests.ingestion.counting_ocr")
INGESTION_PARSER_ENV = [*INGESTION_PARSER_ENV, "CURATOR_TEST_OCR_LOG"]
