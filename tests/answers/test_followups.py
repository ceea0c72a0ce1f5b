"""`resolve_follow_up`: follow-ups made to stand alone (pure, no database)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from answers.followups import resolve_follow_up

LEVEL_1 = "How fast must a level 1 incident be answered?"
LEAVE = "How many days of annual leave does an employee get?"
HOTELS = "一线城市的住宿标准是多少？"
INCIDENT_ZH = "一级事件要多快响应？"


def resolved(question: str, *previous: str) -> str:
    return resolve_follow_up(question, list(previous))


class TestSiblingItems:
    @pytest.mark.parametrize(
        ("question", "previous", "expected"),
        [
            (
                "and for level 2?",
                LEVEL_1,
                "How fast must a level 2 incident be answered?",
            ),
            (
                "What about level 2?",
                LEVEL_1,
                "How fast must a level 2 incident be answered?",
            ),
            (
                "how about Level 3?",
                LEVEL_1,
                "How fast must a level 3 incident be answered?",
            ),
            ("Level 2?", LEVEL_1, "How fast must a level 2 incident be answered?"),
            ("And level-2?", LEVEL_1, "How fast must a level 2 incident be answered?"),
            (
                "SEV2?",
                "What is the escalation path for SEV1 incidents?",
                "What is the escalation path for SEV2 incidents?",
            ),
            (
                "and for sev-3?",
                "Who is paged for a SEV-1?",
                "Who is paged for a SEV-3?",
            ),
            (
                "how about tier B?",
                "What is the nightly limit for tier A hotels?",
                "What is the nightly limit for tier B hotels?",
            ),
            (
                "What about Q3?",
                "What was the revenue in Q2 2019?",
                "What was the revenue in Q3 2019?",
            ),
            (
                "And 2020?",
                "What was the revenue in Q2 2019?",
                "What was the revenue in Q2 2020?",
            ),
            (
                "What about version 2.1?",
                "What changed in version 2.0?",
                "What changed in version 2.1?",
            ),
            (
                "What about level 2 and level 3?",
                LEVEL_1,
                "How fast must a level 2 and level 3 incident be answered?",
            ),
        ],
    )
    def test_english(self, question, previous, expected):
        assert resolved(question, previous) == expected

    @pytest.mark.parametrize(
        ("question", "previous", "expected"),
        [
            ("那二级呢", INCIDENT_ZH, "二级事件要多快响应？"),
            ("二级呢？", INCIDENT_ZH, "二级事件要多快响应？"),
            ("那么三级呢？", "二级事件要多快响应？", "三级事件要多快响应？"),
            ("第二级呢？", "第一级事件要多快响应？", "第二级事件要多快响应？"),
            ("那第二级呢？", INCIDENT_ZH, "二级事件要多快响应？"),
            ("2级呢？", INCIDENT_ZH, "2级事件要多快响应？"),
            ("二级？", INCIDENT_ZH, "二级事件要多快响应？"),
            ("二线城市呢？", HOTELS, "二线城市的住宿标准是多少？"),
            ("2020年呢？", "2019年的营收是多少？", "2020年的营收是多少？"),
            ("第五条呢？", "第三条规定了什么？", "第五条规定了什么？"),
            ("五年呢？", "工作满三年有几天年假？", "工作满五年有几天年假？"),
            # Items cross languages: the label decides.
            ("level 2呢？", LEVEL_1, "How fast must a level 2 incident be answered?"),
        ],
    )
    def test_chinese(self, question, previous, expected):
        assert resolved(question, previous) == expected

    def test_the_newest_question_naming_the_item_is_used(self):
        earlier = [LEVEL_1, "How fast must a level 2 incident be answered?"]
        assert resolved("and level 3?", *earlier) == (
            "How fast must a level 3 incident be answered?"
        )
        # The newest question names no level: the one before does.
        earlier = [LEVEL_1, "What is the hotel limit for tier A cities?"]
        assert resolved("and for level 2?", *earlier) == (
            "How fast must a level 2 incident be answered?"
        )

    def test_an_item_named_twice_is_replaced_twice(self):
        assert resolved(
            "and for level 2?", "Is a level 1 incident paged like other level 1 ones?"
        ) == ("Is a level 2 incident paged like other level 2 ones?")

    def test_two_different_values_are_ambiguous(self):
        # Which of the two levels would "level 3" replace? Neither: combined.
        assert resolved(
            "and for level 3?", "Are level 1 and level 2 incidents paged?"
        ) == ("and for level 3 incidents paged?")


class TestAmountsGradesAndNames:
    """One side of an amount, a grade written alone, a name after the same
    preposition: what people swap in a follow-up."""

    DRONES = "Our drones weigh over 150 kg. Which manuals go into the application?"

    @pytest.mark.parametrize(
        ("question", "previous", "expected"),
        [
            (
                "What if they're under 150 kg?",
                DRONES,
                "Our drones weigh under 150 kg. Which manuals go into the application?",
            ),
            (
                "And at least 25 kg?",
                "Which forms apply to parcels of more than 25 kg?",
                "Which forms apply to parcels of at least 25 kg?",
            ),
            (
                "And for AAA?",
                "What minimum contrast ratio was chosen for WCAG level AA text?",
                "What minimum contrast ratio was chosen for WCAG level AAA text?",
            ),
            (
                "And in Yorkshire?",
                "On Direct Debit, what is the unit rate in London?",
                "On Direct Debit, what is the unit rate in Yorkshire?",
            ),
        ],
    )
    def test_swapped(self, question, previous, expected):
        assert resolved(question, previous) == expected

    def test_a_name_after_a_preposition_named_twice_is_not_guessed(self):
        earlier = "What is the rate in London and in Leeds?"
        assert "Yorkshire" in resolved("And in Yorkshire?", earlier)
        assert "London" in resolved("And in Yorkshire?", earlier)

    def test_another_amount_is_no_sibling(self):
        # 150 kg is not 25 kg: nothing to swap, the question takes the topic.
        assert "over 150 kg" in resolved("What if they're under 25 kg?", self.DRONES)


class TestCorrespondingPhrase:
    @pytest.mark.parametrize(
        ("question", "previous", "expected"),
        [
            (
                "what about sick leave?",
                LEAVE,
                "How many days of sick leave does an employee get?",
            ),
            ("Sick leave?", LEAVE, "How many days of sick leave does an employee get?"),
            (
                "What about annual bonus?",
                "How is the annual leave calculated?",
                "How is the annual bonus calculated?",
            ),
            (
                "And for the night shift?",
                "Who is on call for the day shift?",
                "Who is on call for the night shift?",
            ),
            ("Level two?", LEVEL_1, "How fast must a level two incident be answered?"),
            ("其他城市呢？", HOTELS, "其他城市的住宿标准是多少？"),
            ("和二线城市比呢？", HOTELS, "二线城市的住宿标准是多少？"),
            ("产假呢？", "年假有多少天？", "产假有多少天？"),
            ("住宿补助呢", HOTELS, "一线城市的住宿补助是多少？"),
            ("加班时间呢？", "核心工作时间是几点？", "核心加班时间是几点？"),
        ],
    )
    def test_replaced(self, question, previous, expected):
        assert resolved(question, previous) == expected


class TestCombined:
    """No counterpart found: the previous question's missing content words join."""

    @pytest.mark.parametrize(
        ("question", "previous", "expected"),
        [
            ("周末呢？", "核心工作时间是几点？", "周末核心工作时间呢？"),
            (
                "what about the weekend?",
                "What are the core working hours?",
                "what about the weekend core working hours?",
            ),
            (
                "And in Beijing?",
                "What is the hotel limit for tier A cities?",
                "And in Beijing hotel limit tier A cities?",
            ),
            ("Why?", LEVEL_1, "Why level 1 incident answered?"),
            ("为什么？", INCIDENT_ZH, "为什么一级事件快响应？"),
            # A short question about no topic of its own asks about the last one.
            (
                "Who approves?",
                "How do I claim travel expenses?",
                "Who approves travel expenses?",
            ),
            ("由谁处理？", INCIDENT_ZH, "一级事件快响应由谁处理？"),
            ("几点下班？", "核心工作时间是几点？", "核心工作时间几点下班？"),
            # A phrase with a counterpart ("一线城市" for "其他城市") is not added.
            ("其他城市的餐饮补助呢", HOTELS, "其他城市的餐饮补助住宿标准呢"),
        ],
    )
    def test_combined(self, question, previous, expected):
        assert resolved(question, previous) == expected


