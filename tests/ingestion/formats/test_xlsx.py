"""XLSX: workbooks built here with openpyxl (some parts edited by hand), and the
shared corpus."""

from __future__ import annotations

import datetime as dt
import io
import time
import zipfile

import pytest
from openpyxl import Workbook

from ingestion.blocks import (
    HEADING,
    PARAGRAPH,
    TABLE_ROW,
    FileTooLarge,
    ParseError,
    ParseLimits,
    PasswordProtected,
)
from ingestion.formats import ParseRequest, parse_document
from ingestion.formats import xlsx as xlsx_format
from ingestion.formats.xlsx import cell_text
from tests.edge_samples import strict_ooxml
from tests.ingestion.formats.common import CORPUS, WHOLE

SHEET_XML = "xl/worksheets/sheet1.xml"


def saved(workbook: Workbook) -> bytes:
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()


def edited(data: bytes, member: str, edit) -> bytes:
    """The package with one part's XML passed through `edit`."""
    source = zipfile.ZipFile(io.BytesIO(data))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            content = source.read(info)
            if info.filename == member:
                content = edit(content.decode()).encode()
            target.writestr(info.filename, content)
    return buffer.getvalue()


def revenue_workbook() -> Workbook:
    workbook = Workbook()
    sheet = workbook.active
    sheet.title = "Revenue"
    sheet.append(["Revenue by region, fiscal 2024"])
    sheet.append([])
    sheet.append([None, "Region", "Q3 revenue", "Share", "Closed on"])
    sheet.append([None, "East", 1204, 0.1 + 0.2, dt.date(2024, 9, 30)])
    sheet.append([None, "West", 980.5, None, dt.datetime(2024, 10, 1, 13, 5)])
    sheet["D4"].number_format = "0%"
    return workbook


def test_one_section_per_sheet_with_its_header_row_found() -> None:
    blocks = parse_document("xlsx", saved(revenue_workbook()))

    assert [(block.kind, block.text) for block in blocks] == [
        (HEADING, "Revenue"),
        (PARAGRAPH, "Revenue by region, fiscal 2024"),
        # Column A is empty in every row of the table: left out.
        (TABLE_ROW, "Region | Q3 revenue | Share | Closed on"),
        (TABLE_ROW, "East | 1204 | 30% | 2024-09-30"),
        (TABLE_ROW, "West | 980.5 |  | 2024-10-01 13:05"),
    ]
    assert {block.heading_path for block in blocks} == {("Revenue",)}
    assert [block.table_header for block in blocks if block.kind == TABLE_ROW] == [
        "",
        "Region | Q3 revenue | Share | Closed on",
        "Region | Q3 revenue | Share | Closed on",
    ]


def test_a_short_label_row_above_a_wide_table_is_not_its_header() -> None:
    workbook = Workbook()
    sheet = workbook.active
    sheet.append(["Exported by:", "Ann"])
    sheet.append(["Region", "Q1", "Q2", "Q3", "Q4"])
    sheet.append(["East", 1, 2, 3, 4])

    blocks = parse_document("xlsx", saved(workbook))

    assert [(block.kind, block.text) for block in blocks[1:]] == [
        (PARAGRAPH, "Exported by: Ann"),
        (TABLE_ROW, "Region | Q1 | Q2 | Q3 | Q4"),
        (TABLE_ROW, "East | 1 | 2 | 3 | 4"),
    ]


def test_a_sheet_of_numbers_only_is_headed_by_its_first_row() -> None:
    workbook = Workbook()
    for row in ([1, 2], [3, 4]):
        workbook.active.append(row)

    rows = [b for b in parse_document("xlsx", saved(workbook)) if b.kind == TABLE_ROW]

    assert [(row.text, row.table_header) for row in rows] == [
        ("1 | 2", ""),
        ("3 | 4", "1 | 2"),
    ]


