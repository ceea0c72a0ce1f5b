"""Tables read back from our parsers' rows: headers, column labels, row labels."""

from __future__ import annotations

import pytest

from answers.tables import read_table

FINANCIAL = [
    "|  | Years Ended September 30, | ",
    " | 2019 | 2018 | 2017",
    "Fixed Price | $ 1,452.4 | $ 1,146.2 | $ 1,036.9",
    "Deferred tax assets:",
    "Net operating loss | 1,234 | (3,990) | —",
]


def test_header_rows_column_labels_and_sections():
    table = read_table(FINANCIAL)

    assert table.columns == (
        "",
        "Years Ended September 30, 2019",
        "Years Ended September 30, 2018",
        "Years Ended September 30, 2017",
    )
    assert [row.label for row in table.rows] == [
        "Fixed Price",
        "Deferred tax assets Net operating loss",
    ]
    assert table.rows[1].value(2) == "(3,990)"


def test_dates_and_units_are_header_cells_amounts_are_not():
    table = read_table(
        [
            "|  | December 31 | ",
            " | 2019 | 2 0 1 8",
            " | U.S. $ in thousands | ",
            "Operating loss carryforward | 73,260 | 57,768",
        ]
    )

    assert table.columns[1].startswith("December 31 2019")
    assert table.columns[2] == "December 31 2018"
    assert [row.label for row in table.rows] == ["Operating loss carryforward"]


def test_a_table_cut_in_the_middle_has_no_header():
    table = read_table(["Other | 44.1 | 56.7", "Total sales | $1,496.5 | $1,202.9"])

    assert not any(table.columns)
    assert [row.label for row in table.rows] == ["Other", "Total sales"]


def test_a_text_table_takes_its_first_row_as_header():
    table = read_table(
        ["城市类别 | 每晚上限（元）", "一线城市 | 600", "其他城市 | 450"]
    )

    assert table.columns == ("城市类别", "每晚上限（元）")
    assert [row.label for row in table.rows] == ["一线城市", "其他城市"]


def test_a_two_digit_amount_is_not_a_year():
    # "14" could only be a year written '14 or FY14: here it is a head count.
    table = read_table(["Team | Hires", "Sales | 32", "Support | 14"])

    assert [row.label for row in table.rows] == ["Sales", "Support"]
    assert table.rows[1].value(1) == "14"


def test_a_label_alone_below_the_column_names_opens_the_first_section():
    table = read_table(
        [
            "Balance Sheet | January 3, 2020 | December 28, 2018",
            " | (in millions) | ",
            "Other current assets: |  | ",
            "Transition costs and project assets(1) | $98 | $145",
            "Other assets: |  | ",
            "Transition costs and project assets(1) | $207 | $22",
        ]
    )

    assert table.columns[:2] == ("Balance Sheet", "January 3, 2020 (in millions)")
    assert [row.label for row in table.rows] == [
        "Other current assets Transition costs and project assets(1)",
        "Other assets Transition costs and project assets(1)",
    ]


@pytest.mark.parametrize("label", ["(In thousands)", "December 31, 2019", "2019:"])
def test_a_unit_or_a_period_alone_below_the_column_names_is_still_header(label):
    table = read_table([" | Amount | Rate", f"{label} |  | ", "Revenue | 1,250 | 4.0%"])

    assert label in table.columns[0]
    assert [row.label for row in table.rows] == ["Revenue"]


def test_a_sections_total_closes_it():
    table = read_table(
        [
            " | 2019 | 2018",
            "Current provision for income taxes: |  | ",
            "Foreign | 1,716 | 953",
            "Total current | 1,765 | 997",
            "Provision for income taxes | $1,407 | $1,082",
        ]
    )

    assert [row.label for row in table.rows] == [
        "Current provision for income taxes Foreign",
        "Current provision for income taxes Total current",
        "Provision for income taxes",
    ]


def test_a_first_row_of_years_under_a_title_cell_names_the_columns():
    table = read_table(
        [
            "OWASP Top Ten | 2003 | 2004 | 2007",
            "Buffer Overflows | A5 | A5 | û",
            "Cross Site Scripting (XSS) | A4 | A4 | A1",
        ]
    )

    assert table.columns == ("OWASP Top Ten", "2003", "2004", "2007")
    assert [row.label for row in table.rows] == [
        "Buffer Overflows",
        "Cross Site Scripting (XSS)",
    ]
