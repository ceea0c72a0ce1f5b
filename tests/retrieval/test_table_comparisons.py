"""Which item of a table is highest or lowest (`table_comparisons`)."""

from __future__ import annotations

from retrieval.answers.question import analyse
from retrieval.answers.table_answers import table_claims
from tests.retrieval.test_table_lookup import source

OBLIGATIONS = """\
A summary of our contractual obligations as of May 26, 2019, was as follows:

 | Payments Due by Period (in millions) | |
Contractual Obligations | Total | Less than 1 Year | 1-3 Years
Long-term debt | $10,556.6 | $— | $2,747.6
Operating lease obligations | 312.6 | 52.1 | 86.4
Purchase obligations and other contracts | 1,483.5 | 1,195.3 | 223.4
Total | $12,519.1 | $1,269.0 | $3,098.4
"""

GOODWILL = """\
Changes in goodwill by segment:

 | Transportation Systems | Mission Solutions | Global Defense | Total
Net balances at September 30, 2017 | $ 50,870 | $ — | $ 270,692 | $ 321,562
Acquisitions | — | 13,085 | 665 | 13,750
Net balances at September 30, 2018 | 49,786 | 138,127 | 145,713 | 333,626
"""


def claims(question: str, text: str) -> list[str]:
    return [
        claim.text
        for claim in table_claims(analyse(question), [source("S1", text)], None).claims
    ]


def test_the_row_with_the_largest_cell_of_the_column_asked():
    (said,) = claims(
        "Which contractual obligation has the highest total value?", OBLIGATIONS
    )

    assert said.startswith("Long-term debt has the highest")
    assert "$10,556.6" in said


def test_the_row_with_the_smallest_cell_leaves_the_total_out():
    (said,) = claims(
        "Which contractual obligation has the lowest payments due in 1-3 years?",
        OBLIGATIONS,
    )

    assert said.startswith("Operating lease obligations has the lowest")


def test_the_column_with_the_largest_cell_of_the_row_asked():
    (said,) = claims(
        "In which segment were the net balances at September 30, 2018 the largest?",
        GOODWILL,
    )

    assert said.startswith("Global Defense has the highest")
    assert "145,713" in said
    assert "333,626" not in said  # the total is no segment


def test_a_threshold_is_not_a_comparison_of_items():
    said = claims(
        "What are the respective values of operating lease obligations that are "
        "less than 1 year and between 1-3 years?",
        OBLIGATIONS,
    )

    assert not any("has the" in claim for claim in said)


def test_an_item_the_table_does_not_name_is_not_compared():
    assert claims("Which region has the highest head count?", OBLIGATIONS) == []
