"""PDFs with tables whose cells are known, rendered with reportlab's platypus.

`ruled` draws a grid (GRID), `unruled` sets a financial statement: amounts
right-aligned, no lines but a rule under the header (as annual reports do).
"""

from __future__ import annotations

import io
import random
from collections.abc import Sequence

from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.cidfonts import UnicodeCIDFont
from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate, Spacer, Table
from reportlab.platypus.flowables import Flowable

Rows = Sequence[Sequence[str]]
Span = tuple[tuple[int, int], tuple[int, int]]  # (column, row) of the two corners

CJK_FONT = "STSong-Light"
pdfmetrics.registerFont(UnicodeCIDFont(CJK_FONT))

SALES = [
    ["", "Years Ended September 30,", "", ""],
    ["", "2019", "2018", "2017"],
    ["Fixed Price", "$ 1,452.4", "$ 1,146.2", "$ 1,036.9"],
    ["Other", "44.1", "56.7", "70.8"],
    ["Total sales", "$ 1,496.5", "$ 1,202.9", "$ 1,107.7"],
]
SALES_SPANS: list[Span] = [((1, 0), (3, 0))]

# The text around a table, and a page of text only.
BEFORE = "Sales by contract type are shown in the table below."
AFTER = "Substantially all of our contracts are fixed-price type contracts."
PROSE = (
    "The committee met in the spring to review the plans for the coming year. It "
    "heard the reports of the working groups, discussed the budget at length and "
    "agreed that the archive would move to the new building before the autumn. "
)


def _style(font: str) -> ParagraphStyle:
    return ParagraphStyle("body", fontName=font, fontSize=10, leading=13)


def _table(
    rows: Rows,
    *,
    ruled: bool,
    spans: Sequence[Span],
    font: str,
    widths: Sequence[float] | None,
) -> Table:
    width = len(rows[0])
    commands: list[tuple] = [
        ("FONT", (0, 0), (-1, -1), font, 10),
        ("ALIGN", (1, 0), (-1, -1), "RIGHT"),
        *[("SPAN", *span) for span in spans],
    ]
    if ruled:
        commands += [("GRID", (0, 0), (-1, -1), 0.5, "black")]
    else:
        header_rows = 1 + max((end[1] for _, end in spans), default=0)
        commands += [
            ("LINEBELOW", (1, header_rows - 1), (-1, header_rows - 1), 0.5, "black"),
            ("ALIGN", (1, 0), (-1, header_rows - 1), "CENTER"),
        ]
    return Table(
        [list(row) for row in rows],
        colWidths=widths or [150] + [75] * (width - 1),
        style=commands,
    )


def table_pdf(rows: Rows, *, spans: Sequence[Span] = (), **options) -> bytes:
    """One table between the paragraphs `before` and `after` (see `tables_pdf`)."""
    return tables_pdf([(rows, spans)], **options)


def tables_pdf(
    tables: Sequence[tuple[Rows, Sequence[Span]]],
    *,
    ruled: bool = True,
    font: str = "Helvetica",
    before: str = BEFORE,
    after: str = AFTER,
    widths: Sequence[float] | None = None,
) -> bytes:
    """Each table (its rows and spans) between `before` and `after`, a page each."""
    story: list[Flowable] = []
    for index, (rows, spans) in enumerate(tables):
        if index:
            story.append(PageBreak())
        if before:
            story += [Paragraph(before, _style(font)), Spacer(1, 12)]
        story.append(_table(rows, ruled=ruled, spans=spans, font=font, widths=widths))
        if after:
            story += [Spacer(1, 12), Paragraph(after, _style(font))]
    return _render(story)


def text_pdf(pages: int, *, paragraphs_per_page: int = 6) -> bytes:
    """`pages` pages of plain paragraphs, no table."""
    story: list[Flowable] = []
    for page in range(pages):
        if page:
            story.append(PageBreak())
        for number in range(paragraphs_per_page):
            text = f"Section {page + 1}.{number + 1}. " + PROSE * 2
            story += [Paragraph(text, _style("Helvetica")), Spacer(1, 8)]
    return _render(story)


def _render(story: list[Flowable]) -> bytes:
    buffer = io.BytesIO()
    SimpleDocTemplate(buffer, pagesize=A4, invariant=True).build(story)
    return buffer.getvalue()


# A header of two rows: a caption spanning the value columns, then the years.
INCOME = [
    ["", "Years ended June 30,", "", ""],
    ["(in millions)", "2019", "2018", "Change"],
    ["Revenue", "125,843", "110,360", "14%"],
    ["Cost of revenue", "42,910", "38,353", "12%"],
    ["Operating expenses:", "", "", ""],
    ["Research and development", "16,876", "14,726", "15%"],
    ["Sales and marketing", "18,213", "17,469", ""],
    ["Operating income", "42,959", "35,058", "23%"],
]
INCOME_SPANS: list[Span] = [((1, 0), (3, 0))]

# Empty cells in the middle of rows: each value must stay in its column.
GAPS = [
    ["Region", "Q1", "Q2", "Q3"],
    ["East", "1,204", "", "1,390"],
    ["West", "", "877", "901"],
    ["North", "455", "470", ""],
]

CJK = [
    ["项目", "2019年", "2018年"],
    ["营业收入", "8,520.3", "7,910.6"],
    ["营业成本", "5,112.8", "4,870.1"],
    ["净利润", "1,204.5", "998.2"],
]

_LABELS = [
    "Net sales",
    "Cost of sales",
    "Gross profit",
    "Selling expenses",
    "Administrative expenses",
    "Research costs",
    "Depreciation",
    "Amortisation",
    "Interest income",
    "Interest expense",
    "Other income",
    "Income before taxes",
    "Income taxes",
    "Net income",
    "Total assets",
    "Total liabilities",
    "Cash and equivalents",
    "Inventories",
    "Receivables",
    "Payables",
]


def random_table(rng: random.Random) -> tuple[list[list[str]], list[Span]]:
    """A financial table of 3-12 rows and 2-5 year columns, some cells empty, some
    amounts negative or in parentheses, half of them under a spanning caption."""
    years = rng.randint(2, 5)
    first = rng.randint(2012, 2021)
    rows = [["", *[str(first + years - 1 - n) for n in range(years)]]]
    spans: list[Span] = []
    if rng.random() < 0.5:
        rows.insert(0, ["", "Years ended December 31,", *[""] * (years - 1)])
        spans.append(((1, 0), (years, 0)))
    for label in rng.sample(_LABELS, rng.randint(3, 12)):
        cells = [label]
        for _ in range(years):
            value = rng.uniform(-2000, 90000)
            text = f"{abs(value):,.1f}" if rng.random() < 0.5 else f"{abs(value):,.0f}"
            if value < 0:
                text = f"({text})" if rng.random() < 0.5 else f"-{text}"
            if rng.random() < 0.2:
                text = f"$ {text}"
            cells.append("" if rng.random() < 0.08 else text)
        rows.append(cells)
    return rows, spans
