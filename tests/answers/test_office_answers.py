"""Answers from slides and spreadsheets, ingested through the real worker and asked
over the API; passages of long tables joined with their header once."""

from __future__ import annotations

import io

import pytest
from openpyxl import Workbook
from pptx import Presentation
from pptx.util import Inches

from documents.kinds import FILE_KINDS
from ingestion.blocks import TABLE_ROW, Block
from ingestion.chunking import chunk_blocks, full_text
from retrieval.models import Chunk
from retrieval.search import _join_adjacent

XLSX = FILE_KINDS.for_extension(".xlsx")[1].content_type
PPTX = FILE_KINDS.for_extension(".pptx")[1].content_type
CITIES = [
    *("Aberdeen", "Bergen", "Cardiff", "Dresden", "Exeter", "Florence", "Geneva"),
    *("Hamburg", "Innsbruck", "Jena", "Kiel", "Lyon", "Malmo", "Nantes", "Oslo"),
    *("Porto", "Quimper", "Riga", "Seville", "Turin", "Utrecht", "Valencia"),
]


def ask(client, question: str) -> dict:
    response = client.post("/api/chat", {"question": question}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def claim_texts(body: dict) -> list[str]:
    return [claim["text"] for claim in body["claims"]]


def revenue_workbook(*, stores: int = 0) -> bytes:
    workbook = Workbook()
    sheet = workbook.active
    sheet.title = "Revenue"
    sheet.append(["Revenue by region, fiscal 2024"])
    sheet.append(["Region", "Q3 revenue", "Q4 revenue"])
    sheet.append(["East", 1204, 1310])
    sheet.append(["West", 980, 1012])
    stores_sheet = workbook.create_sheet("Stores")
    stores_sheet.append(["Store", "Opened", "Floor area (m2)", "Staff"])
    for index in range(stores):
        city = CITIES[index % len(CITIES)]
        stores_sheet.append([f"{city} {index}", 2000 + index % 20, 300 + index, 12])
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()


def results_deck() -> bytes:
    deck = Presentation()
    cover = deck.slides.add_slide(deck.slide_layouts[0])
    cover.shapes.title.text = "Annual kick-off"
    roadmap = deck.slides.add_slide(deck.slide_layouts[1])
    roadmap.shapes.title.text = "Roadmap"
    roadmap.placeholders[
        1
    ].text_frame.text = "The mobile app launches in March 2025 in all regions."
    hiring = deck.slides.add_slide(deck.slide_layouts[5])
    hiring.shapes.title.text = "Hiring plan"
    table = hiring.shapes.add_table(
        3, 2, Inches(1), Inches(2), Inches(6), Inches(1.5)
    ).table
    for row, cells in enumerate(
        [("Team", "New hires"), ("Support", "140"), ("Sales", "95")]
    ):
        for column, value in enumerate(cells):
            table.cell(row, column).text = value
    hiring.notes_slide.notes_text_frame.text = (
        "Remind everyone that referrals earn a bonus of 2,000 euros."
    )
    buffer = io.BytesIO()
    deck.save(buffer)
    return buffer.getvalue()


@pytest.mark.django_db
def test_a_cell_of_a_spreadsheet_is_answered_with_its_row_and_column(
    ingest, viewer, client_for, knowledge_base
):
    ingest(
        knowledge_base, revenue_workbook(), filename="revenue.xlsx", content_type=XLSX
    )

    body = ask(client_for(viewer), "What was the Q3 revenue of East?")

    # The row as a unit, each value labelled by its column.
    assert claim_texts(body) == ["Region: East; Q3 revenue: 1204; Q4 revenue: 1310"]
    assert body["sources"][0]["filename"] == "revenue.xlsx"
    assert body["sources"][0]["heading_path"] == ["Revenue"]


@pytest.mark.django_db
def test_a_row_far_below_the_header_keeps_its_column_names(
    ingest, viewer, client_for, knowledge_base
):
    document = ingest(
        knowledge_base,
        revenue_workbook(stores=400),
        filename="stores.xlsx",
        content_type=XLSX,
    )
    header = "Store | Opened | Floor area (m2) | Staff"
    chunks = list(
        Chunk.objects.filter(document=document, heading_path=["Stores"]).order_by(
            "ordinal"
        )
    )
    assert len(chunks) > 3
    assert all(chunk.text.startswith(header + "\n\n") for chunk in chunks)

    body = ask(client_for(viewer), "What is the floor area (m2) of Valencia 373?")

    # Without the copied header the row would read "Valencia 373 | 2013 | 673 | 12".
    assert claim_texts(body)[0] == (
        "Store: Valencia 373; Opened: 2013; Floor area (m2): 673; Staff: 12"
    )


@pytest.mark.django_db
def test_slides_are_answered_with_their_slide_number(
    ingest, viewer, client_for, knowledge_base
):
    ingest(knowledge_base, results_deck(), filename="kickoff.pptx", content_type=PPTX)
    client = client_for(viewer)

    launch = ask(client, "When does the mobile app launch?")
    hires = ask(client, "How many new hires does the Support team get?")
    bonus = ask(client, "How much is the referral bonus?")

    assert launch["claims"][0]["text"] == (
        "The mobile app launches in March 2025 in all regions."
    )
    assert launch["sources"][0]["page"] == 2
    assert launch["sources"][0]["heading_path"] == ["Roadmap"]
    assert claim_texts(hires) == ["Support, New hires: 140"]
    assert hires["sources"][0]["page"] == 3
    assert "2,000 euros" in bonus["claims"][0]["text"]
    assert bonus["sources"][0]["heading_path"] == ["Hiring plan", "Notes"]


def test_adjacent_chunks_of_a_table_join_with_its_header_once():
    header = "Store | Opened | Staff"
    rows = [f"Store {i} | {2000 + i % 20} | {10 + i % 5}" for i in range(80)]
    blocks = [
        Block(header, ("Stores",), kind=TABLE_ROW),
        *(Block(row, ("Stores",), kind=TABLE_ROW, table_header=header) for row in rows),
    ]
    chunks = chunk_blocks(blocks, max_cjk_chars=100, max_latin_words=60)
    assert len(chunks) > 2

    assert _join_adjacent(chunks) == full_text(blocks)
