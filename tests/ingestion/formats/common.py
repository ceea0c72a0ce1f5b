"""Helpers for the format tests: the corpus, a whole-file request, saved DOCX."""

from __future__ import annotations

from pathlib import Path

import docx

from ingestion.blocks import Block
from ingestion.formats import ParseRequest
from tests.ingestion.conftest import CORPUS

__all__ = ["CORPUS", "WHOLE", "save", "texts"]

WHOLE = ParseRequest()  # the whole file, within the default limits


def texts(blocks: list[Block]) -> list[str]:
    return [block.text for block in blocks]


def save(document: docx.document.Document, tmp_path: Path) -> bytes:
    path = tmp_path / "sample.docx"
    document.save(str(path))
    return path.read_bytes()
