"""The default provider's choices (`answers.extractive`): a table's
cells or a sentence, and which sentence."""

from __future__ import annotations

from answers import extractive
from answers.evidence import evidence_units
from answers.extractive import ExtractiveChat
from answers.types import RefusalReason
from tests.answers.test_table_lookup import source

# As the Markdown parser writes a table with the paragraphs around it.
ALLOWANCE = """\
The components of deferred tax assets are as follows:

 | December 31 2019 | December 31 2018

Net operating loss carryforwards | 73,260 | 57,768

Valuation allowance | (19,911) | (18,102)

As of December 31, 2019, the Company has a valuation allowance of $191.7 million \
against its U.S. deferred tax assets and a valuation allowance of $52.9 million \
against certain of its foreign deferred tax assets.
"""
FOREIGN = (
    "What is the Company's valuation allowance against certain of its foreign "
    "deferred tax assets as of December 31, 2019?"
)


def answer(question: str) -> list[str]:
    claims, _ = ExtractiveChat(min_score=0.3).draft(question, [source("S1", ALLOWANCE)])
    return [claim.text for claim in claims]


def test_a_sentence_naming_more_of_the_question_says_it_better_than_a_cell():
    (said,) = answer(FOREIGN)

    assert "$52.9 million against certain of its foreign" in said


def test_without_the_margin_the_cell_would_answer(monkeypatch):
    monkeypatch.setattr(extractive, "SENTENCE_MARGIN", 1.0)

    assert answer(FOREIGN) == ["Valuation allowance, December 31 2019: (19,911)"]


def test_a_cell_named_as_well_as_any_sentence_names_it_answers():
    assert answer("What was the valuation allowance in 2019?") == [
        "Valuation allowance, December 31 2019: (19,911)"
    ]


def test_a_sentence_leading_into_the_table_says_nothing_by_itself():
    text = ALLOWANCE.replace(
        "The components of deferred tax assets are as follows:",
        "The valuation allowance against our foreign deferred tax assets was:",
    ).split("As of")[0]
    claims, _ = ExtractiveChat(min_score=0.3).draft(
        "What was the valuation allowance against foreign deferred tax assets in 2019?",
        [source("S1", text)],
    )

    assert [claim.text for claim in claims] == [
        "Valuation allowance, December 31 2019: (19,911)"
    ]


VALUATION = """\
The valuation allowance increased by $1.7 million in fiscal 2019. The increase \
in the valuation allowance in fiscal 2019 was mainly attributable to changes in \
deferred tax assets, primarily foreign net operating losses.
"""


def test_why_is_answered_by_the_sentence_that_gives_a_reason():
    claims, _ = ExtractiveChat(min_score=0.3).draft(
        "Why did the valuation allowance increase in fiscal 2019?",
        [source("S1", VALUATION)],
    )

    assert "mainly attributable to changes" in claims[0].text


def test_an_amount_asked_for_is_answered_by_the_sentence_that_states_one():
    claims, _ = ExtractiveChat(min_score=0.3).draft(
        "What was the increase in the valuation allowance in fiscal 2019?",
        [source("S1", VALUATION)],
    )

    assert claims[0].text.startswith("The valuation allowance increased by $1.7")


OEM = """\
 | 2019 | 2018
Original Equipment Manufacturers (“OEM”) | 6,720 | 6,325
Distribution | 4,210 | 3,987

Net revenues by channel are shown above. Original Equipment Manufacturers \
(“OEM”) are the end-customers to which the Company provides direct marketing \
application engineering support.
"""


def test_what_a_thing_is_is_answered_by_the_sentence_that_says_it():
    claims, _ = ExtractiveChat(min_score=0.3).draft(
        "What are Original Equipment Manufacturers?", [source("S1", OEM)]
    )

    assert claims[0].text.startswith("Original Equipment Manufacturers (“OEM”) are")


CUSTOMERS = """\
Revenue from significant customers is summarized as follows:

 | Fiscal Year 2019 | Fiscal Year 2018

Apple Inc. (“Apple”) | 32% | 36%

Huawei Technologies Co., Ltd. (“Huawei”) | 13% | 8%
"""


def test_a_percentage_asked_for_that_a_cell_gives_is_that_cell():
    claims, _ = ExtractiveChat(min_score=0.3).draft(
        "What is the percentage of revenue from Huawei in 2018?",
        [source("S1", CUSTOMERS)],
    )

    assert [(claim.text, claim.calculation) for claim in claims] == [
        ("Huawei Technologies Co., Ltd. (“Huawei”), Fiscal Year 2018: 8%", None)
    ]


