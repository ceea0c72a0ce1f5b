"""PDF tables: cells recovered in their row and column, and what finding them costs.

- Cells: the tables of `tests/ingestion/formats/pdf_samples.py` (fixed ones with a
  two-row header, empty cells, Chinese; and 60 random financial tables), rendered
  ruled (a grid) and unruled (amounts right-aligned, a rule under the header). A
  cell counts when the row and column it was rendered in hold exactly its text.
  Ours (`ingestion.formats.pdf`) against pdfplumber's `find_tables` with the
  "lines" and the "text" strategy on the same pages (best table per page).
- Cost: `pdf.parse` with the table finder against the same parse giving
  paragraphs only, interleaved, median of `--rounds`: the corpus PDFs, a generated
  text-only PDF of 50 pages, and the table PDFs; OCR switched off.

    python bench/pdf_tables.py [--rounds 5] [--no-write]
"""

from __future__ import annotations

import argparse
import io
import random
import sys
import time
from collections.abc import Callable

from common import CORPUS, REPO, markdown_table, median, write_section

sys.path.insert(0, str(REPO))

import pdfplumber

from ingestion.blocks import TABLE_ROW, Block, ParseError, ParseLimits
from ingestion.formats import pdf
from ingestion.formats.base import ParseRequest
from ingestion.formats.pdf_layout import glyph_paragraphs
from tests.ingestion.formats import pdf_samples as samples

# OCR off: scanned corpus pages would time the OCR engine, the same in both runs.
WHOLE = ParseRequest(limits=ParseLimits(ocr_enabled=False))
RANDOM_TABLES = 60


def paragraphs_only(glyphs, rulings, *, page: int, clean) -> list[Block]:
    """The page as it was read before tables: paragraphs of `glyph_paragraphs`."""
    texts = (clean(lines) for lines in glyph_paragraphs(glyphs))
    return [Block(text=text, page=page) for text in texts if text]


def sample_tables() -> dict[str, list[tuple[list[list[str]], list, str]]]:
    rng = random.Random(16)
    fixed = [
        (samples.SALES, samples.SALES_SPANS, "Helvetica"),
        (samples.INCOME, samples.INCOME_SPANS, "Helvetica"),
        (samples.GAPS, [], "Helvetica"),
        (samples.CJK, [], samples.CJK_FONT),
    ]
    generated = [
        (*samples.random_table(rng), "Helvetica") for _ in range(RANDOM_TABLES)
    ]
    return {"fixed (4)": fixed, f"random ({RANDOM_TABLES})": generated}


def score(expected: list[list[str]], found: list[list[str]]) -> tuple[int, int]:
    """(cells in their row and column, non-empty cells expected), at the best
    alignment of `found` (text or columns found around the table shift it)."""
    total = sum(1 for row in expected for cell in row if cell)
    best = 0
    for rows_before in range(max(1, len(found) - len(expected) + 1)):
        for columns_before in range(3):
            right = 0
            for row, got in zip(expected, found[rows_before:], strict=False):
                got = got[columns_before:]
                right += sum(
                    1
                    for column, cell in enumerate(row)
                    if cell
                    and column < len(got)
                    and " ".join(got[column].split()) == cell
                )
            best = max(best, right)
    return best, total


def ours(data: bytes) -> list[list[list[str]]]:
    """The table rows of each page, split back into cells."""
    pages: dict[int, list[list[str]]] = {}
    for block in pdf.parse(data, WHOLE):
        if block.kind == TABLE_ROW:
            pages.setdefault(block.page, []).append(block.text.split(" | "))
    return [pages.get(number, []) for number in range(1, max(pages, default=0) + 1)]


def plumber(strategy: str) -> Callable[[bytes, list[list[str]]], list[list[str]]]:
    settings = {"vertical_strategy": strategy, "horizontal_strategy": strategy}

    def read(data: bytes, expected: list[list[str]]) -> list[list[str]]:
        with pdfplumber.open(io.BytesIO(data)) as document:
            tables = document.pages[0].extract_tables(settings)
        tables = [[[cell or "" for cell in row] for row in t] for t in tables]
        return max(tables, key=lambda t: score(expected, t)[0], default=[])

    return read


