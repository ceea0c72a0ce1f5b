"""OOXML packages: damaged archives and parts found by relationship."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import docx
import pytest

from ingestion.blocks import HEADING, PARAGRAPH, ParseError
from ingestion.formats import parse_document
from tests.ingestion.formats.common import save


@pytest.mark.parametrize(
    "data",
    [b"not a zip at all", b"", b"PK\x03\x04 truncated"],
    ids=["garbage", "empty", "truncated-zip"],
)
def test_broken_docx(data: bytes) -> None:
    with pytest.raises(ParseError, match="not a valid DOCX archive"):
        parse_document("docx", data)


def test_docx_parts_are_found_by_relationship_not_by_name(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_heading("Leave", level=1)
    document.add_paragraph("Twenty-five days.")
    renamed = {"word/document.xml": "content/main.xml"}
    buffer = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(save(document, tmp_path))) as original,
        zipfile.ZipFile(buffer, "w") as moved,
    ):
        for info in original.infolist():
            data = original.read(info)
            if info.filename in ("[Content_Types].xml", "_rels/.rels"):
                data = data.replace(b"/word/document.xml", b"/content/main.xml")
                data = data.replace(b'"word/document.xml"', b'"content/main.xml"')
            if info.filename == "word/_rels/document.xml.rels":
                info.filename = "content/_rels/main.xml.rels"
                styles = b'Target="../word/styles.xml"'  # relative to the moved part
                data = data.replace(b'Target="styles.xml"', styles)
            moved.writestr(renamed.get(info.filename, info.filename), data)

    blocks = parse_document("docx", buffer.getvalue())

    assert [(b.kind, b.text) for b in blocks] == [
        (HEADING, "Leave"),
        (PARAGRAPH, "Twenty-five days."),
    ]


def test_zip_that_is_not_a_docx() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("hello.txt", "hi")
    with pytest.raises(ParseError, match="DOCX"):
        parse_document("docx", buffer.getvalue())


def test_truncated_real_docx(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_paragraph("Some text " * 200)
    data = save(document, tmp_path)
    with pytest.raises(ParseError):
        parse_document("docx", data[: len(data) // 2])