def test_the_total_or_average_of_the_rows_a_question_lists_is_computed():
    (average,) = ExtractiveChat(min_score=0.3).draft(
        "What is the average percentage of revenue from Apple and Huawei in 2018?",
        [source("S1", CUSTOMERS)],
    )[0]
    (total,) = ExtractiveChat(min_score=0.3).draft(
        "What is the total percentage of revenue from Apple and Huawei in 2019?",
        [source("S1", CUSTOMERS)],
    )[0]

    assert [str(o.value) for o in average.calculation.operands] == ["36", "8"]
    assert average.calculation.result == 22
    assert [str(o.value) for o in total.calculation.operands] == ["32", "13"]
    assert total.calculation.result == 45


DEBT = """\
The table below shows the carrying amounts and estimated fair values of our \
debt, excluding lease liabilities:

 | 2019 | 2018

Senior notes | 1,000 | 900
"""


def test_a_sentence_leading_into_a_table_does_not_answer_a_question_about_it():
    claims, reason = ExtractiveChat(min_score=0.3).draft(
        "What did the lease liabilities exclude?", [source("S1", DEBT)]
    )

    assert (claims, reason) == ([], RefusalReason.INSUFFICIENT_EVIDENCE)


def test_it_says_what_the_table_shows():
    claims, _ = ExtractiveChat(min_score=0.3).draft(
        "What does the table show about the debt?", [source("S1", DEBT)]
    )

    assert claims[0].text.startswith("The table below shows the carrying amounts")


def test_a_chinese_sentence_ending_in_a_colon_may_state_the_answer():
    text = (
        "国家气象局的地方分局分为六个区域总部管辖，地方分局主要分三类型：\n\n"
        "天气预报办公室负责发布预报。"
    )

    claims, _ = ExtractiveChat(min_score=0.3).draft(
        "国家气象局的地方分局有几个区域总部？", [source("S1", text)]
    )

    assert claims[0].text.startswith("国家气象局的地方分局分为六个区域总部")


GLOSSARY = """\
The most common interpretations are listed here.

Black-box monitoring

Testing externally visible behavior as a user would see it.

Root cause

A defect in a software or human system that, if repaired, instills confidence \
that this event won't happen again. A given incident might have multiple root \
causes. Each of these factors might stand alone as a root cause.
"""


def test_a_term_alone_on_its_line_labels_the_paragraph_after_it():
    units = list(evidence_units(source("S1", GLOSSARY)))

    assert [unit.label for unit in units if unit.quote.startswith("Testing")] == [
        "Black-box monitoring"
    ]
    assert not [unit for unit in units if unit.quote == "Root cause"]


def test_a_glossary_entry_answers_what_its_term_is():
    claims, _ = ExtractiveChat(min_score=0.3).draft(
        "What is a root cause?", [source("S1", GLOSSARY)]
    )

    assert claims[0].text.startswith("A defect in a software or human system")


USING_THE_TERM = (
    "The simplest way to think about white-box monitoring versus black-box "
    "monitoring is that black-box monitoring is symptom-oriented. We combine heavy "
    "use of white-box monitoring with modest uses of black-box monitoring. "
    "Therefore, black-box monitoring is sometimes cause-oriented."
)


def test_the_glossary_entry_of_the_term_asked_outranks_sentences_using_the_term():
    claims, _ = ExtractiveChat(min_score=0.3).draft(
        "What is black-box monitoring?",
        [
            source("S1", USING_THE_TERM),
            source("S2", "Black-box monitoring tools page the on-call engineer."),
            source("S3", "Other entries.\n\n" + GLOSSARY),
        ],
    )

    assert claims[0].text.startswith("Testing externally visible behavior")
    assert claims[0].source_ids == ["S3"]


def test_an_entry_of_a_longer_term_is_not_the_entry_of_the_term_asked():
    longer = "Credit risk management\n\nThe Group trades only with known parties."

    claims, _ = ExtractiveChat(min_score=0.3).draft(
        "What is credit risk?",
        [
            source("S1", "The Group manages its credit risk centrally."),
            source("S2", "Credit risk is the risk of financial loss to the Group."),
            source("S3", "Other notes.\n\n" + longer),
        ],
    )

    assert claims[0].text.startswith("Credit risk is the risk of financial loss")


