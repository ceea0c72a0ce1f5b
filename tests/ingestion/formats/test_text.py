"""Plain text: paragraphs separated by blank lines."""

from __future__ import annotations

from ingestion.formats import text
from tests.ingestion.formats.common import WHOLE, texts


def test_text_paragraphs() -> None:
    data = ("First line\nsame paragraph.\r\n\r\nSecond.\n\n\n第一\n第二").encode()
    assert texts(text.parse(data, WHOLE)) == [
        "First line same paragraph.",
        "Second.",
        "第一第二",
    ]