def test_formulas_read_as_their_cached_values() -> None:
    workbook = Workbook()
    workbook.active.append(["Region", "Q3 revenue", "Doubled"])
    workbook.active.append(["East", 1204, "=B2*2"])
    # openpyxl writes no cached value; Excel would have written <v>2408</v>.
    data = edited(
        saved(workbook),
        SHEET_XML,
        lambda xml: xml.replace("<f>B2*2</f><v></v>", "<f>B2*2</f><v>2408</v>"),
    )

    blocks = parse_document("xlsx", data)

    assert blocks[-1].text == "East | 1204 | 2408"
    assert "B2*2" not in " ".join(block.text for block in blocks)


def test_hidden_and_very_hidden_sheets_are_left_out() -> None:
    workbook = Workbook()
    workbook.active.title = "Public"
    workbook.active.append(["Region", "Head count"])
    for title, state in (("Workings", "hidden"), ("Secrets", "veryHidden")):
        sheet = workbook.create_sheet(title)
        sheet.append(["Password", "hunter2"])
        sheet.sheet_state = state

    blocks = parse_document("xlsx", saved(workbook))

    assert [block.text for block in blocks if block.kind == HEADING] == ["Public"]
    assert "hunter2" not in " ".join(block.text for block in blocks)


def test_empty_sheets_give_no_sections() -> None:
    workbook = Workbook()
    workbook.active.title = "Empty"
    workbook.create_sheet("Data").append(["Region", "Head count"])
    workbook.create_sheet("Blank cells only").append([None, "", "   "])

    blocks = parse_document("xlsx", saved(workbook))

    assert [block.text for block in blocks] == ["Data", "Region | Head count"]
    assert parse_document("xlsx", saved(Workbook())) == []


@pytest.mark.parametrize(
    ("value", "number_format", "text"),
    [
        (0.1 + 0.2, "General", "0.3"),
        (1204.0, "General", "1204"),
        (1204, "#,##0", "1,204"),
        (1204.5, "#,##0.00", "1,204.50"),
        (0.075, "0.0%", "7.5%"),
        (0.07, "0%", "7%"),
        (3.14159, "0.00", "3.14"),
        (-12.5, '"$"#,##0.00;[Red]-"$"#,##0.00', "-12.50"),
        (dt.datetime(2024, 9, 30), "yyyy-mm-dd", "2024-09-30"),
        (dt.datetime(2024, 9, 30, 8, 15, 30), "General", "2024-09-30 08:15:30"),
        (dt.time(8, 15), "h:mm", "08:15:00"),
        (True, "General", "TRUE"),
        ("  two\nlines ", "General", "two lines"),
        (None, "General", ""),
    ],
)
def test_cells_read_as_displayed(value, number_format, text) -> None:
    assert cell_text(value, number_format) == text


def test_a_sheet_beyond_the_cell_limit_is_file_too_large() -> None:
    workbook = Workbook()
    workbook.active.title = "Big"
    for row in range(30):
        workbook.active.append([f"r{row}c{column}" for column in range(10)])
    data = saved(workbook)
    limits = ParseLimits(max_sheet_cells=299)

    with pytest.raises(FileTooLarge, match="'Big' has more than 299 cells"):
        xlsx_format.parse(data, ParseRequest(limits=limits))
    assert len(xlsx_format.parse(data, ParseRequest(limits=ParseLimits(300)))) > 30


def test_a_wrong_dimension_is_not_trusted() -> None:
    workbook = Workbook()
    workbook.active.append(["Region", "Q3 revenue"])
    workbook.active.append(["East", 1204])
    # Claims the whole grid: trusted, every row would be padded to 16,384 cells
    # and a million empty rows read.
    data = edited(
        saved(workbook),
        SHEET_XML,
        lambda xml: xml.replace(
            '<dimension ref="A1:B2"/>', '<dimension ref="A1:XFD1048576"/>'
        ),
    )
    started = time.perf_counter()

    blocks = parse_document("xlsx", data)

    assert time.perf_counter() - started < 5
    assert [block.text for block in blocks] == [
        "Sheet",
        "Region | Q3 revenue",
        "East | 1204",
    ]


