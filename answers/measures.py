"""What a quantity is measured in: the question's "几次", "how many days", "多久"
asks for a number of times, of days, a duration; an answer must say one. The same
holds for the forms an address is written in: "Where do I email ...?" is answered
by an email address, not by a sentence about the form to send.

A claim holding only another quantity ("checkThreadPoolMinSize: 1" for "回查几次",
"the 80 hour cap" for "how many days") answers another question. Each measure is
a row: how questions ask for it, how evidence says it, and examples of both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from retrieval.lexicon import en, zh


@dataclass(frozen=True)
class Measure:
    name: str
    asked: re.Pattern[str]
    said: re.Pattern[str]
    # (question, evidence that says the measure) and (question, evidence that
    # says another quantity), for the tests.
    examples: tuple[tuple[str, str], ...]
    counter_examples: tuple[tuple[str, str], ...]
    # Whether a unit saying it is evidence of its own: "3 天" for "几天" is;
    # "every" or "per" for "how often" are in every other sentence.
    telling: bool = True


def _said(zh_units: str, en_units: str, short: str = "") -> re.Pattern[str]:
    """A number and its unit; a one-letter unit ("15d", "30 s") after digits only."""
    pattern = (
        rf"(?:\d|{zh.COUNT_BEFORE_UNIT})\s*(?:多|余|来)?(?:个)?(?:{zh_units})"
        rf"|\b{en.COUNT_BEFORE_UNIT}[\s-]*(?:{en_units})\b"
    )
    if short:
        pattern += rf"|\d\s?(?:{short})\b"
    return re.compile(pattern, re.IGNORECASE)


# (Chinese units, English units, one-letter units after digits)
_DAYS = ("天|日|工作日", r"days?|business days?|working days?", "d")
_HOURS = ("小时|钟头", r"hrs?|hours?", "h")
_WEEKS = ("周|星期", r"weeks?|wks?", "w")
_MONTHS = ("月", r"months?", "")
_YEARS = ("年", r"years?|yrs?", "y")
_MINUTES = ("分钟|秒", r"min|minutes?|mins|sec|seconds?", "m|s")
_DURATION = tuple(
    "|".join(
        part[i]
        for part in (_DAYS, _HOURS, _WEEKS, _MONTHS, _YEARS, _MINUTES)
        if part[i]
    )
    for i in (0, 1, 2)
)

MEASURES: tuple[Measure, ...] = (
    Measure(
        "times",
        re.compile(r"几次|多少次|多少回|\bhow many times\b", re.IGNORECASE),
        _said("次|回|遍", r"times|attempts|retries"),
        (
            ("最多会重投几次？", "如果消费失败，最多会重试16次。"),
            ("How many times is a message retried?", "It is retried 3 times."),
        ),
        (("Broker 最多会回查几次？", "checkThreadPoolMinSize；默认值：1"),),
    ),
    Measure(
        "days",
        re.compile(
            r"几天|多少天|几日|多少日|\bhow many (?:\w+ )?days\b", re.IGNORECASE
        ),
        _said(*_DAYS),
        (
            ("消息默认能保留几天？", "存储的消息将最多保存 3 天。"),
            ("How many days of leave do I get?", "You get up to 30 days."),
        ),
        (("How many days can I carry over?", "There is a 240 hour limit."),),
    ),
    Measure(
        "hours",
        re.compile(r"几个?小时|多少个?小时|\bhow many hours\b", re.IGNORECASE),
        _said(*_HOURS),
        (("每天工作几个小时？", "每日工作时间不超过四小时。"),),
        (("每天工作几个小时？", "每周工作五天。"),),
    ),
    Measure(
        "years",
        re.compile(r"几年|多少年|\bhow many years\b|\bhow far back\b", re.IGNORECASE),
        _said(*_YEARS),
        (
            ("至少要交够多少年？", "累计缴费满十五年的，按月领取基本养老金。"),
            ("How far back must convictions be declared?", "in the last 10 years"),
            ("一共在美国留学和工作了多少年？", "总共于美国留学和工作了30多年。"),
        ),
        (("至少要交够多少年？", "缴费比例为百分之八。"),),
    ),
    Measure(
        "duration",
        re.compile(
            r"多久|多长时间|多长的?(?:期限|时间|年限)"
            r"|\bhow long\b(?! (?:is|are|must|should) "
            r"(?:the|a|my|your|our) (?:password|name|string|key)s?\b)"
            r"|\bhow soon\b|\bhow much time\b"
            r"|\bwhat(?:'s| is| was)\b[^?]{0,40}\b(?:interval|timeout|duration)\b",
            re.IGNORECASE,
        ),
        # Or no end at all: "Indefinite".
        re.compile(
            _said(*_DURATION).pattern + r"|\bindefinite|\bperpetual|无限期|长期",
            re.IGNORECASE,
        ),
        (
            ("试用期最长能约定多久？", "试用期不得超过二个月。"),
            ("How long does Prometheus keep samples?", "retention defaults to 15d."),
            ("How soon must I tell IT?", "notify GSA IT within 1 hour"),
            ("What is the default scrape interval?", "It scrapes every 15s."),
            ("What is Prometheus's default scrape interval?", "every 1m"),
            ("How long is the useful life of Goodwill?", "Useful life: Indefinite"),
        ),
        (
            ("What is the default scrape interval?", "increase the scrape interval"),
            ("试用期最长能约定多久？", "试用期工资不得低于百分之八十。"),
        ),
    ),
    Measure(
        "frequency",
        re.compile(
            r"多久一次|多长时间一次|每隔多久|频率|多频繁"
            r"|\bhow often\b|\bhow frequently\b",
            re.IGNORECASE,
        ),
        re.compile(
            r"\b(?:every|each|per|once|twice)\b|\b(?:hourly|daily|nightly|weekly"
            r"|fortnightly|biweekly|monthly|quarterly|yearly|annually)\b"
            r"|每(?:天|日|周|星期|月|季度?|年|小时|隔)|一次",
            re.IGNORECASE,
        ),
        (
            ("How often should the team review risks?", "Review them fortnightly."),
            ("多久一次备份？", "每天备份一次。"),
        ),
        (("How often should the team review risks?", "Risks are kept in a tracker."),),
        telling=False,
    ),
    Measure(
        "percent",
        re.compile(
            r"百分之几|百分比|比重|占比|比例是多少|\bwhat (?:percentage|percent)\b"
            r"|\bwhat share\b",
            re.IGNORECASE,
        ),
        re.compile(r"%|％|百分之|\bper ?cent\b", re.IGNORECASE),
        (("占第三产业投资的比重是多少？", "占第三产业完成投资的33.1%。"),),
        (("个人每月按工资的百分之几缴纳？", "按照国家规定的比例缴纳。"),),
    ),
    Measure(
        "money",
        re.compile(
            r"多少钱|多少元|投多少"
            r"|\bhow much (?:does|do|did|will|would) .{0,40}\bcost\b"
            r"|\bwhat(?:'s| is| was| are| were) the (?:\w+ ){0,3}"
            r"(?:cost|price|fee)s?\b",
            re.IGNORECASE,
        ),
        re.compile(
            r"[$£€¥]\s?\d|\d\s?(?:元|万元|亿元|美元|英镑|欧元)|亿元|万元"
            r"|\b\d[\d,.]*\s?(?:dollars|pounds|euros|usd|gbp|eur|cents?|p)\b",
            re.IGNORECASE,
        ),
        (
            ("一期预计要投多少钱？", "预计一期总投资额约 6.66 亿元。"),
            ("What's the estimated annual cost for dual fuel?", "Dual Fuel - £2137"),
        ),
        (("一期预计要投多少钱？", "一期计划建设年产 4,000 万千米金刚线产能。"),),
    ),
    Measure(
        "characters",
        re.compile(r"几个字符|多少个?字符|\bhow many characters\b", re.IGNORECASE),
        _said("字符|位|个字", r"characters?|chars?"),
        (("密码最少要多少个字符？", "密码长度至少为 12 个字符。"),),
        (("密码最少要多少个字符？", "验证密码在 30 天后过期。"),),
    ),
)


ADDRESSES: tuple[Measure, ...] = (
    Measure(
        "email address",
        re.compile(
            r"\b(?:where|who|which address) (?:do|should|can|must) (?:i|we|you) "
            r"(?:e-?mail|send an e-?mail)\b|\be-?mail address\b"
            r"|\bwhat(?:'s| is) the e-?mail\b|哪个邮箱|邮箱地址|邮箱是|邮件地址",
            re.IGNORECASE,
        ),
        re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"),
        (
            ("Where do I email the application?", "Email it to regs@casa.gov.au."),
            ("投诉发到哪个邮箱？", "请发送至 help@example.cn。"),
        ),
        (("Where do I email the form?", "Complete this form if you apply."),),
    ),
    Measure(
        "phone number",
        re.compile(
            r"\bphone number\b|\bwhat number (?:do|should) (?:i|we) call\b"
            r"|电话号码|打什么电话|拨打哪个电话|联系电话",
            re.IGNORECASE,
        ),
        re.compile(r"\+?\d[\d ()-]{5,}\d"),
        (("What is the phone number of the help desk?", "Call 1300 419 152."),),
        (("What is the phone number of the help desk?", "Call the help desk."),),
    ),
    Measure(
        "web address",
        re.compile(
            # A site asked by "which website" may be answered by its name.
            r"\bwhat(?:'s| is) the (?:url|web address|link)\b|\bwhich url\b"
            r"|网址|链接地址",
            re.IGNORECASE,
        ),
        re.compile(r"https?://|\bwww\.|\b[\w-]+\.(?:com|org|gov|net|edu|io|cn)\b"),
        (("What is the web address of the forms?", "See www.casa.gov.au/forms."),),
        (("What is the URL of the forms?", "Forms are on our website."),),
    ),
)
MEASURES = MEASURES + ADDRESSES


def asked_measures(question: str) -> tuple[Measure, ...]:
    """The measures a question asks its quantity in (none: any quantity)."""
    return tuple(measure for measure in MEASURES if measure.asked.search(question))


def telling(measures: tuple[Measure, ...]) -> bool:
    """Whether a unit saying one of `measures` tells it apart from the others."""
    return any(measure.telling for measure in measures)


def says_measure(text: str, measures: tuple[Measure, ...]) -> bool:
    """Whether `text` states a quantity in one of `measures` (any, if none)."""
    return not measures or any(measure.said.search(text) for measure in measures)
