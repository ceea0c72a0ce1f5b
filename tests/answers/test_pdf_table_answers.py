"""Table answers from a PDF: a financial table ingested through the real worker."""

from __future__ import annotations

import pytest

from answers.chat import chat_answer
from tests.ingestion.formats import pdf_samples as samples

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("ruled", [True, False], ids=["ruled", "unruled"])
def test_a_pdf_table_answers_with_the_cell_and_with_a_calculation(
    ingest, viewer, knowledge_base, ruled
):
    content = samples.table_pdf(samples.SALES, spans=samples.SALES_SPANS, ruled=ruled)
    ingest(
        knowledge_base,
        content,
        filename="sales.pdf",
        content_type="application/pdf",
    )

    cell = chat_answer(user=viewer, question="What was Total sales in 2019?")
    change = chat_answer(
        user=viewer, question="What is the change in Other from 2018 to 2019?"
    )

    assert [claim.text for claim in cell.claims] == [
        "Total sales, Years Ended September 30, 2019: $ 1,496.5"
    ]
    assert cell.sources[0].filename == "sales.pdf"
    (claim,) = change.claims
    assert claim.text.endswith("44.1 − 56.7 = -12.6")
    assert claim.calculation is not None
    assert str(claim.calculation.result) == "-12.6"
