"""Follow-up questions made to stand alone before they are searched.

`resolve_follow_up(question, previous)` returns the question to search: `question`
itself when it stands alone, otherwise a question that does. `previous` holds the
earlier turns' *resolved* questions, newest last, so each already stands alone and
the newest is normally the only one needed. The rules, in order:

1. **Pronouns** ("What is its response time?", "它的响应时间呢？"): it / its /
   they / their / this / that ..., 它 / 他 / 她 / 其 / 该 / 这个 ... are replaced by
   the previous question's subject: its noun phrase holding a named item, else its
   longest noun phrase (English), or the words before its predicate (Chinese).
   "its X" becomes "the X of <subject>", "它的X" "<subject>的X". A pronoun with
   its own antecedent earlier in a long question is left alone.
2. **Ellipses** ("and for X?", "what about X?", "how about X?", "X呢？", "那X呢",
   "那么X呢") and fragments of a few words ("Level 2?", "二级？", "Why?"): X replaces
   the part of the previous question it stands for, which is
   - a *sibling item*: the same label with another number or letter ("level 1" ->
     "level 2", "SEV1" -> "SEV2", "tier A" -> "tier B", "Q2" -> "Q3", "2019" ->
     "2020", "一级" / "第一级" / "1级" -> "二级");
   - else a phrase sharing X's head or, for a longer X, its first word ("annual
     leave" -> "sick leave", "一线城市" -> "其他城市", "住宿标准" -> "住宿补助").
   With neither, the previous question's content words that X lacks are added
   after X, so search finds the same topic ("周末呢？" -> "周末核心工作时间呢？").
   A short question without a topic of its own ("Who approves?", "由谁处理？")
   takes them the same way, before it in Chinese ("一级事件快响应由谁处理？").
3. Anything else, and every first turn, is returned unchanged.

Heuristics, not parsing: a wrong guess costs one poor search, never a wrong claim,
because the resolved question is answered and checked like any other, and the API
returns it so the caller sees what was searched.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .followup_words import (
    EN_AUXILIARIES,
    EN_BEFORE_VERB,
    EN_DEMONSTRATIVE,
    EN_DETERMINERS,
    EN_DUMMY_IT,
    EN_PERSONAL,
    EN_POSSESSIVE,
    EN_QUESTION_WORDS,
    EN_STOPWORDS,
    EN_TIME_WORDS,
    ZH_DEMONSTRATIVE,
    ZH_PERSONAL,
    ZH_PREDICATE,
    ZH_QUESTION_WORDS,
    ZH_TIME_WORDS,
    Token,
    has_question_word,
    in_place_of,
    is_chinese,
    joined,
    question_tokens,
)

# A question of at most this many words (Chinese: characters) is a fragment.
FRAGMENT_WORDS = 3
FRAGMENT_CJK_CHARS = 4
# Longer than this, an "and ..." or "X呢" is a question of its own, not an ellipsis.
ELLIPSIS_MAX_WORDS = 6
ELLIPSIS_MAX_CJK_CHARS = 16
# A pronoun after this many content words of a question this long has its own
# antecedent ("Can employees take leave when they are sick?").
OWN_ANTECEDENT_WORDS = 2
OWN_ANTECEDENT_QUESTION_WORDS = 7
OWN_ANTECEDENT_QUESTION_CJK_CHARS = 10


def _runs(tokens: Sequence[Token], text: str) -> list[list[Token]]:
    """Maximal runs of adjacent content words: the question's noun phrases, roughly.

    A run ends at a stopword or punctuation, and a verb after "I", "who", "to" ...
    belongs to none.
    """
    items = [(item.start, item.end) for item in _items(text)]
    runs: list[list[Token]] = []
    current: list[Token] = []
    for index, token in enumerate(tokens):
        # The letter of "tier A" is no article.
        content = token.content or any(s <= token.start < e for s, e in items)
        after_verb_cue = (
            index > 0
            and not token.cjk
            and tokens[index - 1].lower in EN_BEFORE_VERB | {"how"}
        )
        gap = text[current[-1].end : token.start] if current else ""
        if not content or after_verb_cue or (gap and gap.strip()):
            if current:
                runs.append(current)
            current = [] if not content or after_verb_cue else [token]
            continue
        current.append(token)
    if current:
        runs.append(current)
    return runs


# --- Items: a label with a number or letter -----------------------------------------


@dataclass(frozen=True)
class _Item:
    key: str  # the label, normalised: "level", "sev", "级"; "#year" for years
    value: str
    start: int
    end: int
    value_start: int
    value_end: int


_NOT_ALNUM_BEFORE, _NOT_ALNUM_AFTER = r"(?<![A-Za-z0-9])", r"(?![A-Za-z0-9])"
_ITEM_PATTERNS = [
    # "level 2", "version 2.1", "tier B" (the letter as a capital).
    re.compile(
        rf"{_NOT_ALNUM_BEFORE}(?P<label>[A-Za-z][A-Za-z-]*)\s+"
        rf"(?P<value>\d+(?:\.\d+)*|[A-Z]){_NOT_ALNUM_AFTER}"
    ),
    # "SEV2", "SEV-2", "Q3", "P1", "FY2019", "level-2".
    re.compile(
        rf"{_NOT_ALNUM_BEFORE}(?P<label>[A-Za-z]{{1,5}})-?(?P<value>\d+){_NOT_ALNUM_AFTER}"
    ),
    # "第二级", "二级", "2级", "一线", "三年", "2019年", "第五条".
    re.compile(
        r"(?P<prefix>第)?(?P<value>[一二三四五六七八九十百两〇零]+|\d+)\s?"
        r"(?P<label>季度|年级|阶段|级|类|档|等|期|层|楼|号|版|线|星|代|年|月|周|天|"
        r"岁|次|名|批|轮|组|区|章|节|条|款|项)"
    ),
    re.compile(r"(?<!\d)(?P<value>1[89]\d\d|20\d\d)(?!\d)"),
]
_YEAR = re.compile(r"^(?:1[89]|20)\d\d$")


def _items(text: str) -> list[_Item]:
    """The named items of `text`, left to right; earlier patterns win overlaps."""
    found: list[_Item] = []
    taken: list[tuple[int, int]] = []
    for pattern in _ITEM_PATTERNS:
        for match in pattern.finditer(text):
            label = match.groupdict().get("label") or ""
            if label.lower() in EN_STOPWORDS:
                continue
            if any(match.start() < end and start < match.end() for start, end in taken):
                continue
            value = match["value"]
            key = label.lower().replace("-", "")
            if not key or (key == "年" and _YEAR.match(value)):
                key = "#year"
            taken.append((match.start(), match.end()))
            found.append(
                _Item(
                    key,
                    value.upper() if value.isalpha() else value,
                    match.start(),
                    match.end(),
                    match.start("value"),
                    match.end("value"),
                )
            )
    return sorted(found, key=lambda item: item.start)


def _replace_siblings(x: str, previous: Sequence[str]) -> str | None:
    """The newest previous question naming a sibling of X's items, with X's in."""
    wanted: dict[str, list[_Item]] = {}
    for item in _items(x):
        wanted.setdefault(item.key, []).append(item)
    if not wanted:
        return None
    for earlier in reversed(previous):
        edits: list[tuple[int, int, str]] = []
        for key, new in wanted.items():
            old = [item for item in _items(earlier) if item.key == key]
            if len({item.value for item in old}) != 1:
                continue  # not named, or several ("level 1 and level 3"): ambiguous
            if len(new) == 1:
                edits.extend(
                    (item.value_start, item.value_end, new[0].value) for item in old
                )
            else:  # "level 2 and level 3"
                span = x[new[0].start : new[-1].end]
                edits.extend((item.start, item.end, span) for item in old)
        if edits:
            return _apply(earlier, edits)
    return None


def _names_several(x: str, earlier: str) -> bool:
    """Whether `earlier` names several items of a label X names: which is meant?"""
    keys = {item.key for item in _items(x)}
    values: dict[str, set[str]] = {}
    for item in _items(earlier):
        values.setdefault(item.key, set()).add(item.value)
    return any(len(values.get(key, ())) > 1 for key in keys)


def _apply(text: str, edits: list[tuple[int, int, str]]) -> str:
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    return text


# --- Correspondence: the part of the previous question X stands for ------------------


def _corresponding_span(x: str, earlier: str) -> tuple[int, int] | None:
    """Where in `earlier` the phrase sits that X replaces, if one does.

    English: words sharing X's last word (its head: "annual leave" for "sick
    leave"), or, for an X of several words, its first one ("annual leave" for
    "annual bonus"), as many content words as X has. Chinese: the word window of
    one phrase sharing most of X's end or beginning ("一线城市" for "其他城市").
    """
    x_tokens = [token for token in question_tokens(x) if token.content]
    if not x_tokens:
        return None
    phrases = _runs(question_tokens(earlier), earlier)
    if is_chinese(x):
        return _chinese_window(x, phrases)
    size = len(x_tokens)
    head, first = x_tokens[-1].key, x_tokens[0].key
    for phrase in phrases:
        for index, token in enumerate(phrase):
            if token.key == head:
                window = phrase[max(0, index - size + 1) : index + 1]
                return window[0].start, window[-1].end
    if size > 1:
        for phrase in phrases:
            for index, token in enumerate(phrase):
                if token.key == first:
                    window = phrase[index : index + size]
                    return window[0].start, window[-1].end
    return None


def _chinese_window(x: str, phrases: list[list[Token]]) -> tuple[int, int] | None:
    best: tuple[int, int, tuple[int, int]] | None = None  # (shared, -gap, span)
    for phrase in phrases:
        for i in range(len(phrase)):
            for j in range(i, len(phrase)):
                window = "".join(token.text for token in phrase[i : j + 1])
                shared = max(_common_suffix(window, x), _common_prefix(window, x))
                # Most of both: "时间" alone is not what "加班时间" replaces.
                if shared * 2 < len(x) or shared * 2 < len(window) or window == x:
                    continue
                rank = (shared, -abs(len(window) - len(x)))
                if best is None or rank > best[:2]:
                    best = (*rank, (phrase[i].start, phrase[j].end))
    return best[2] if best else None


def _common_suffix(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


def _common_prefix(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


# --- Ellipses ------------------------------------------------------------------------

_EN_ELLIPSIS = re.compile(
    r"^(?P<frame>(?:(?:and|but|so|also|then|ok(?:ay)?)[,\s]+)?"
    r"(?:(?:what|how)\s+about|same\s+for)?[,\s]*"
    r"(?:(?:for|in|with|at|on|under|during|to|of|if|when)\s+)?)"
    r"(?P<x>.*?)(?P<end>[\s?？!！.。]*)$",
    re.IGNORECASE,
)
_ZH_ELLIPSIS = re.compile(
    r"^(?P<frame>(?:那么|那(?![个些里儿样时])|还有|另外|然后)?[，,\s]*)(?P<x>.+?)的?"
    r"(?P<end>(?:呢|又如何|如何|又怎么样|怎么样|又怎样)?[\s?？!！.。]*)$"
)


@dataclass(frozen=True)
class _Ellipsis:
    x: str
    x_start: int
    x_end: int
    asks: bool = False  # a short question without a topic: it takes the last one


def _ellipsis(question: str) -> _Ellipsis | None:
    """X of an elliptical question or a fragment; None if it stands alone."""
    tokens = question_tokens(question)
    if not tokens:
        return None
    if is_chinese(question):
        match = _ZH_ELLIPSIS.match(question)
        cjk_chars = sum(len(token.text) for token in tokens if token.cjk)
        framed = bool(
            match
            and (match["frame"].strip(" ，,") or match["end"][:1] in tuple("呢又如怎"))
        )
        short = cjk_chars <= FRAGMENT_CJK_CHARS and len(tokens) <= FRAGMENT_WORDS
        if not match or not (framed or short):
            return None
        limit = ELLIPSIS_MAX_CJK_CHARS
        size = len(match["x"])
    else:
        match = _EN_ELLIPSIS.match(question)
        framed = bool(match and match["frame"].strip(" ,"))
        short = len(tokens) <= FRAGMENT_WORDS
        if not match or not (framed or short):
            return None
        limit = ELLIPSIS_MAX_WORDS
        size = len(question_tokens(match["x"]))
    x_tokens = question_tokens(match["x"])
    if framed and not short:
        # "And how long is the probation period?" asks a question of its own.
        if size > limit or has_question_word(x_tokens):
            return None
        if x_tokens and not x_tokens[0].cjk and x_tokens[0].lower in EN_AUXILIARIES:
            return None
    elif has_question_word(x_tokens):
        if _names_a_topic(x_tokens):
            return None  # "年假几天？", "Who is Alice?": short, but a question
        # "由谁处理？", "Who approves?", "Why?": a question about the last topic.
        return _Ellipsis(match["x"], match.start("x"), match.end("x"), asks=True)
    elif not any(token.content for token in x_tokens):
        return None  # "OK", "谢谢！"
    return _Ellipsis(match["x"], match.start("x"), match.end("x"))


def _names_a_topic(tokens: Sequence[Token]) -> bool:
    """Whether a short question names what it asks about.

    A content word before the question word does ("年假几天"); after it, a word
    right after "who", "how", "I" ... is its verb or adverb ("由谁处理", "Who
    approves?", "How fast?"), while one after an auxiliary is a topic ("Who is
    Alice?").
    """
    asked = False
    for index, token in enumerate(tokens):
        if (
            token.text in ZH_QUESTION_WORDS
            if token.cjk
            else token.lower in EN_QUESTION_WORDS
        ):
            asked = True
        elif token.content:
            if token.cjk:
                return not asked
            if index == 0 or tokens[index - 1].lower not in EN_BEFORE_VERB | {"how"}:
                return True
    return False


def _resolve_ellipsis(
    question: str, ellipsis: _Ellipsis, previous: Sequence[str]
) -> str:
    x, earlier = ellipsis.x.strip(), previous[-1]
    core = _strip_leading_stopwords(x)
    if core and not ellipsis.asks:
        replaced = _replace_siblings(core, previous)
        if replaced is not None:
            return replaced
        span = (
            None
            if _names_several(core, earlier)
            else _corresponding_span(core, earlier)
        )
        if span is not None:
            start, end = span
            return earlier[:start] + in_place_of(core, start) + earlier[end:]
    missing = _missing_words(question, core, earlier)
    if not missing:
        return question
    if ellipsis.asks and is_chinese(question) and core:
        return joined(missing, question)  # the topic first: "一级事件…由谁处理？"
    head, tail = question[: ellipsis.x_end].rstrip(), question[ellipsis.x_end :]
    return joined(head, missing) + tail.lstrip()


def _strip_leading_stopwords(x: str) -> str:
    tokens = question_tokens(x)
    first = next((token for token in tokens if token.content), None)
    return x[first.start :].strip() if first else ""


def _missing_words(question: str, core: str, earlier: str) -> str:
    """The previous question's content words the follow-up lacks, in their order.

    A phrase of the previous question with a counterpart in the follow-up ("一线城市"
    for "其他城市的餐饮补助") is not missing, although its words are.
    """
    have = {token.key for token in question_tokens(question)}
    # The items of a label the follow-up names are what it replaces.
    keys = {item.key for item in _items(core)}
    covered = {
        position
        for item in _items(earlier)
        if item.key in keys
        for position in range(item.start, item.end)
    }
    for part in _runs(question_tokens(core), core):
        text = core[part[0].start : part[-1].end]
        span = _corresponding_span(text, earlier)
        if span is not None:
            covered.update(range(*span))
    words = [
        token
        for run in _runs(question_tokens(earlier), earlier)
        for token in run
        if token.start not in covered
        and token.key not in have
        and not (token.cjk and token.text in question)
    ]
    text = ""
    for token in dict.fromkeys(words):
        text = joined(text, token.text)
    return text


# --- Pronouns ------------------------------------------------------------------------


def _subject(earlier: str) -> str | None:
    """What a pronoun in the next question most likely points at."""
    tokens = question_tokens(earlier)
    if is_chinese(earlier):
        return _chinese_subject(earlier, tokens)
    runs = _runs(tokens, earlier)
    if not runs:
        return None
    items = _items(earlier)

    def holds_item(run: list[Token]) -> bool:
        return any(run[0].start <= item.start < run[-1].end for item in items)

    # A named item first, then the longest phrase; of equals the later ("the
    # response time of the on-call service": the service).
    run = max(
        enumerate(runs), key=lambda pair: (holds_item(pair[1]), len(pair[1]), pair[0])
    )[1]
    start = run[0].start
    before = [token for token in tokens if token.end <= start]
    if before and before[-1].lower in EN_DETERMINERS:
        start = before[-1].start
    return earlier[start : run[-1].end]


def _chinese_subject(earlier: str, tokens: list[Token]) -> str | None:
    words = [
        token for token in tokens if token.text not in {"请问", "那么", "那", "还有"}
    ]
    subject: list[Token] = []
    for token in words:
        if token.cjk and token.text in ZH_PREDICATE and any(t.content for t in subject):
            break
        subject.append(token)
    else:
        subject = []
    while subject and not subject[-1].content:
        subject.pop()
    while subject and not subject[0].content:
        subject.pop(0)
    if subject:
        return earlier[subject[0].start : subject[-1].end]
    runs = _runs(tokens, earlier)
    if not runs:
        return None
    run = max(enumerate(runs), key=lambda pair: (len(pair[1]), pair[0]))[1]
    return earlier[run[0].start : run[-1].end]


def _resolve_pronouns(question: str, earlier: str) -> str | None:
    """`question` with its pronouns replaced by `earlier`'s subject, if it has any."""
    tokens = question_tokens(question)
    subject = _subject(earlier)
    if not subject:
        return None
    edits: list[tuple[int, int, str]] = []
    cjk_chars = sum(len(token.text) for token in tokens if token.cjk)
    for index, token in enumerate(tokens):
        before = [t for t in tokens[:index] if t.content]
        long_question = (
            cjk_chars >= OWN_ANTECEDENT_QUESTION_CJK_CHARS
            if token.cjk
            else len(tokens) >= OWN_ANTECEDENT_QUESTION_WORDS
        )
        if long_question and len(before) >= OWN_ANTECEDENT_WORDS:
            continue
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        adjacent = (
            following is not None and not question[token.end : following.start].strip()
        )
        noun = following if adjacent and following.content else None
        edit = (
            _chinese_pronoun(token, noun, subject)
            if token.cjk
            else _english_pronoun(question, tokens, index, subject)
        )
        if edit is not None:
            edits.append(edit)
    if not edits:
        return None
    return _apply(question, edits)


def _chinese_pronoun(
    token: Token, noun: Token | None, subject: str
) -> tuple[int, int, str] | None:
    if token.text in ZH_PERSONAL:
        return token.start, token.end, subject
    if token.text not in ZH_DEMONSTRATIVE:
        return None
    if noun is None:
        # "这是什么意思": a pronoun; "我该怎么办": "should", not one.
        return (token.start, token.end, subject) if token.text != "该" else None
    if noun.text in ZH_TIME_WORDS:
        return None  # "这周", "这个月"
    if noun.text in subject:
        return token.start, noun.end, subject  # "该事件" -> "一级事件"
    # "其响应时间" -> "一级事件的响应时间"
    return token.start, token.end, f"{subject}的"


def _english_pronoun(
    question: str, tokens: list[Token], index: int, subject: str
) -> tuple[int, int, str] | None:
    token = tokens[index]
    word = token.lower
    previous = tokens[index - 1].lower if index else None
    following = tokens[index + 1 :]
    run = []
    for next_token in following:
        if (
            not next_token.content
            or question[(run[-1] if run else token).end : next_token.start].strip()
        ):
            break
        run.append(next_token)
    capital = token.text[:1].isupper() and index == 0

    def cased(text: str) -> str:
        return text[:1].upper() + text[1:] if capital else text

    if word == "it" and EN_DUMMY_IT.search(question[token.start :]):
        return None
    if word in EN_PERSONAL:
        return token.start, token.end, cased(subject)
    if word in EN_POSSESSIVE or (word == "her" and run):
        if run:
            owned = question[run[0].start : run[-1].end]
            return token.start, run[-1].end, cased(f"the {owned} of {subject}")
        return token.start, token.end, cased(f"{subject}'s")
    if word in EN_DEMONSTRATIVE:
        # "the rule that applies": "that" after a content word is no pronoun.
        if word == "that" and previous is not None and previous not in EN_STOPWORDS:
            return None
        if not run:
            return token.start, token.end, cased(subject)  # "Who approves that?"
        if run[0].key in {t.key for t in question_tokens(subject)}:
            return token.start, run[0].end, cased(subject)  # "this incident"
        if run[0].lower in EN_TIME_WORDS:
            return None  # "this year"
        if previous is None or previous in EN_AUXILIARIES | EN_QUESTION_WORDS:
            return token.start, token.end, cased(subject)  # "Is that mandatory?"
        return None  # "Who signs this form?": a noun the subject does not name
    return None


# --- The entry point -----------------------------------------------------------------


def resolve_follow_up(question: str, previous: Sequence[str]) -> str:
    """`question` made to stand alone against the earlier resolved questions."""
    previous = [earlier.strip() for earlier in previous if earlier and earlier.strip()]
    text = question.strip()
    if not previous or not text:
        return question
    resolved = _resolve_pronouns(text, previous[-1])
    if resolved is not None:
        return resolved
    ellipsis = _ellipsis(text)
    if ellipsis is not None:
        return _resolve_ellipsis(text, ellipsis, previous)
    return question
