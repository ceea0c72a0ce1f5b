"""Strict Open XML (ISO 29500 Strict) packages read like transitional ones."""

from __future__ import annotations

import io
import zipfile

import docx
import pytest
from docx.enum.style import WD_STYLE_TYPE

from ingestion.blocks import FileTooLarge, ParseError, ParseLimits
from ingestion.formats import ooxml, parse_document
from tests.edge_samples import strict_ooxml

STRICT_WORD = b"http://purl.oclc.org/ooxml/wordprocessingml/main"
TRANSITIONAL_WORD = b"http://schemas.openxmlformats.org/wordprocessingml/2006/main"


def rich_docx() -> bytes:
    """Headings, a custom heading style, a list, a table: whatever reads styles."""
    document = docx.Document()
    document.add_heading("Leave", level=1)
    document.add_paragraph("Every employee receives 25 days.")
    document.add_paragraph("Ask two weeks ahead.", style="List Bullet")
    custom = document.styles.add_style("Kapitel", WD_STYLE_TYPE.PARAGRAPH)
    custom.base_style = document.styles["Heading 2"]
    document.add_paragraph("Sick leave", style="Kapitel")
    table = document.add_table(rows=2, cols=2)
    for row, cells in enumerate([("Region", "Days"), ("East", "25")]):
        for column, text in enumerate(cells):
            table.cell(row, column).text = text
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def members(package: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(package)) as archive:
        return {info.filename: archive.read(info) for info in archive.infolist()}


def test_a_strict_docx_reads_like_its_transitional_original() -> None:
    transitional = rich_docx()
    strict = strict_ooxml(transitional)
    assert STRICT_WORD in members(strict)["word/document.xml"]
    with pytest.raises(KeyError):  # python-docx reads transitional only
        docx.Document(io.BytesIO(strict))

    blocks = parse_document("docx", strict)

    assert blocks == parse_document("docx", transitional)
    assert [(block.kind, block.text, block.heading_path) for block in blocks] == [
        ("heading", "Leave", ("Leave",)),
        ("paragraph", "Every employee receives 25 days.", ("Leave",)),
        ("list_item", "Ask two weeks ahead.", ("Leave",)),
        ("heading", "Sick leave", ("Leave", "Sick leave")),
        ("table_row", "Region | Days", ("Leave", "Sick leave")),
        ("table_row", "East | 25", ("Leave", "Sick leave")),
    ]


def test_a_strict_docx_can_be_read_in_shards() -> None:
    strict = strict_ooxml(rich_docx())
    shards = [parse_document("docx", strict, shard=(i, 2)) for i in range(2)]
    assert shards[0] + shards[1] == parse_document("docx", strict)


def test_transitional_xml_maps_each_strict_uri() -> None:
    strict = (
        b'<r xmlns:w="http://purl.oclc.org/ooxml/wordprocessingml/main" '
        b'xmlns:x="http://purl.oclc.org/ooxml/spreadsheetml/main" '
        b'xmlns:p="http://purl.oclc.org/ooxml/presentationml/main" '
        b'xmlns:a="http://purl.oclc.org/ooxml/drawingml/main" '
        b'xmlns:r="http://purl.oclc.org/ooxml/officeDocument/relationships">'
        b'<rel Type="http://purl.oclc.org/ooxml/officeDocument/relationships/'
        b'officeDocument"/>'
        b'<rel Type="http://purl.oclc.org/ooxml/officeDocument/relationships/'
        b'extendedProperties"/>'
        b'<rel Type="http://schemas.openxmlformats.org/package/2006/relationships/'
        b'metadata/core-properties"/></r>'
    )
    assert ooxml.transitional_xml(strict) == (
        b'<r xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" '
        b'xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
        b'xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" '
        b'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
        b'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/'
        b'relationships">'
        b'<rel Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        b'relationships/officeDocument"/>'
        b'<rel Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        b'relationships/extended-properties"/>'
        b'<rel Type="http://schemas.openxmlformats.org/package/2006/relationships/'
        b'metadata/core-properties"/></r>'
    )
    transitional = b'<w:p xmlns:w="http://schemas.openxmlformats.org/x"/>'
    assert ooxml.transitional_xml(transitional) is transitional


def test_transitional_package_gives_libraries_a_copy_they_can_read() -> None:
    original = rich_docx()
    strict = strict_ooxml(original)

    copy = ooxml.transitional_package(strict, label="DOCX")

    document = docx.Document(io.BytesIO(copy))
    assert [p.text for p in document.paragraphs] == [
        "Leave",
        "Every employee receives 25 days.",
        "Ask two weeks ahead.",
        "Sick leave",
    ]
    assert document.paragraphs[3].style.name == "Kapitel"
    assert [c.text for c in document.tables[0].rows[1].cells] == ["East", "25"]
    rewritten, source = members(copy), members(strict)
    assert list(rewritten) == list(source)
    assert not any(b"purl.oclc.org/ooxml" in data for data in rewritten.values())
    assert TRANSITIONAL_WORD in rewritten["word/document.xml"]
    # Media are copied as they are.
    assert rewritten["docProps/thumbnail.jpeg"] == source["docProps/thumbnail.jpeg"]


def test_transitional_package_returns_a_transitional_package_as_it_is() -> None:
    original = rich_docx()
    assert ooxml.transitional_package(original) is original


def test_transitional_package_is_bounded_by_the_limits() -> None:
    strict = strict_ooxml(rich_docx())
    with pytest.raises(FileTooLarge):
        ooxml.transitional_package(
            strict, ParseLimits(max_docx_uncompressed_bytes=1024), label="XLSX"
        )
    with pytest.raises(ParseError, match="not a valid XLSX archive"):
        ooxml.transitional_package(b"PK\x03\x04 truncated", label="XLSX")
