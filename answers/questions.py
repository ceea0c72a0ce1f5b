"""Splitting comparison and multi-part questions into parts searched one by one.

Recognised forms (anything else is one part):
- "A 和 B 分别…" / "A、B 与 C 的 X 分别是多少": each subject with the shared words,
  "一线城市和其他城市的住宿标准分别是多少" -> "一线城市的住宿标准是多少",
  "其他城市的住宿标准是多少";
- "A 与 B 的 X 有什么区别/差异/不同", "比较/对比 A 和 B": "A 的 X", "B 的 X";
- "difference between A and B", "compare A and/with/to B", "A vs B";
- "… A and B respectively": each subject with the shared words.

Heuristics, not parsing: a wrong split costs one extra search, never a wrong claim,
because every part is answered from its own evidence and checked like any other.
"""

from __future__ import annotations

import re

from retrieval.lexicon import YEAR, YEAR_DIGITS
from retrieval.tokens import segmenter

_ZH_SPLIT = re.compile(r"以及|或者|、|和|与|跟|及|或")
_ZH_DIFFERENCE = re.compile(
    r"(?:之间)?(?:的|有|存在)?(?:什么|哪些|何)?(?:区别|差异|差别|不同|异同)"
)
_ZH_COMPARE_PREFIX = re.compile(r"^(?:请)?(?:比较|对比)(?:一下)?")
# Words before the first subject end at one of these ("请问，年假和病假…").
_ZH_CLAUSE_END = re.compile(r"[，,：:；;\s]")

_EN_BETWEEN = re.compile(
    r"\bdifferences?\s+between\s+(?P<a>.+?)\s+and\s+(?P<b>.+?)\s*[?.!]*$", re.I
)
_EN_COMPARE = re.compile(
    r"\bcompare\s+(?P<a>.+?)\s+(?:and|with|to|against)\s+(?P<b>.+?)\s*[?.!]*$", re.I
)
_EN_VERSUS = re.compile(r"^(?P<a>.+?)\s+(?:vs\.?|versus)\s+(?P<b>.+?)\s*[?.!]*$", re.I)
_YEARS_ONLY = re.compile(
    rf"(?:{YEAR_DIGITS},?\s+)+(?:and\s+)?{YEAR_DIGITS},?\s+respectively", re.I
)
_EN_RESPECTIVELY = re.compile(r",?\s*\brespectively\b", re.I)
# "What are the respective X of A and B": each subject with the shared words.
_EN_RESPECTIVE = re.compile(r"\brespective\b", re.I)
# Words that start a period or a range, not a subject ("less than one year").
_NOT_A_SUBJECT = re.compile(
    rf"(?<!\d){YEAR_DIGITS}(?!\d)|\d\s*(?:-|–|to)\s*\d"
    r"|^(?:between|less|more|up|over|under|within|after|before|at|in|on)\b",
    re.I,
)
_EN_LIST = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+", re.I)
# Words that end a subject after the conjunction ("sick leave | do employees get").
_EN_SUBJECT_WORDS = (
    "do does did is are was were be have has get gets for in of at on to per "
    "with under by from during that which"
)
_EN_SUBJECT_END = frozenset(_EN_SUBJECT_WORDS.split())


def split_question(question: str) -> list[str]:
    """The parts of `question` to search separately; `[question]` when it is one."""
    question = question.strip()
    parts = _split_chinese(question) or _split_english(question)
    unique = list(dict.fromkeys(part.strip() for part in parts or [] if part.strip()))
    return unique if len(unique) > 1 else [question]


def _split_chinese(question: str) -> list[str] | None:
    if "分别" in question:
        head, _, predicate = question.partition("分别")
        return _zh_parts(head, predicate)
    difference = _ZH_DIFFERENCE.search(question)
    compare = _ZH_COMPARE_PREFIX.match(question)
    if difference or compare:
        end = difference.start() if difference else len(question)
        head = question[compare.end() if compare else 0 : end]
        return _zh_parts(head.rstrip("？?。 "), "")
    return None