def test_a_row_numbered_far_away_counts_the_rows_before_it() -> None:
    workbook = Workbook()
    workbook.active.append(["Region", "Q3 revenue"])
    data = edited(
        saved(workbook),
        SHEET_XML,
        lambda xml: xml.replace(
            "</sheetData>",
            '<row r="900000"><c r="A900000" t="inlineStr"><is><t>far</t></is></c>'
            "</row></sheetData>",
        ),
    )

    with pytest.raises(FileTooLarge, match="more than 1000 cells"):
        xlsx_format.parse(data, ParseRequest(limits=ParseLimits(max_sheet_cells=1000)))
    assert parse_document("xlsx", data)[-1].text == "far | "


def test_a_damaged_or_foreign_package_is_a_parse_error() -> None:
    data = saved(revenue_workbook())
    with pytest.raises(ParseError, match="not a valid XLSX archive"):
        parse_document("xlsx", data[: len(data) // 2])
    with pytest.raises(ParseError, match="a sheet that cannot be read"):
        parse_document("xlsx", edited(data, SHEET_XML, lambda xml: xml[:-40]))
    with pytest.raises(ParseError, match="not a valid XLSX workbook"):
        parse_document("xlsx", edited(data, "xl/workbook.xml", lambda xml: xml[:-40]))


def test_the_zip_checks_apply() -> None:
    limits = ParseLimits(max_docx_uncompressed_bytes=1000)
    with pytest.raises(FileTooLarge, match="the XLSX holds"):
        xlsx_format.parse(saved(revenue_workbook()), ParseRequest(limits=limits))


def test_part_names_written_with_backslashes_are_read() -> None:
    data = saved(revenue_workbook())
    source = zipfile.ZipFile(io.BytesIO(data))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as target:
        for info in source.infolist():
            target.writestr(info.filename.replace("/", "\\"), source.read(info))

    assert parse_document("xlsx", buffer.getvalue()) == parse_document("xlsx", data)


UNREADABLE_CORPUS_FILES = {
    "xlsx/msoffcrypto-tool/example_password.xlsx",  # encrypted: an OLE container
}


def test_a_strict_workbook_reads_like_its_transitional_original() -> None:
    transitional = saved(revenue_workbook())
    strict = strict_ooxml(transitional)
    with zipfile.ZipFile(io.BytesIO(strict)) as archive:
        assert b"purl.oclc.org/ooxml/spreadsheetml" in archive.read(SHEET_XML)

    assert parse_document("xlsx", strict) == parse_document("xlsx", transitional)


def test_the_encrypted_corpus_workbook_is_password_protected() -> None:
    path = CORPUS / "xlsx" / "msoffcrypto-tool" / "example_password.xlsx"
    if not path.is_file():
        pytest.skip("corpus file not present")

    with pytest.raises(PasswordProtected, match="the XLSX is protected"):
        parse_document("xlsx", path.read_bytes())


def corpus_workbooks() -> list:
    folder = CORPUS / "xlsx"
    return sorted(folder.rglob("*.xlsx")) if folder.is_dir() else []


@pytest.mark.skipif(not corpus_workbooks(), reason="no XLSX corpus")
@pytest.mark.parametrize(
    "path", corpus_workbooks(), ids=lambda path: path.relative_to(CORPUS).as_posix()
)
def test_corpus_workbooks_parse_or_fail_cleanly(path) -> None:
    if path.relative_to(CORPUS).as_posix() in UNREADABLE_CORPUS_FILES:
        with pytest.raises(ParseError):
            xlsx_format.parse(path.read_bytes(), WHOLE)
        return
    blocks = xlsx_format.parse(path.read_bytes(), WHOLE)
    assert blocks[0].kind == HEADING, path


def test_corpus_workbook_with_backslash_names_finds_its_header_row() -> None:
    path = CORPUS / "xlsx" / "calamine" / "issue_530.xlsx"
    if not path.is_file():
        pytest.skip("corpus file not present")

    rows = [
        b for b in xlsx_format.parse(path.read_bytes(), WHOLE) if b.kind == TABLE_ROW
    ]

    assert rows[0].text.startswith("领域 | 平台 | 小微 | 节点组织")
    assert rows[1].text.startswith(
        "集团IT平台 | 集团IT平台 | 技术中心 | 基础能力 |  | 9"
    )
