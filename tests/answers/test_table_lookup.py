"""Which row of which table a question names (`answers.table_lookup`)."""

from __future__ import annotations

from answers.evidence import tables_of
from answers.question import analyse
from answers.table_lookup import best_row, columns_asked
from answers.tables import read_table
from answers.types import Source

REGIONS = read_table(
    [
        " | Fiscal Year 2019 Net Sales | Fiscal Year 2019 % of Total",
        "Americas | 337,842 | 24.4%",
        "EMEA | 315,535 | 22.8%",
    ]
)
COUNTRIES = read_table(
    [
        " | 2019 | 2018",
        "United States | $614,493 | $668,580",
        "Total Americas | 1,296,660 | 1,330,638",
    ]
)
OLDER = read_table(
    [
        "(dollars in thousands) | 2018 | 2017",
        "Total other (expense) income, net | (1,207) | 450",
    ]
)
NEWER = read_table(
    [
        "(dollars in thousands) | 2019 | 2018",
        "Interest income | $ 2,515 | $ 1,310",
        "Total other income (expense), net | $ (3,781) | $ (2,727)",
    ]
)


def source(name: str, text: str = "") -> Source:
    return Source(
        id=name,
        document_id=None,
        document_version=1,
        knowledge_base_id="kb",
        filename=f"{name}.md",
        heading_path=[],
        page=None,
        text=text,
    )


def test_the_label_holding_more_of_the_question_wins_a_tie():
    tables = [(source("S1"), REGIONS), (source("S2"), COUNTRIES)]

    match = best_row(
        analyse("What was the Total Americas amount in 2019?"), tables, None
    )

    assert (match.source.id, match.row.label) == ("S2", "Total Americas")


def test_then_the_label_the_question_writes_word_for_word():
    tables = [(source("S1"), OLDER), (source("S2"), NEWER)]
    question = analyse(
        "In which year was Total other income (expense), net less than -3,000?"
    )

    match = best_row(question, tables, None)

    assert (match.source.id, match.row.label) == (
        "S2",
        "Total other income (expense), net",
    )


def test_a_unit_word_is_not_part_of_the_row_asked_for():
    tables = [(source("S1"), COUNTRIES)]
    question = analyse("What was the United States amount in 2019, in thousands?")

    match = best_row(question, tables, None)

    assert match.row.label == "United States"
    assert match.score == 1.0


def test_of_two_columns_of_the_year_asked_the_one_its_words_name():
    table = read_table(
        [
            " | Financial assets | | Financial liabilities | ",
            " | 2019 | 2018 | 2019 | 2018",
            "Opening balance – IAS 39 | 77,131 | 80,002 | 2,154 | 2,310",
        ]
    )
    question = analyse(
        "What is the 2018 IAS 39 opening balance of financial liabilities?"
    )

    columns = columns_asked(question, table, table.rows[0])

    assert [table.columns[c] for c in columns] == ["Financial liabilities 2018"]


DSU_NOTE = """\
| 2019 | 2018
Outstanding, beginning of the year | 42,607 | 40,446
Issued | 11,328 | 9,741
Outstanding, end of the year | 53,935 | 42,607

Under the DSU Plan, the following DSUs were issued by the Corporation and are \
outstanding at August 31:
"""


def test_the_sentence_that_says_what_a_table_shows_names_its_rows_too():
    note = source("S1", DSU_NOTE)
    (table,) = tables_of(note)

    assert table.caption.startswith("Under the DSU Plan, the following DSUs")
    match = best_row(analyse("What was the issued DSU in 2019?"), [(note, table)], None)
    assert match.row.label == "Issued"


def test_a_caption_ending_in_a_colon_belongs_to_the_table_below_it():
    text = (
        "Revenue grew in every region.\n\n"
        "Deferred revenue by region was as follows:\n"
        " | 2019 | 2018\nAmericas | 10 | 9\n\n"
        "Head count at year end:\n"
        " | 2019 | 2018\nAmericas | 310 | 290\n"
    )

    captions = [table.caption for table in tables_of(source("S1", text))]

    assert captions == [
        "Deferred revenue by region was as follows:",
        "Head count at year end:",
    ]


