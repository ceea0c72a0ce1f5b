"""Chinese: the closed word classes, numerals and measure words the answerer and
follow-ups read. As in `en`, each stopword set serves its own reader."""

from __future__ import annotations

import re

from .en import word_set

# The answerer's (`question`): question and function words left out of terms.
ANSWER_STOPWORDS = word_set(
    "多少 什么 是 的 吗 呢 吧 啊 了 哪些 哪个 哪里 如何 怎么 怎样 怎么样 几 有 没有 "
    "请问 请 一下 是否 能否 可以 能 会 要 为 在 和 与 及 或 分别 多久 多长 对 把 被 "
    "我 我们 你 你们 他 她 它 这 那 这个 那个 其 之 所 以 于"
)
# Single characters that glue words rather than name anything.
GLUE_CHARACTERS = frozenset(
    "的是了在和与及或有为被把这那其之所以于也都而就又吗呢吧啊么从向到给让由中"
)
# Question words as found inside jieba's words and in running text (the
# answerer); follow-ups match whole tokens against `QUESTION_WORDS` instead.
QUESTION_WORD = re.compile(
    r"什么|哪些|哪个|哪里|哪儿|哪位|哪种|哪一|哪|多少|几|谁|怎么样|怎么|怎样|如何"
    r"|为什么|为何|何时|何地|何处|何|吗|呢"
)
# A word starting so asks rather than names ("哪年", "多高").
QUESTION_WORD_START = re.compile(r"^(?:哪|几|多少|什么|多[大高长远重久宽深])")
# Measure words of a number that are no word of their own ("1969年").
NUMBER_UNITS = frozenset("年月日号个次届期岁倍")
# A number with its measure word ("两个", "三种") counts things; it names none.
COUNTED = re.compile(r"[一二两三四五六七八九十几]+[个种位项家部座条次类]")
# Nouns that name the kind of answer rather than its subject.
ANSWER_KIND_NOUNS = word_set(
    "地方 地点 地址 位置 时候 时间 名字 名称 原因 方面 特点 作用 内容 情况 方式 类型 "
    "种类 东西 问题 意思 意义"
)
# After these, a term is the question's focus ("哪个国家" -> 国家).
FOCUS_AFTER = re.compile(
    r"(?:哪个|哪些|哪位|哪种|哪一|哪|什么|何|多少|几)(?:个|种|位|项|家|部|座|条)?$"
)
# What evidence of an answer kind says, as pattern text (`ranking`'s bonus).
TIME_CUE = (
    r"\d+\s*年|\d+\s*月|\d+\s*日|世纪|年代|朝|时期|时代|纪|夜间|白天|[春夏秋冬]|季"
    r"|早期|晚期|末期|初期|[一二三四五六七八九十〇零]+年"
)
PLACE_CUE = r"位于|位在|地处|坐落|座落|分布|省|市|县|区|镇|村|州|国|岛|洲|路|街"
REASON_CUE = r"由于|因为|原因|导致|所致"
ALIAS_CUE = r"称|名|叫"
NUMERALS = "一二三四五六七八九十百两零〇"
# Numerals as pattern text, one set per reader as in `en`: a number with its
# unit in evidence (`ranking`), a quantity a claim says (`extractive`), the
# count before a unit (`measures`).
NUMERAL_WITH_UNIT = (
    r"[零一二两三四五六七八九十百千万亿]+(?:[天元年月日个次人倍岁周%]|小时)"
)
QUANTITY_NUMERAL = r"[一二两三四五六七八九十百千万亿半]"
COUNT_BEFORE_UNIT = "[一二两三四五六七八九十百千万零〇半几]"
# Words a numeral only spells: no number ("一般", "统一", "第一").
NOT_A_NUMBER = (
    r"一般|一起|一直|一定|一些|统一|唯一|第[一二三四五六七八九十]|一样|一致|一切|一旦"
    r"|一同|一度|之一|十分|万一|一向|一贯|一并|一律|一再|一时|一概|同一|一方面"
)
DIGITS = {c: i for i, c in enumerate("零一二三四五六七八九")} | {"〇": 0, "两": 2}

# Follow-up questions' word classes (`followups`): whole tokens.
QUESTION_WORDS = word_set(
    "多少 什么 几 几点 几个 几天 哪 哪些 哪个 哪里 哪儿 怎么 怎样 怎么样 怎么办 "
    "如何 为什么 为何 谁 何时 什么时候 多久 多长 多长时间 多大 多高 多远 吗 是否 "
    "有没有"
)
# Where a Chinese question's predicate starts: its subject is the words before.
PREDICATE = QUESTION_WORDS | word_set(
    "是 有 要 需要 需 应 应该 应当 必须 得 能 能够 可以 可 会 该 在 由 被 给 按 "
    "多 不 没有 属于 包括 包含 呢"
)
PERSONAL = word_set("它 他 她 它们 他们 她们")
DEMONSTRATIVE = word_set("其 该 这 这个 那个 此 这些 那些 这项 该项 此项")
TIME_WORDS = word_set("周 月 年 天 次 季度 星期 周末 时候")
# Follow-ups' stopwords: with a conversation's courtesy words ("谢谢", "好的").
FOLLOWUP_STOPWORDS = (
    PREDICATE
    | PERSONAL
    | DEMONSTRATIVE
    | word_set(
        "的 了 吧 啊 呀 和 与 及 或 对 把 也 都 还 就 又 再 请 请问 一下 那 那么 "
        "还有 另外 然后 谢谢 好的 好 嗯 明白 收到 我 我们 你 你们"
    )
)