def test_a_definition_may_open_with_a_list_marker_or_a_setting():
    for defining in (
        "(a) Black-box monitoring is testing externally visible behavior.",
        "In practice, black-box monitoring is testing externally visible behavior.",
    ):
        claims, _ = ExtractiveChat(min_score=0.3).draft(
            "What is black-box monitoring?",
            [source("S1", USING_THE_TERM), source("S2", defining)],
        )

        assert claims[0].text == defining


def test_a_sentence_about_something_else_does_not_say_what_the_term_is():
    defining = (
        "Black-box monitoring is testing externally visible behavior as a user "
        "would see it."
    )

    claims, _ = ExtractiveChat(min_score=0.3).draft(
        "What is black-box monitoring?",
        [source("S1", USING_THE_TERM), source("S2", defining)],
    )

    assert claims[0].text == defining


def test_the_sentence_that_says_what_the_thing_asked_for_is_answers_it():
    text = (
        "Dashboards normally include some form of the four golden signals of "
        "monitoring. The four golden signals of monitoring are latency, traffic, "
        "errors, and saturation."
    )

    claims, _ = ExtractiveChat(min_score=0.3).draft(
        "What are the four golden signals of monitoring?", [source("S1", text)]
    )

    assert claims[0].text.startswith("The four golden signals of monitoring are")


def test_a_consequence_is_quoted_with_the_sentence_that_gives_its_reason():
    text = (
        "On the other hand, a slow error is even worse than a fast error! "
        "Therefore, it’s important to track error latency."
    )

    claims, _ = ExtractiveChat(min_score=0.3).draft(
        "Why should you track error latency?", [source("S1", text)]
    )

    assert claims[0].text == (
        "On the other hand, a slow error is even worse than a fast error! "
        "Therefore, it’s important to track error latency."
    )


COVER_PAGE = """\
Galaxy Gaming, Inc.

6480 Cameron Street Ste. 305 – Las Vegas, NV 89118

(Address of principal executive offices)

(702) 939-3254

(Registrant’s telephone number)
"""


def test_a_caption_in_parentheses_says_what_the_line_above_it_holds():
    claims, _ = ExtractiveChat(min_score=0.3).draft(
        "Where are the principal executive offices?", [source("S1", COVER_PAGE)]
    )

    assert [claim.text for claim in claims] == [
        "6480 Cameron Street Ste. 305 – Las Vegas, NV 89118"
    ]


def test_a_chinese_glossary_entry_answers_what_its_term_is():
    text = (
        "下列术语和定义适用于本标准。\n\n"
        "差异项 difference\n\n"
        "电厂现状与安全基准、现行安全标准或实践之间存在的不一致，包含强项和弱项。\n\n"
        "总体评价 global assessment\n\n"
        "对所有未解决的弱项、纠正行动和安全改进进行平衡考虑之后对核电厂安全作出的综合评价。"
        "总体评价报告应提交国家核安全局。"
    )

    claims, _ = ExtractiveChat(min_score=0.3).draft(
        "什么是总体评价？", [source("S1", text)]
    )

    assert claims[0].text.startswith("对所有未解决的弱项")


def test_what_is_x_in_chinese_prefers_the_entry_that_defines_x():
    text = (
        "总体评价应在所有安全要素评价完成后进行。\n\n"
        "总体评价 global assessment\n\n"
        "对所有未解决的弱项进行平衡考虑之后对核电厂安全作出的综合评价。"
    )

    claims, _ = ExtractiveChat(min_score=0.3).draft(
        "什么是总体评价？", [source("S1", text)]
    )

    assert claims[0].text.startswith("对所有未解决的弱项")


def test_how_long_is_not_answered_by_a_sentence_that_says_no_quantity():
    text = (
        "Achieving a successful on-call rotation includes alerting on symptoms. "
        "The rotation is reviewed by the team."
    )

    claims, _ = ExtractiveChat(min_score=0.3).draft(
        "How long is the on-call rotation?", [source("S1", text)]
    )

    assert claims == []


def test_how_many_keeps_the_claims_that_say_a_quantity():
    text = (
        "现存的波斯黇鹿可能面对近亲繁殖。自1996年起，超过650头波斯黇鹿已生活在加利利。"
    )

    claims, _ = ExtractiveChat(min_score=0.3).draft(
        "波斯黇鹿现存多少头？", [source("S1", text)]
    )

    assert [claim.text for claim in claims] == [
        "自1996年起，超过650头波斯黇鹿已生活在加利利。"
    ]


