"""What the extractive answerer must do: context, parallel items, calibrated
refusals, answers from tables with calculations; through the real ingestion path
and the API."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db

RUNBOOK = b"""# Incident response

## Level 1

A level 1 incident is a full outage. It must be answered within 7 minutes by the
primary on-call engineer.

## Level 2

A level 2 incident degrades the service for some customers, and the primary on-call
engineer answers it within 30 minutes during working hours.
"""

PAGING = b"""# Paging

The primary engineer is paged first. They must acknowledge the page within 5 minutes.
The secondary engineer is paged after 10 minutes.
"""

SALES = b"""# Sales by contract type

|  |  | Years Ended September 30, |  |
| --- | --- | --- | --- |
|  | 2019 | 2018 | 2017 |
| Fixed Price | $ 1,452.4 | $ 1,146.2 | $ 1,036.9 |
| Other | 44.1 | 56.7 | 70.8 |
| Total sales | $1,496.5 | $1,202.9 | $1,107.7 |

Substantially all of our contracts are fixed-price type contracts.
"""

REPORT = b"""# Financial review

## Interest

Interest income increased due to higher interest rates on our cash balances.

## Partners

Joint ventures were formed in all regions, and the dividend was raised.

## Policy

Investment policy is set by the board.
"""

EXPENSES = b"""# Operating expenses

| Years ended August 31, | 2019 | 2018 |
| --- | --- | --- |
| Service delivery costs(1) | 661,214 | 615,267 |
| Other external purchases(2) | 114,324 | 120,496 |

(1) Include cost of equipment sold and network costs.

(2) Include office building expenses and professional service fees.
"""

SEVERITIES = b"""# Severities

| Severity | Meaning | Answered within |
| --- | --- | --- |
| Severity 1 | Full outage for all users | 7 minutes |
| Severity 2 | Service degraded for many users | 30 minutes |
"""

REGIONS = b"""# Revenue by region

|  | Fiscal Year 2019 Net Sales | Fiscal Year 2019 % of Total |
| --- | --- | --- |
| Americas | 337,842 | 24.4% |
| EMEA | 315,535 | 22.8% |
"""

COUNTRIES = b"""# Revenue by country

|  | 2019 | 2018 |
| --- | --- | --- |
| United States | $614,493 | $668,580 |
| Total Americas | 1,296,660 | 1,330,638 |
| Total EMEA | 318,013 | 294,954 |
"""

TAXES = b"""# Income taxes

|  | 2019 | 2018 |
| --- | --- | --- |
| Current provision for income taxes: |  |  |
| Foreign | 1,716 | 953 |
| Total current | 1,765 | 997 |
| Provision for income taxes | $1,407 | $1,082 |
"""

OTHER_INCOME = (
    b"""# Other income

| (dollars in thousands) | 2018 | 2017 |
| --- | --- | --- |
| Total other (expense) income, net | (1,207) | 450 |
""",
    b"""# Other income and expense

| (dollars in thousands) | 2019 | 2018 |
| --- | --- | --- |
| Interest income | $ 2,515 | $ 1,310 |
| Total other income (expense), net | $ (3,781) | $ (2,727) |
""",
)

ABBREVIATIONS = b"""# Creditors

Ship management creditors' liability is comprised of cash collected from Egypt LNG
Shipping Ltd. to cover the obligations of its vessel. Andrew R. Kaiser has been
Chief Financial Officer since 2016. We sell most of our products in the U.S. The
rest is sold in Europe.
"""

LINES = """# 地铁线路

