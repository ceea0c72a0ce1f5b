"""Question analysis: terms, focus, the items a question names (no database)."""

from __future__ import annotations

import pytest

from answers.question import Designator, analyse, stem


def terms(question: str) -> list[str]:
    return [term.text for term in analyse(question).terms]


def focus(question: str) -> list[str]:
    return [term.text for term in analyse(question).terms if term.focus]


class TestTerms:
    def test_names_cut_into_characters_are_joined_back(self):
        assert "黑尾前肛鳗" in terms("黑尾前肛鳗以什么为食？")

    def test_question_words_and_glue_are_not_terms(self):
        found = terms("《战国无双3》是由哪两个公司合作开发的？")
        assert "战国无双3" in found
        assert not {"哪", "两个", "是", "由", "的"} & set(found)
        assert not {"哪一年", "多少岁", "哪部"} & set(terms("他哪一年哪部作品多少岁？"))

    def test_a_dotted_name_is_matched_by_its_dots(self):
        assert "罗·内" in terms("莱昂德罗·内托曾效力过哪些球队？")
        assert "尔·路德维希·冯·贝" in terms("卡尔·路德维希·冯·贝塔郎非是谁？")

    def test_the_unit_of_a_number_is_not_a_word(self):
        assert "年杨群" not in terms("1969年杨群凭借哪一部作品获奖？")

    def test_english_words_are_folded(self):
        assert stem("carried") == stem("carry")
        assert stem("updated") == stem("update")
        assert stem("days") == "day"
        assert stem("status") == "status"
        assert "sev2" in terms("How quickly must the status page be updated for SEV2?")

    def test_how_the_question_is_put_is_not_what_it_is_about(self):
        assert terms("According to the information, who is Cloudmark?") == ["cloudmark"]
        assert terms("Based on the table given, what was revenue in 2019?") == [
            "revenu"
        ]

    def test_another_name_asks_for_an_alias(self):
        question = analyse("What is another name for the defined benefit plan?")

        assert question.answer_kind == "alias"
        assert [t.text for t in question.content_terms] == ["defin", "benefit", "plan"]


class TestFocus:
    @pytest.mark.parametrize(
        ("question", "expected"),
        [
            ("亚历山大·罗迪奇是哪个国家的足球运动员？", ["国家"]),
            ("Which year had the highest revenue?", ["year"]),
            ("How quickly must a page be acknowledged?", ["quickli"]),
            ("色林错在什么地方？", ["地方"]),
        ],
    )
    def test_the_words_that_name_the_answers_kind(self, question, expected):
        assert focus(question) == expected


class TestDesignators:
    @pytest.mark.parametrize(
        ("question", "items"),
        [
            ("How fast is a level 1 incident answered?", [Designator("level", "1")]),
            ("What does SEV2 require?", [Designator("sev", "2")]),
            ("Who approves a Tier B change?", [Designator("tier", "b")]),
            ("二级事件多少分钟内响应？", [Designator("级", "2")]),
            ("第三类费用如何报销？", [Designator("类", "3")]),
            ("What was revenue in 2019?", [Designator("year", "2019")]),
            ("Every employee receives 25 days.", []),
        ],
    )
    def test_the_items_a_question_names(self, question, items):
        assert list(analyse(question).designators) == items

    def test_an_item_number_is_the_same_in_any_numerals(self):
        assert analyse("二级").designators == analyse("2级").designators
        assert analyse("phase ii").designators == analyse("phase 2").designators


class TestKinds:
    @pytest.mark.parametrize(
        ("question", "kind", "number"),
        [
            ("金华市是什么时候设立的？", "time", True),
            ("色林错在哪里？", "place", False),
            ("蟒鳗又被称为什么？", "alias", False),
            ("How many days of leave do I get?", None, True),
            ("What is the core working time?", None, False),
            ("大沙地站共有几层？", None, True),
            # "多大" inside a name, "几" inside "哪几种": no number asked.
            ("史东从科罗拉多大学获得了什么学位？", None, False),
            ("美国特勤局的雇员有哪几种？", None, False),
        ],
    )
    def test_the_kind_of_answer_asked_for(self, question, kind, number):
        analysed = analyse(question)
        assert analysed.answer_kind == kind
        assert analysed.asks_number is number


@pytest.mark.parametrize(
    ("question", "explanation"),
    [
        ("What is included in Other external purchases?", True),
        ("Why did revenue increase in 2019?", True),
        ("What was the increase in 2019 primarily due to?", True),
        ("How is the TCE rate derived?", True),
        ("What was the change in amounts due to related parties?", False),
        ("What were the amounts due to related parties in 2019?", False),
        ("What was the total revenue in 2019?", False),
    ],
)
def test_questions_that_ask_for_an_explanation(question, explanation):
    assert analyse(question).asks_explanation is explanation


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("Why did the valuation allowance increase in fiscal 2019?", "reason"),
        ("What led to the increase in net sales?", "reason"),
        ("为什么年假不能结转？", "reason"),
        ("What was the valuation allowance in 2019?", None),
    ],
)
def test_why_asks_for_a_reason(question, kind):
    assert analyse(question).answer_kind == kind


@pytest.mark.parametrize(
    "question",
    [
        "What was the increase in interest income?",
        "What is the amount of deferred revenue?",
        "How much was the decline in revenue?",
    ],
)
def test_questions_that_ask_for_an_amount(question):
    assert analyse(question).asks_number


@pytest.mark.parametrize(
    ("question", "subject"),
    [
        ("What is Trade receivables?", "trade receivables"),
        (
            "What are Original Equipment Manufacturers?",
            "original equipment manufacturers",
        ),
        ("What is the revenue in 2019?", ""),
        ("What is excluded from the operating interest expense?", ""),
        ("What is included in other costs?", ""),
    ],
)
def test_a_name_alone_asks_what_the_thing_is(question, subject):
    assert analyse(question).defines == subject