FEATURES = """\
Mammoth converts documents to HTML.

The following features are currently supported by Mammoth:

Headings.

Lists.

Tables.

Mammoth works best if you only use styles to semantically mark up your document, \
since the structures of .docx and HTML differ.
"""


def test_a_sentence_leading_into_a_list_answers_with_its_items():
    claims, _ = ExtractiveChat(min_score=0.3).draft(
        "Which features are supported by Mammoth?", [source("S1", FEATURES)]
    )

    assert claims[0].text == (
        "The following features are currently supported by Mammoth: "
        "Headings; Lists; Tables"
    )


def test_how_many_is_answered_without_the_items():
    text = "The plant has three safety elements:\n\nDesign.\n\nAgeing.\n\nProcedures.\n"

    claims, _ = ExtractiveChat(min_score=0.3).draft(
        "How many safety elements does the plant have?", [source("S1", text)]
    )

    assert [claim.text for claim in claims] == ["The plant has three safety elements:"]


def test_an_amount_asked_for_is_not_answered_by_a_sentence_without_one():
    text = "Other operating expenses includes acquisition and integration costs."

    claims, _ = ExtractiveChat(min_score=0.3).draft(
        "What was the amount of acquisition and integration costs?",
        [source("S1", text)],
    )

    assert claims == []


def test_the_years_a_question_names_are_no_quantity():
    text = (
        "Revenue in 2019 reflected the new pricing of our cloud products. "
        "The revenue of 2019 grew in every region."
    )

    claims, _ = ExtractiveChat(min_score=0.3).draft(
        "How much revenue was there in 2019?", [source("S1", text)]
    )

    assert claims == []


def test_what_an_increase_was_driven_by_is_answered_in_words():
    text = (
        "The increase in free cash flow was driven by lower capital expenditure "
        "and higher operating cash flow."
    )

    claims, _ = ExtractiveChat(min_score=0.3).draft(
        "What was the increase in free cash flow driven by?", [source("S1", text)]
    )

    assert [claim.text for claim in claims] == [text]


INTRODUCED = """\
The following table shows our net income, gross profit and the average selling \
price for each of our three most recent fiscal years.

 | 2019 | 2018

Net income | 1,200 | 900
"""


def test_a_sentence_introducing_a_table_answers_only_about_the_table():
    asked_about_a_price = ExtractiveChat(min_score=0.3).draft(
        "What was the average selling price of our products?",
        [source("S1", INTRODUCED)],
    )[0]
    asked_about_the_table = ExtractiveChat(min_score=0.3).draft(
        "What does the table show for the three fiscal years?",
        [source("S1", INTRODUCED)],
    )[0]

    assert asked_about_a_price == []
    assert asked_about_the_table[0].text.startswith("The following table shows")


def test_a_label_before_a_line_of_punctuation_is_no_label():
    text = "Root cause\n\n？\n\nA defect in a software or human system."

    claims, _ = ExtractiveChat(min_score=0.3).draft(
        "What is a root cause?", [source("S1", text)]
    )

    assert claims  # read, not raised on


def test_a_chinese_clause_is_quoted_as_its_paragraph_writes_it():
    text = "住宿标准：一线城市每晚不超过600元；2020年起其他城市每晚不超过450元。"

    claims, _ = ExtractiveChat(min_score=0.3).draft(
        "其他城市住宿标准每晚多少元？", [source("S1", text)]
    )

    assert all(claim.quote in text for claim in claims)


def test_a_sentence_in_parentheses_is_evidence_not_a_caption():
    text = (
        "Revenue rose in 2023.\n\n"
        "(The Company had 1,200 employees as of December 31, 2023.)"
    )

    claims, _ = ExtractiveChat(min_score=0.3).draft(
        "How many employees did the Company have?", [source("S1", text)]
    )

    assert "1,200 employees" in claims[0].text


def test_a_short_line_that_says_a_number_is_evidence_not_a_label():
    text = (
        "The company serves 12 regions\n\n"
        "Its offices are staffed by local teams who speak the language."
    )

    claims, _ = ExtractiveChat(min_score=0.3).draft(
        "How many regions does the company serve?", [source("S1", text)]
    )

    assert claims[0].text == "The company serves 12 regions"


def test_jihu_almost_is_no_question_of_how_many():
    claims, _ = ExtractiveChat(min_score=0.3).draft(
        "公司几乎所有收入来自哪个地区？",
        [source("S1", "公司几乎所有收入来自华东地区。")],
    )

    assert [claim.text for claim in claims] == ["公司几乎所有收入来自华东地区。"]