class TestPronouns:
    @pytest.mark.parametrize(
        ("question", "previous", "expected"),
        [
            (
                "What is its response time?",
                LEVEL_1,
                "What is the response time of a level 1 incident?",
            ),
            ("Who answers it?", LEVEL_1, "Who answers a level 1 incident?"),
            ("Who handles this incident?", LEVEL_1, "Who handles a level 1 incident?"),
            (
                "what about its cost?",
                LEVEL_1,
                "what about the cost of a level 1 incident?",
            ),
            (
                "What is its escalation path?",
                "What is the response time of the on-call service?",
                "What is the escalation path of the on-call service?",
            ),
            (
                "How are they reimbursed?",
                "Who approves travel expenses?",
                "How are travel expenses reimbursed?",
            ),
            (
                "How long do they take?",
                "Where do I submit leave requests?",
                "How long do leave requests take?",
            ),
            ("Can I carry it over?", LEAVE, "Can I carry annual leave over?"),
            (
                "Does it apply to contractors?",
                LEAVE,
                "Does annual leave apply to contractors?",
            ),
            (
                "It applies to interns too?",
                LEAVE,
                "Annual leave applies to interns too?",
            ),
            (
                "Is that mandatory?",
                "How do I claim travel expenses?",
                "Is travel expenses mandatory?",
            ),
            (
                "What's its cost?",
                "How do I claim travel expenses?",
                "What's the cost of travel expenses?",
            ),
            (
                "Their deadline?",
                "Who approves travel expenses?",
                "The deadline of travel expenses?",
            ),
            (
                "What is her email?",
                "Who is the HR contact for payroll?",
                "What is the email of the HR contact?",
            ),
        ],
    )
    def test_english(self, question, previous, expected):
        assert resolved(question, previous) == expected

    @pytest.mark.parametrize(
        ("question", "previous", "expected"),
        [
            ("它的响应时间呢？", INCIDENT_ZH, "一级事件的响应时间呢？"),
            ("其响应时间是多少？", INCIDENT_ZH, "一级事件的响应时间是多少？"),
            ("该事件由谁负责？", INCIDENT_ZH, "一级事件由谁负责？"),
            ("这是什么意思？", INCIDENT_ZH, "一级事件是什么意思？"),
            ("这个流程需要多久？", "报销怎么申请？", "报销的流程需要多久？"),
            ("这些材料需要原件吗？", "报销需要哪些材料？", "报销的材料需要原件吗？"),
            ("他的邮箱是什么？", "人事负责人是谁？", "人事负责人的邮箱是什么？"),
            ("它包括早餐吗？", HOTELS, "一线城市的住宿标准包括早餐吗？"),
        ],
    )
    def test_chinese(self, question, previous, expected):
        assert resolved(question, previous) == expected


