"""Which item of a table is highest or lowest (`table_comparisons`)."""

from __future__ import annotations

from answers.question import analyse
from answers.table_answers import table_claims
from tests.answers.test_table_lookup import source

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


REGIONS = """\
 | Fiscal Year 2019 Net Sales | Fiscal Year 2019 % of Total | \
Fiscal Year 2018 Net Sales | Fiscal Year 2018 % of Total
EMEA | 315,535 | 22.8% | 277,898 | 23.1%
JPKO | 183,191 | 13.2% | 7,081 | 0.6%
"""

DEFERRED = """\
Significant components of deferred tax assets are as follows:

 | 2019 | 2018
Deferred tax assets: |  |
Net operating loss carry forward | $183,297 | $119,259
Inventories | 12,904 | 11,305
Accrued expenses | 58,107 | 49,621
Total deferred tax assets | 254,308 | 180,185
"""

INTANGIBLES = """\
 | Gross | Accumulated amortization | Net
Finite-Lived Intangible Assets |  |  |
Customer relationships | $1,597.6 | $(498.7) | $1,098.9
Underlying rights and other | 80.1 | (20.2) | 59.9
Indefinite-Lived Intangible Assets |  |  |
Trade names | 400.0 | — | 400.0
"""


def test_a_percentage_is_compared_with_the_rows_percentages_only():
    (said,) = claims(
        "How many years did the percentage of EMEA exceed 20%?",
        REGIONS,
    )

    assert said.endswith("years: 2")
    assert "315,535" not in said


def test_how_many_components_counts_the_rows_of_the_section_named():
    (said,) = claims(
        "How many components are there under deferred tax assets?", DEFERRED
    )

    assert said == (
        "Deferred tax assets: Net operating loss carry forward; Inventories; "
        "Accrued expenses; count: 3"
    )


def test_how_many_components_beyond_an_amount_in_a_year():
    (said,) = claims(
        "How many components of deferred tax assets exceeded $50,000 in 2019?",
        DEFERRED,
    )

    assert said.endswith("Net operating loss carry forward; Accrued expenses; count: 2")


def test_a_table_that_repeats_its_rows_counts_each_once():
    (said,) = claims(
        "How many types of finite-lived intangible assets are there?", INTANGIBLES
    )

    assert said.endswith("count: 2")
