"""`answers/questions.py`: comparison and multi-part questions split
into parts searched one by one."""

from __future__ import annotations

import pytest

from answers.questions import split_question


@pytest.mark.parametrize(
    ("question", "parts"),
    [
        (
            "一线城市和其他城市的住宿标准分别是多少",
            ["一线城市的住宿标准是多少", "其他城市的住宿标准是多少"],
        ),
        ("年假和产假分别有几天？", ["年假有几天？", "产假有几天？"]),
        ("公司的年假和病假分别是几天", ["公司的年假是几天", "公司的病假是几天"]),
        (
            "一线城市的员工和其他城市的员工的住宿标准分别是多少",
            [
                "一线城市的员工的住宿标准是多少",
                "其他城市的员工的住宿标准是多少",
            ],
        ),
        (
            "一线城市、二线城市和其他城市的上限分别是多少",
            [
                "一线城市的上限是多少",
                "二线城市的上限是多少",
                "其他城市的上限是多少",
            ],
        ),
        (
            "一线城市与其他城市的住宿标准有什么区别？",
            ["一线城市的住宿标准", "其他城市的住宿标准"],
        ),
        (
            "What is the difference between annual leave and sick leave?",
            ["annual leave", "sick leave"],
        ),
        ("compare annual leave with sick leave", ["annual leave", "sick leave"]),
        ("annual leave vs sick leave", ["annual leave", "sick leave"]),
        (
            "How many days of annual leave and sick leave do we get respectively?",
            [
                "How many days of annual leave do we get?",
                "How many days of sick leave do we get?",
            ],
        ),
        (
            "What are the respective percentage of revenue from Apple and "
            "Huawei in 2017?",
            [
                "What are the respective percentage of revenue from Apple in 2017?",
                "What are the respective percentage of revenue from Huawei in 2017?",
            ],
        ),
        (
            "What are the respective sales and purchases for 2017?",
            [
                "What are the respective sales for 2017?",
                "What are the respective purchases for 2017?",
            ],
        ),
        (
            "What are the respective revenues of Product 1 and Product 2 in 2019?",
            [
                "What are the respective revenues of Product 1 in 2019?",
                "What are the respective revenues of Product 2 in 2019?",
            ],
        ),
        # Periods and ranges are columns of one row, not subjects.
        (
            "What are the respective gross profit from cloud in 2019 and 2018?",
            ["What are the respective gross profit from cloud in 2019 and 2018?"],
        ),
        (
            "What are the respective values of commitments that are less than "
            "one year and between 2-5 years?",
            [
                "What are the respective values of commitments that are less "
                "than one year and between 2-5 years?"
            ],
        ),
        ("一线城市的住宿标准是多少？", ["一线城市的住宿标准是多少？"]),
    ],
)
def test_split_question(question, parts):
    assert split_question(question) == parts