CUSTOMERS = read_table(
    [
        " | 2019 | 2018",
        "Apple Inc. (“Apple”) | 32% | 36%",
        "Huawei Technologies Co., Ltd. (“Huawei”) | 13% | 8%",
    ]
)
AFFILIATE = read_table(
    [
        " | 2019 | 2018",
        "Sales: |  | ",
        "Product and equipment sales to affiliates | $10,436 | $26,069",
        "Purchases: |  | ",
        "Purchases of raw materials | 9,399 | 256,660",
        "Returns of raw materials | 120 | 98",
    ]
)


def test_a_row_is_named_by_the_short_name_its_label_defines():
    tables = [(source("S1"), CUSTOMERS)]

    match = best_row(analyse("What was the revenue from Huawei in 2018?"), tables, None)

    assert match.row.label == "Huawei Technologies Co., Ltd. (“Huawei”)"


def test_the_only_row_of_a_section_is_named_by_the_section():
    tables = [(source("S1"), AFFILIATE)]

    match = best_row(analyse("What were the sales in 2019?"), tables, None)

    assert match.row.cells[0] == "Product and equipment sales to affiliates"


def test_a_section_of_several_rows_does_not_name_one_of_them():
    tables = [(source("S1"), AFFILIATE)]

    assert best_row(analyse("What were the purchases in 2019?"), tables, None) is None


EQUIPMENT = read_table(
    [
        "(in millions) | Domestic 2019 | Domestic 2018 | International 2019",
        "Transportation | 157.7 | 157.0 | 12.1",
        "Discount rate | 4.00% | 3.75% | 2.10%",
    ]
)


def test_a_row_naming_part_of_the_item_asked_for_is_not_that_item():
    tables = [(source("S1"), EQUIPMENT)]

    match = best_row(
        analyse("What was the change in Transportation equipment in 2019 from 2018?"),
        tables,
        None,
    )

    assert match is None


def test_the_rest_of_the_item_may_be_named_by_a_column():
    tables = [(source("S1"), EQUIPMENT)]

    match = best_row(
        analyse("What is the change in domestic discount rate in 2019?"), tables, None
    )

    assert match.row.label == "Discount rate"


def test_the_owner_of_the_item_is_not_part_of_its_name():
    tables = [(source("S1"), EQUIPMENT)]

    match = best_row(
        analyse("What was the company's Transportation in 2019?"), tables, None
    )

    assert match.row.label == "Transportation"


def test_a_participle_after_the_item_asked_for_is_not_part_of_its_name():
    tables = [(source("S1"), EQUIPMENT)]

    match = best_row(
        analyse("What was the Transportation recognized in 2019?"), tables, None
    )

    assert match.row.label == "Transportation"


RELEASES = """\
OWASP Top Ten | 2003 | 2004 | 2007
Buffer Overflows | A5 | A5 | û
Cross Site Scripting (XSS) | A4 | A4 | A1
Cross Site Request Forgery (CSRF) | û | û | A5
"""


def test_a_cell_of_words_answers_a_lookup_by_its_row_and_column():
    from answers.table_answers import table_claims

    releases = source("S1", RELEASES)
    releases.filename = "OWASP_Top_Ten_-_Comparison_of_Releases.docx"
    question = analyse(
        "In the OWASP Top Ten release comparison, where did Cross Site Scripting "
        "rank in the 2007 list?"
    )

    answer = table_claims(question, [releases], None)

    assert [claim.text for claim in answer.claims] == [
        "Cross Site Scripting (XSS), 2007: A1"
    ]


def test_an_abbreviation_in_brackets_is_not_needed_to_name_the_row():
    (table,) = tables_of(source("S1", RELEASES))
    match = best_row(
        analyse("Where did Cross Site Scripting rank in 2007?"),
        [(source("S1"), table)],
        None,
    )

    assert match.row.label == "Cross Site Scripting (XSS)"
    # Words in brackets say more than the label: they are needed.
    words = read_table([" | 2019", "Net income (loss) | 5", "Net income | 7"])
    match = best_row(
        analyse("What was the net income in 2019?"), [(source("S1"), words)], None
    )
    assert match.row.label == "Net income"


def test_a_cell_of_words_is_no_operand():
    (table,) = tables_of(source("S1", RELEASES))
    row = table.rows[1]

    assert columns_asked(analyse("What is the rank in 2007?"), table, row) is None
    assert columns_asked(
        analyse("What is the rank in 2007?"), table, row, words=True
    ) == [3]