上海轨道交通16号线全长58.96公里，于2013年开通。
""".encode()


def ask(client, question, **body):
    return client.post("/api/chat", {"question": question, **body}, format="json")


def claim_texts(body: dict) -> list[str]:
    return [claim["text"] for claim in body["claims"]]


class TestContext:
    def test_a_sentence_whose_subject_is_set_by_the_one_before_quotes_both(
        self, ingest, viewer, client_for, knowledge_base
    ):
        ingest(knowledge_base, PAGING)

        body = ask(
            client_for(viewer),
            "How quickly must the primary engineer acknowledge the page?",
        ).json()

        assert not body["refused"]
        assert claim_texts(body)[0] == (
            "The primary engineer is paged first. They must acknowledge the page "
            "within 5 minutes."
        )

    def test_the_heading_names_the_item_a_sentence_is_about(
        self, ingest, viewer, client_for, knowledge_base
    ):
        ingest(knowledge_base, RUNBOOK)

        body = ask(
            client_for(viewer),
            "Within how many minutes must a level 1 incident be answered?",
        ).json()

        assert not body["refused"]
        assert any("7 minutes" in text for text in claim_texts(body))
        assert body["sources"][0]["heading_path"] == ["Incident response", "Level 1"]

    def test_a_footnote_answers_what_the_row_carrying_its_mark_includes(
        self, ingest, viewer, client_for, knowledge_base
    ):
        ingest(knowledge_base, EXPENSES)

        body = ask(client_for(viewer), "What is included in Other external purchases?")

        assert not body.json()["refused"]
        assert claim_texts(body.json()) == [
            "(2) Include office building expenses and professional service fees."
        ]

    def test_a_row_that_says_what_something_is_answers_what_it_means(
        self, ingest, viewer, client_for, knowledge_base
    ):
        ingest(knowledge_base, SEVERITIES)

        body = ask(client_for(viewer), "What does severity 2 mean?").json()

        assert not body["refused"]
        assert "Service degraded for many users" in claim_texts(body)[0]

    def test_an_abbreviation_does_not_end_the_sentence(
        self, ingest, viewer, client_for, knowledge_base
    ):
        ingest(knowledge_base, ABBREVIATIONS)
        client = client_for(viewer)

        creditors = ask(
            client, "What is ship management creditors' liability comprised of?"
        )
        assert claim_texts(creditors.json())[0] == (
            "Ship management creditors' liability is comprised of cash collected "
            "from Egypt LNG Shipping Ltd. to cover the obligations of its vessel."
        )
        officer = ask(client, "Who has been Chief Financial Officer since 2016?")
        assert claim_texts(officer.json())[0].startswith("Andrew R. Kaiser has been")
        # A sentence that does end in an abbreviation is still a sentence.
        sold = ask(client, "Where do we sell most of our products?")
        assert claim_texts(sold.json())[0] == (
            "We sell most of our products in the U.S."
        )


class TestParallelItems:
    @pytest.mark.parametrize(
        ("question", "wanted", "sibling"),
        [
            ("Within how many minutes is a level 1 incident answered?", "7", "30"),
            ("Within how many minutes is a level 2 incident answered?", "30", "7"),
        ],
    )
    def test_the_item_named_never_its_sibling(
        self, ingest, viewer, client_for, knowledge_base, question, wanted, sibling
    ):
        ingest(knowledge_base, RUNBOOK)

        body = ask(client_for(viewer), question).json()

        answer = " ".join(claim_texts(body))
        assert f"{wanted} minutes" in answer
        assert f"{sibling} minutes" not in answer

    def test_an_item_that_only_has_siblings_is_refused(
        self, ingest, viewer, client_for, knowledge_base
    ):
        ingest(knowledge_base, RUNBOOK)

        body = ask(
            client_for(viewer),
            "Within how many minutes is a level 3 incident answered?",
        ).json()

        assert body["refused"] is True
        assert body["refusal_reason"] == "insufficient_evidence"

    def test_a_clause_about_a_sibling_is_not_part_of_the_answer(
        self, ingest, viewer, client_for, knowledge_base
    ):
        ingest(
            knowledge_base,
            "# 住宿标准\n\n"
            "一线城市住宿费每晚不超过 600 元；其他城市每晚不超过 450 元。\n".encode(),
        )

        body = ask(client_for(viewer), "一线城市的住宿标准是多少？").json()

        assert claim_texts(body) == ["一线城市住宿费每晚不超过 600 元；"]

    def test_a_number_the_question_names_must_be_in_the_evidence(
        self, ingest, viewer, client_for, knowledge_base
    ):
        ingest(knowledge_base, LINES)
        client = client_for(viewer)

        assert not ask(client, "上海轨道交通16号线全长多少公里？").json()["refused"]
        refused = ask(client, "上海轨道交通17号线全长多少公里？").json()
        assert refused["refused"] is True


class TestCalibratedRefusal:
    def test_wording_that_differs_from_the_document_is_still_answered(
        self, ingest, viewer, client_for, knowledge_base
    ):
        ingest(knowledge_base, PAGING)

        body = ask(client_for(viewer), "When is the secondary engineer paged?").json()

        assert claim_texts(body) == [
            "The secondary engineer is paged after 10 minutes."
        ]

    def test_a_question_about_something_absent_is_refused(
        self, ingest, viewer, client_for, knowledge_base
    ):
        ingest(knowledge_base, PAGING)

        body = ask(
            client_for(viewer), "When is the database administrator paged?"
        ).json()

        assert body["refused"] is True

    def test_the_answer_is_said_where_the_questions_words_are(
        self, ingest, viewer, client_for, knowledge_base
    ):
        # The source holds the question's words, in different paragraphs: neither
        # says what raised the income from joint ventures.
        ingest(knowledge_base, REPORT)
        client = client_for(viewer)

        answered = ask(client, "What caused the increase in interest income?").json()
        assert claim_texts(answered) == [
            "Interest income increased due to higher interest rates on our cash "
            "balances."
        ]
        refused = ask(
            client, "What caused the increase in investment income from joint ventures?"
        )
        assert refused.json()["refused"] is True


class TestTables:
    def test_a_cell_labelled_by_its_row_and_column(
        self, ingest, viewer, client_for, knowledge_base
    ):
        ingest(knowledge_base, SALES, filename="sales.md")

        body = ask(
            client_for(viewer), "What was the amount of total sales in 2019?"
        ).json()

        assert claim_texts(body) == [
            "Total sales, Years Ended September 30, 2019: $1,496.5"
        ]
        assert body["claims"][0]["calculation"] is None
        assert body["sources"][0]["filename"] == "sales.md"

    def test_a_change_is_computed_and_carries_its_calculation(
        self, ingest, viewer, client_for, knowledge_base
    ):
        ingest(knowledge_base, SALES)

        body = ask(
            client_for(viewer), "What is the change in Other from 2018 to 2019?"
        ).json()

        (claim,) = body["claims"]
        assert claim["text"].endswith("44.1 − 56.7 = -12.6")
        assert claim["source_ids"] == ["S1"]
        calculation = claim["calculation"]
        assert calculation["operation"] == "change"
        assert calculation["result"] == "-12.6"
        assert [operand["value"] for operand in calculation["operands"]] == [
            "56.7",
            "44.1",
        ]
        assert {operand["source_id"] for operand in calculation["operands"]} == {"S1"}
        assert calculation["operands"][0]["label"] == (
            "Other, Years Ended September 30, 2018"
        )

    @pytest.mark.parametrize(
        ("question", "operation", "result"),
        [
            (
                "What is the percentage change in Other from 2018 to 2019?",
                "percentage_change",
                "-22.22",
            ),
            ("What is the average Other for 2018 and 2019?", "average", "50.40"),
            ("What is the total Other across all 3 years?", "sum", "171.6"),
            ("What is the average of Other over the years?", "average", "57.20"),
            (
                "What is the ratio of Fixed Price to Total sales in 2019?",
                "ratio",
                "0.97",
            ),
            (
                "What is the difference between Total sales and Fixed Price in 2018?",
                "difference",
                "56.7",
            ),
        ],
    )
    def test_operations(
        self, ingest, viewer, client_for, knowledge_base, question, operation, result
    ):
        ingest(knowledge_base, SALES)

        body = ask(client_for(viewer), question).json()

        (claim,) = body["claims"]
        assert claim["calculation"]["operation"] == operation
        assert claim["calculation"]["result"] == result

    @pytest.mark.parametrize(
        "question",
        [
            "What is the change in Other from 2016 to 2017?",
            "What is the average Other for 2017 to 2020?",
            "What was the amount of total sales in 2020?",
        ],
    )
    def test_a_year_the_table_does_not_have_is_not_answered_from_it(
        self, ingest, viewer, client_for, knowledge_base, question
    ):
        ingest(knowledge_base, SALES)

        body = ask(client_for(viewer), question).json()

        assert all(claim["calculation"] is None for claim in body["claims"])
        assert not any("$1,496.5" in text for text in claim_texts(body))

    def test_which_year_compares_the_row(
        self, ingest, viewer, client_for, knowledge_base
    ):
        ingest(knowledge_base, SALES)

        body = ask(client_for(viewer), "In which year was Other the highest?").json()

        assert claim_texts(body)[0].startswith(
            "Other is highest in Years Ended September 30, 2017 (70.8"
        )

    def test_years_beyond_an_amount_and_how_many(
        self, ingest, viewer, client_for, knowledge_base
    ):
        ingest(knowledge_base, SALES)
        client = client_for(viewer)

        which = ask(client, "In which year was Other less than 50?").json()
        assert claim_texts(which) == [
            "Other is below the amount asked in Years Ended September 30, 2019: 44.1"
        ]
        count = ask(client, "How many years did Fixed Price exceed $1,100?").json()
        (claim,) = count["claims"]
        assert claim["text"].endswith("; years: 2")
        assert claim["calculation"]["operation"] == "count"
        assert claim["calculation"]["result"] == "2"

    def test_the_row_named_in_full_over_one_named_in_part(
        self, ingest, viewer, client_for, knowledge_base
    ):
        ingest(knowledge_base, REGIONS, filename="regions.md")
        ingest(knowledge_base, COUNTRIES, filename="countries.md")

        body = ask(
            client_for(viewer), "What was the Total Americas amount in 2019?"
        ).json()

        assert claim_texts(body) == ["Total Americas, 2019: 1,296,660"]

    def test_the_row_written_word_for_word_over_one_with_the_same_words(
        self, ingest, viewer, client_for, knowledge_base
    ):
        for number, content in enumerate(OTHER_INCOME):
            ingest(knowledge_base, content, filename=f"other-{number}.md")

        body = ask(
            client_for(viewer),
            "What was the Total other income (expense), net in 2018 in thousands?",
        ).json()

        assert claim_texts(body) == [
            "Total other income (expense), net, 2018: $ (2,727)"
        ]

    def test_the_total_of_one_year_is_the_cell_of_its_row(
        self, ingest, viewer, client_for, knowledge_base
    ):
        ingest(knowledge_base, TAXES)

        body = ask(
            client_for(viewer), "What is the total provision for income taxes in 2019?"
        ).json()

        assert claim_texts(body) == ["Provision for income taxes, 2019: $1,407"]
        assert body["claims"][0]["calculation"] is None


class TestLength:
    def test_at_most_three_claims_whatever_the_parts(
        self, ingest, viewer, client_for, knowledge_base
    ):
        ingest(
            knowledge_base,
            "# 假期\n\n年假每年 10 天。病假每年 12 天。产假 158 天。\n".encode(),
        )

        body = ask(client_for(viewer), "年假、病假和产假分别有几天？").json()

        assert 1 <= len(body["claims"]) <= 3