class TestStandsAlone:
    @pytest.mark.parametrize(
        ("question", "previous"),
        [
            # Complete questions, whatever came before.
            ("How many days of sick leave does an employee get?", LEAVE),
            ("How fast must a level 2 incident be answered?", LEVEL_1),
            ("Who approves travel expenses?", LEVEL_1),
            ("Who handles level 2?", LEVEL_1),
            ("And how long is the probation period?", LEAVE),
            ("其他城市的住宿标准是多少？", HOTELS),
            ("出差期间每天的餐饮补助是多少？", HOTELS),
            ("那一线城市的餐饮补助是多少呢？", HOTELS),
            ("还有其他问题吗？", HOTELS),
            ("年假几天？", HOTELS),
            ("Who is Alice?", LEAVE),
            # Pronouns that point at nothing earlier, or at their own question.
            ("Is it possible to carry over unused leave days?", LEAVE),
            ("How long does it take to get reimbursed?", LEAVE),
            ("Can employees take leave when they are sick?", LEAVE),
            ("What is the rule that applies to interns?", LEAVE),
            ("Which of these apply to interns?", LEAVE),
            ("Who signs this form?", LEAVE),
            ("What is this year's budget?", LEAVE),
            ("员工请病假时他需要提供什么？", HOTELS),
            ("我该怎么办？", INCIDENT_ZH),
            ("这周谁值班？", INCIDENT_ZH),
            ("其他部门呢有什么规定？", INCIDENT_ZH),
            # Nothing to resolve.
            ("Thanks!", LEAVE),
            ("OK", LEAVE),
            ("谢谢！", INCIDENT_ZH),
        ],
    )
    def test_unchanged(self, question, previous):
        assert resolved(question, previous) == question

    @pytest.mark.parametrize(
        "question",
        ["and for level 2?", "它的响应时间呢？", "What is its cost?", "二级呢？"],
    )
    def test_the_first_turn_is_never_changed(self, question):
        assert resolved(question) == question
        assert resolve_follow_up(question, ["", "  "]) == question

    def test_blank_question(self):
        assert resolved("   ", LEVEL_1) == "   "


def test_the_module_needs_no_django():
    script = (
        "import sys; from answers.followups import resolve_follow_up;"
        "print(resolve_follow_up('and for level 2?', ['Is level 1 paged?']));"
        "print(sorted(name for name in sys.modules if name.startswith('django')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert result.stdout.splitlines() == ["Is level 2 paged?", "[]"]