def cell_rows() -> list[list]:
    rows = []
    for name, tables in sample_tables().items():
        for ruled in (True, False):
            counts = {"ours": [0, 0], "lines": [0, 0], "text": [0, 0]}
            for table, spans, font in tables:
                data = samples.table_pdf(table, spans=spans, ruled=ruled, font=font)
                found = ours(data)
                results = {
                    "ours": found[0] if found else [],
                    "lines": plumber("lines")(data, table),
                    "text": plumber("text")(data, table),
                }
                for method, rows_found in results.items():
                    right, total = score(table, rows_found)
                    counts[method][0] += right
                    counts[method][1] += total
            cells = counts["ours"][1]
            shares = [f"{100 * counts[m][0] / cells:.1f} %" for m in counts]
            rows.append([name, "ruled" if ruled else "unruled", cells, *shares])
    return rows


def parse_seconds(files: list[bytes]) -> float:
    started = time.perf_counter()
    for data in files:
        try:
            pdf.parse(data, WHOLE)
        except ParseError:
            continue
    return time.perf_counter() - started


def cost_rows(rounds: int) -> list[list]:
    corpus = [p.read_bytes() for p in sorted((CORPUS / "pdf").rglob("*.pdf"))]
    tables = [
        samples.table_pdf(t, spans=s, ruled=ruled, font=f)
        for _, group in sample_tables().items()
        for t, s, f in group
        for ruled in (True, False)
    ]
    sets = {
        f"corpus ({len(corpus)} PDFs)": corpus,
        "text only, 50 pages": [samples.text_pdf(50)],
        f"table PDFs ({len(tables)})": tables,
    }
    rows = []
    with_tables = pdf.page_blocks
    for name, files in sets.items():
        pages = sum(_pages(data) for data in files)
        before, after = [], []
        for _ in range(rounds):
            pdf.page_blocks = paragraphs_only
            before.append(parse_seconds(files))
            pdf.page_blocks = with_tables
            after.append(parse_seconds(files))
        rows.append(
            [
                name,
                pages,
                pages / median(before),
                pages / median(after),
                median(after) / median(before),
            ]
        )
    return rows


def _pages(data: bytes) -> int:
    try:
        return pdf.pdf_page_count(data)
    except ParseError:
        return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="runs per set")
    parser.add_argument("--no-write", action="store_true", help="only print")
    args = parser.parse_args()
    cells = markdown_table(
        [
            "tables",
            "drawn",
            "cells",
            "ours",
            "pdfplumber lines",
            "pdfplumber text",
        ],
        cell_rows(),
    )
    cost = markdown_table(
        [
            "PDFs",
            "pages",
            "pages/s paragraphs only",
            "pages/s with tables",
            "time with / without",
        ],
        cost_rows(args.rounds),
    )
    body = f"{cells}\n\n{cost}"
    print(body)
    if not args.no_write:
        write_section(
            "pdf-tables",
            "PDF tables",
            "`python bench/pdf_tables.py`: the tables of "
            "`tests/ingestion/formats/pdf_samples.py` (four fixed ones: a caption "
            "over the years, a two-row header with a section row, empty cells, "
            f"Chinese; and {RANDOM_TABLES} random financial tables of 3-12 rows "
            "and 2-5 year columns, some cells empty, negative or with a detached "
            "`$`), each rendered *ruled* (a grid) and *unruled* (amounts "
            "right-aligned, one rule under the header). A cell counts when the "
            "row and column it was rendered in hold exactly its text; for "
            "pdfplumber's own `extract_tables` the best table of the page counts. "
            "Cost: `pdf.parse` with the table finder against the same parse "
            "giving paragraphs only (the parse before tables), interleaved, median "
            f"of {args.rounds} runs. Target: at most 10 % slower on pages without "
            "tables.",
            body,
        )


if __name__ == "__main__":
    main()
