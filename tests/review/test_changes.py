"""The diff of two versions ingested through the real worker."""

from __future__ import annotations

import pytest

from retrieval.models import Chunk
from review import changes

pytestmark = pytest.mark.django_db

LONG = " ".join(
    f"Rule {i} says that a claim for travel costs needs a receipt." for i in range(120)
)
V1 = f"""# Travel policy

## Claims

{LONG}

Claims are paid within 30 days.

## Hotels

Hotels up to 150 euros a night are booked by the travel desk.
""".encode()
V2 = f"""# Travel policy

## Claims

Every claim goes through the expense tool. {LONG}

Claims are paid within 14 days.

## Hotels

Hotels up to 150 euros a night are booked by the travel desk.

Trains are preferred to flights under four hours.
""".encode()


def test_an_edit_that_moves_chunk_boundaries_is_one_changed_passage(
    ingest, knowledge_base
):
    v1 = ingest(knowledge_base, V1, filename="travel.md")
    v2 = ingest(
        knowledge_base,
        V2,
        filename="travel.md",
        family_id=v1.family_id,
        version=2,
        publish=False,
    )
    assert Chunk.objects.filter(document=v2).count() >= 3  # the long rule is cut

    result = changes.document_changes(v2)

    assert result.comparison == changes.Comparison.COMPARED
    assert result.published.pk == v1.pk
    summary = result.summary
    assert (summary.added, summary.removed, summary.changed) == (1, 0, 2)
    assert (summary.unchanged, summary.passages, summary.published_passages) == (
        1,
        4,
        3,
    )
    long_rule, payment, trains = result.diff.changes
    assert long_rule.new.heading_path == ("Travel policy", "Claims")
    assert [s.text for s in long_rule.segments if s.op == "insert"] == [
        "Every claim goes through the expense tool. "
    ]
    assert [s.op for s in long_rule.segments] == ["insert", "equal"]
    assert [(s.op, s.text) for s in payment.segments if s.op != "equal"] == [
        ("delete", "30"),
        ("insert", "14"),
    ]
    assert trains.kind == "added"
    assert trains.new.heading_path == ("Travel policy", "Hotels")
