"""Which row of which table a question names (`retrieval.answers.table_lookup`)."""

from __future__ import annotations

from retrieval.answers.question import analyse
from retrieval.answers.table_lookup import best_row
from retrieval.answers.tables import read_table
from retrieval.answers.types import Source

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


def source(name: str) -> Source:
    return Source(
        id=name,
        document_id=None,
        document_version=1,
        knowledge_base_id="kb",
        filename=f"{name}.md",
        heading_path=[],
        page=None,
        text="",
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
