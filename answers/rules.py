"""What kind of answer a question wants, as rows: each `Rule` is a pattern, what
a match does, and the questions it must and must not match.

`cues()` is the one loop that applies them: it names the rules switched on that
match a question, and `question.analyse` keeps those names (`Question.cues`) for
the stages that read them. `ablated()` switches rules off, to measure what one
is worth (`evaluate_answers --ablate RULE`). A rule reads the question normalised
(NFKC, simplified, lower case, the "According to the table," framing left out)
unless `written`: those were measured on the question as asked, and reading
"According to the table, ..." otherwise would change answers.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    name: str
    pattern: re.Pattern[str]
    effect: str  # what a match does, for people and `--ablate`
    examples: tuple[str, ...]  # each matches
    counter_examples: tuple[str, ...]  # none matches
    written: bool = False  # read on the question as asked, not normalised


RULES = (
    Rule(
        "asks-number",
        re.compile(
            r"多少|(?<!哪)几(?!乎|何)|多久|多长|多大(?!学)|多高|多远|多重|哪一?年|何时"
            r"|什么时候|百分之|百分比|比例|比率"
            r"|\bhow\s+(?:many|much|long|often|old|far|big|large|high|quickly|fast"
            r"|soon)\b|\bwhen\b|\bwhat\s+(?:(?:is|was|are|were)\s+the\s+)?(?:year"
            r"|date|time|percentage|percent|share|rate|amount|number|value|total|sum"
            r"|average|ratio|proportion|change|difference|increase|decrease|decline"
            r"|growth)\b|\bwhich\s+year\b",
            re.IGNORECASE,
        ),
        "a unit with a number ranks higher (ranking.NUMBER_BONUS); an English "
        "answer must say a quantity; a table's columns may be read",
        (
            "how many employees does the company have?",
            "年假有多少天？",
            "when was the plant opened?",
            "what was the percentage change in revenue?",
            "公司是哪一年成立的？",
        ),
        ("who is the ceo?", "哪几个部门负责？", "几乎所有人都同意吗？"),
    ),
    Rule(
        "asks-explanation",
        re.compile(
            r"\bwhy\b|\bwhat (?:led|caused|drove|resulted)\b|\bdue to\W*$"
            r"|\bdriven by\b|\breasons?\b|\binclud(?:e|es|ed|ing)\b|\bcompris"
            r"|\bconsist|\bmeans?\b|\bdefin|\bdescrib"
            r"|\bhow (?:is|are|was|were|does|do|did|will|would)\b"
            r"|\bwhat (?:does|do|did) .+ (?:show|represent|refer)"
            r"|为什么|原因|包括|包含|是指|如何",
            re.I,
        ),
        "a sentence answers, a row of numbers never does",
        (
            "why did revenue fall in 2019?",
            "what does the table show?",
            "what was the increase driven by?",
            "如何申请年假？",
        ),
        ("what was the revenue in 2019?", "年假有多少天？"),
    ),
    # Answer kinds: the first that matches is the question's (`ANSWER_KINDS`).
    Rule(
        "asks-time",
        re.compile(
            r"什么时候|何时|哪一?年|哪个月|哪一?天|时期|年代|几时|什么时间"
            r"|\bwhen\b|\bwhat (?:year|date|time)\b|\bwhich (?:year|date)\b",
            re.I,
        ),
        "a unit naming a time ranks higher (ranking.KIND_BONUS)",
        ("when did the company go public?", "公司是哪一年成立的？", "what year?"),
        ("where is the head office?", "how long is the notice period?"),
    ),
    Rule(
        "asks-place",
        re.compile(
            r"哪里|哪儿|什么地方|何地|何处|地址|地点|位置|在哪"
            r"|哪个(?:国家|城市|省|地区|州)|\bwhere\b",
            re.I,
        ),
        "a unit naming a place ranks higher (ranking.KIND_BONUS)",
        ("where is the head office?", "总部在哪里？", "他出生在哪个国家？"),
        ("when did it open?", "who founded the company?"),
    ),
    Rule(
        "asks-reason",
        re.compile(
            r"\bwhy\b|\bwhat (?:led to|caused|drove|resulted in)\b|\breasons? for\b"
            r"|\bdue to what\b|\bprimarily due to\W*$"
            r"|(?<![称成作叫名])为什么|为何|什么原因|原因是",
            re.I,
        ),
        "a unit giving a cause ranks higher (ranking.KIND_BONUS)",
        ("why did sales fall?", "what led to the increase?", "为什么要备份数据？"),
        ("它又被称为什么？", "when did sales fall?"),
    ),
    Rule(
        "asks-alias",
        re.compile(
            r"又称|别称|别名|又名|称为|称作|叫做|叫什么|\balso known\b|\bcalled\b"
            r"|\b(?:another|other) names?\b",
            re.I,
        ),
        "a unit naming something ranks higher (ranking.KIND_BONUS)",
        ("黑尾前肛鳗又称什么？", "what is it also known as?", "what other names?"),
        ("what does sla mean?", "它有多长？"),
    ),
    Rule(
        "asks-count",
        re.compile(
            r"\bhow (?:many|much|long|old|far)\b|\bwhat percentage\b"
            r"|多少|(?<!哪)几(?!乎|何)|多久|多长|百分",
            re.IGNORECASE,
        ),
        "the answer says a quantity, in digits or words; a sentence is quoted "
        "without the list it leads into",
        ("How many staff are there?", "年假有多少天？", "What percentage of sales?"),
        ("When was it signed?", "哪几个部门负责？", "How often are backups run?"),
        written=True,
    ),
    Rule(
        "not-a-quantity",
        re.compile(
            r"\bwhen\b|\bhow (?:often|quickly|soon|fast)\b|何时|什么时候",
            re.IGNORECASE,
        ),
        "asked with a number but answered with words ('after the merger', "
        "'weekly'): no quantity is required",
        ("When was it signed?", "How often are backups run?", "什么时候发工资？"),
        ("How much does it cost?", "What was the revenue in 2019?"),
        written=True,
    ),
    Rule(
        "asks-computation",
        re.compile(
            r"\b(?:change|changes|changed|increase|increased|decrease|decreased"
            r"|growth|grew|average|mean|total|sum|difference|ratio|proportion"
            r"|percentage)\b|变化|增长|减少|平均|总和|合计|差额|比率|比例",
            re.IGNORECASE,
        ),
        "a figure to compute: a unit only close in meaning never answers it",
        ("What was the change in revenue?", "平均工资是多少？", "What is the total?"),
        ("What is the exchange rate?", "Who is the CEO?"),
        written=True,
    ),
    Rule(
        "asks-procedure",
        re.compile(
            r"\bwhat (?:should|do|must|can) (?:i|we|you|they) do\b"
            r"|\bhow (?:do|can|should) (?:i|we|you)\b|\b(?:steps?|procedure)\b"
            r"|怎么办|该怎么做|如何处理|步骤|流程",
            re.IGNORECASE,
        ),
        "the answer is a procedure's steps: the list the best unit is part of",
        (
            "What should I do when the server is down?",
            "How do I request leave?",
            "服务器宕机怎么办？",
        ),
        ("How does the cache work?", "How long does it take?"),
        written=True,
    ),
    Rule(
        "about-a-table",
        re.compile(r"\btables?\b|\bwhich years\b|[上下该此本]表|表格", re.IGNORECASE),
        "asks what a table shows: the sentence leading into it may answer",
        ("What does the table show?", "Which years are shown?", "上表列出了什么？"),
        ("What is the tablespace size?", "Which year had the highest revenue?"),
        written=True,
    ),
)
RULE_NAMES = tuple(rule.name for rule in RULES)
# The rules that name an answer kind, in the order they are tried.
ANSWER_KINDS = {
    "asks-time": "time",
    "asks-place": "place",
    "asks-reason": "reason",
    "asks-alias": "alias",
}

_off: frozenset[str] = frozenset()


class UnknownRule(ValueError):
    pass


def cues(written: str, normalised: str) -> frozenset[str]:
    """The names of the rules switched on that match the question."""
    return frozenset(
        rule.name
        for rule in RULES
        if rule.name not in _off
        and rule.pattern.search(written if rule.written else normalised)
    )


def switched_off() -> frozenset[str]:
    return _off


@contextmanager
def ablated(*names: str) -> Iterator[None]:
    """Rules `names` switched off while the block runs, for the whole process."""
    global _off
    unknown = [name for name in names if name not in RULE_NAMES]
    if unknown:
        raise UnknownRule(
            f"Unknown rule {', '.join(unknown)}; rules: {', '.join(RULE_NAMES)}"
        )
    before = _off
    _off = before | frozenset(names)
    try:
        yield
    finally:
        _off = before