def _zh_parts(head: str, predicate: str) -> list[str] | None:
    subjects = [s.strip() for s in _ZH_SPLIT.split(head)]
    if len(subjects) < 2 or not all(subjects):
        return None
    # Words before the first subject belong to every part ("请问，", "公司的").
    cut = max((m.end() for m in _ZH_CLAUSE_END.finditer(subjects[0])), default=0)
    prefix, subjects[0] = subjects[0][:cut], subjects[0][cut:]
    last = subjects[-1]
    depth = subjects[0].count("的")
    marks = [i for i, char in enumerate(last) if char == "的"]
    shared = ""
    if len(marks) > depth:
        # "一线城市的员工和其他城市的员工的住宿标准": the last subject has as many
        # "的" as the first; the words after the next one are shared.
        subjects[-1], shared = last[: marks[depth]], last[marks[depth] :]
    elif len(marks) < depth:
        # "公司的年假和病假": the first subject's qualifier is shared.
        cut = subjects[0].rindex("的") + 1
        prefix, subjects[0] = prefix + subjects[0][:cut], subjects[0][cut:]
    elif not marks:
        # No "的" at all: assume parallel subjects and take as many words of the
        # last one as the first has characters ("其他城市住宿标准" -> "其他城市").
        taken = ""
        for word in segmenter().lcut(last):
            if len(taken) >= len(subjects[0]):
                break
            taken += word
        subjects[-1], shared = taken, last[len(taken) :]
    return [f"{prefix}{subject}{shared}{predicate}" for subject in subjects]


def _split_english(question: str) -> list[str] | None:
    # "the difference between A and B in 2019" asks for one computed figure.
    if _EN_BETWEEN.search(question) and YEAR.search(question):
        return None
    for pattern in (_EN_BETWEEN, _EN_COMPARE, _EN_VERSUS):
        match = pattern.search(question)
        if match:
            return [match["a"], match["b"]]
    if _EN_RESPECTIVELY.search(question):
        # "... in 2019 and 2018 respectively": the same thing in two periods,
        # which one table row holds, not two subjects.
        if _YEARS_ONLY.search(question):
            return None
        return _respective_parts(_EN_RESPECTIVELY.sub("", question).strip())
    if _EN_RESPECTIVE.search(question):
        return subject_parts(question)
    return None


def subject_parts(question: str) -> list[str] | None:
    """ "What are the respective X of A and B in 2017?": the question about A and
    the question about B; None when it lists no subjects, or periods and ranges
    ("in 2019 and 2018", "less than one year and between 2-5 years")."""
    return _respective_parts(question, subject_only=True)


def _respective_parts(text: str, *, subject_only: bool = False) -> list[str] | None:
    """Each subject of "... A, B and C <shared words>" with the shared words;
    None when `subject_only` and a subject is a period or a range."""
    end = re.search(r"\s*[?.!]*$", text)
    text, mark = text[: end.start()], text[end.start() :].strip()
    left, conjunction, right = text.rpartition(" and ")
    if not conjunction:
        return None
    # The last subject ends where the shared words start; the first has as many words.
    right_words = right.split()
    size = next(
        (i for i, word in enumerate(right_words) if word.lower() in _EN_SUBJECT_END),
        len(right_words),
    )
    if not size:
        return None
    last, suffix = right_words[:size], right_words[size:]
    left_items = [item for item in _EN_LIST.split(left) if item]
    left_words = left_items[0].split()
    if len(left_words) <= size:
        prefix, first = [], left_words
    else:
        prefix, first = left_words[:-size], left_words[-size:]
    subjects = [" ".join(first), *left_items[1:], " ".join(last)]
    if subject_only and any(_NOT_A_SUBJECT.search(subject) for subject in subjects):
        return None
    return [" ".join([*prefix, subject, *suffix]) + mark for subject in subjects]
