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

Rule 1 lives in `followup_pronouns`, the named items and noun runs both rules read
in `followup_items`, the word classes in `lexicon`.

Heuristics, not parsing: a wrong guess costs one poor search, never a wrong claim,
because the resolved question is answered and checked like any other, and the API
returns it so the caller sees what was searched.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from retrieval.lexicon import en, zh

from .followup_items import Item, apply_edits, named_items, noun_runs
from .followup_pronouns import resolve_pronouns
from .followup_words import (
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


def _replace_siblings(x: str, previous: Sequence[str]) -> str | None:
    """The newest previous question naming a sibling of X's items, with X's in."""
    wanted: dict[str, list[Item]] = {}
    for item in named_items(x):
        wanted.setdefault(item.key, []).append(item)
    if not wanted:
        return None
    for earlier in reversed(previous):
        edits: list[tuple[int, int, str]] = []
        for key, new in wanted.items():
            old = [item for item in named_items(earlier) if item.key == key]
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
            return apply_edits(earlier, edits)
    return None


def _names_several(x: str, earlier: str) -> bool:
    """Whether `earlier` names several items of a label X names: which is meant?"""
    keys = {item.key for item in named_items(x)}
    values: dict[str, set[str]] = {}
    for item in named_items(earlier):
        values.setdefault(item.key, set()).add(item.value)
    return any(len(values.get(key, ())) > 1 for key in keys)


# A grade written alone: "AAA" for the "level AA" of the previous question.
_GRADE = re.compile(r"^(?P<letter>[A-Z])(?P=letter){0,2}$")
# A name: capitalised words ("Yorkshire", "Direct Debit").
_NAME = re.compile(r"[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)*")


def _replace_grade(x: str, earlier: str) -> str | None:
    """The previous question with its one grade of X's letter replaced by X."""
    if not _GRADE.match(x):
        return None
    grades = [
        item
        for item in named_items(earlier)
        if item.value[:1] == x[0] and _GRADE.match(item.value) and item.value != x
    ]
    if len({item.value for item in grades}) != 1:
        return None
    return apply_edits(earlier, [(g.value_start, g.value_end, x) for g in grades])


def _replace_after_preposition(x: str, preposition: str, earlier: str) -> str | None:
    """ "And in Yorkshire?" after "... in London?": the one name after the same
    preposition is the counterpart of a name X."""
    if not preposition or not _NAME.fullmatch(x):
        return None
    spans = [
        match.span("name")
        for match in re.finditer(
            rf"\b{preposition}\s+(?:the\s+)?(?P<name>{_NAME.pattern})", earlier
        )
        if match["name"] != x
    ]
    if len(spans) != 1:
        return None
    start, end = spans[0]
    return earlier[:start] + x + earlier[end:]


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
    phrases = noun_runs(question_tokens(earlier), earlier)
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
    r"(?:(?:what|how)\s+about|what\s+if|same\s+for)?[,\s]*"
    r"(?:(?P<preposition>for|in|with|at|on|under|during|to|of|if|when)\s+"
    r"(?!least\b|most\b|\d))?)"
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
    preposition: str = ""  # "in" of "And in Yorkshire?"


def _ellipsis(question: str) -> _Ellipsis | None:
    """X of an elliptical question or a fragment; None if it stands alone."""
    tokens = question_tokens(question)
    if not tokens:
        return None
    framing = (
        _chinese_framing(question, tokens)
        if is_chinese(question)
        else _english_framing(question, tokens)
    )
    if framing is None:
        return None
    match = framing.match
    x_tokens = question_tokens(match["x"])
    if framing.framed and not framing.short:
        # "And how long is the probation period?" asks a question of its own.
        if framing.too_long or has_question_word(x_tokens):
            return None
        if x_tokens and not x_tokens[0].cjk and x_tokens[0].lower in en.AUXILIARIES:
            return None
    elif has_question_word(x_tokens):
        if _names_a_topic(x_tokens):
            return None  # "年假几天？", "Who is Alice?": short, but a question
        # "由谁处理？", "Who approves?", "Why?": a question about the last topic.
        return _Ellipsis(match["x"], match.start("x"), match.end("x"), asks=True)
    elif not any(token.content for token in x_tokens):
        return None  # "OK", "谢谢！"
    preposition = (match.groupdict().get("preposition") or "").lower()
    return _Ellipsis(match["x"], match.start("x"), match.end("x"), False, preposition)


@dataclass(frozen=True)
class _Framing:
    """How a question may be an ellipsis: X in `match`, and whether it is framed
    ("and ...", "那X呢"), short (a fragment) and too long for an ellipsis."""

    match: re.Match[str]
    framed: bool
    short: bool
    too_long: bool


def _chinese_framing(question: str, tokens: list[Token]) -> _Framing | None:
    match = _ZH_ELLIPSIS.match(question)
    cjk_chars = sum(len(token.text) for token in tokens if token.cjk)
    framed = bool(
        match
        and (match["frame"].strip(" ，,") or match["end"][:1] in tuple("呢又如怎"))
    )
    short = cjk_chars <= FRAGMENT_CJK_CHARS and len(tokens) <= FRAGMENT_WORDS
    if not match or not (framed or short):
        return None
    return _Framing(match, framed, short, len(match["x"]) > ELLIPSIS_MAX_CJK_CHARS)


def _english_framing(question: str, tokens: list[Token]) -> _Framing | None:
    match = _EN_ELLIPSIS.match(question)
    framed = bool(match and match["frame"].strip(" ,"))
    short = len(tokens) <= FRAGMENT_WORDS
    if not match or not (framed or short):
        return None
    size = len(question_tokens(match["x"]))
    return _Framing(match, framed, short, size > ELLIPSIS_MAX_WORDS)


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
            token.text in zh.QUESTION_WORDS
            if token.cjk
            else token.lower in en.QUESTION_WORDS
        ):
            asked = True
        elif token.content:
            if token.cjk:
                return not asked
            if index == 0 or tokens[index - 1].lower not in en.BEFORE_VERB | {"how"}:
                return True
    return False


def _resolve_ellipsis(
    question: str, ellipsis: _Ellipsis, previous: Sequence[str]
) -> str:
    x, earlier = ellipsis.x.strip(), previous[-1]
    core = _strip_leading_stopwords(x)
    if core and not ellipsis.asks:
        replaced = (
            _replace_siblings(core, previous)
            or _replace_grade(core, earlier)
            or _replace_after_preposition(core, ellipsis.preposition, earlier)
        )
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
    keys = {item.key for item in named_items(core)}
    covered = {
        position
        for item in named_items(earlier)
        if item.key in keys
        for position in range(item.start, item.end)
    }
    for part in noun_runs(question_tokens(core), core):
        text = core[part[0].start : part[-1].end]
        span = _corresponding_span(text, earlier)
        if span is not None:
            covered.update(range(*span))
    words = [
        token
        for run in noun_runs(question_tokens(earlier), earlier)
        for token in run
        if token.start not in covered
        and token.key not in have
        and not (token.cjk and token.text in question)
    ]
    text = ""
    for token in dict.fromkeys(words):
        text = joined(text, token.text)
    return text


# --- The entry point -----------------------------------------------------------------


def resolve_follow_up(question: str, previous: Sequence[str]) -> str:
    """`question` made to stand alone against the earlier resolved questions."""
    previous = [earlier.strip() for earlier in previous if earlier and earlier.strip()]
    text = question.strip()
    if not previous or not text:
        return question
    ellipsis = _ellipsis(text)
    if ellipsis is not None and not ellipsis.asks:
        # "What if they're under 150 kg?": the item swapped, not the pronoun.
        replaced = _replace_siblings(ellipsis.x.strip(), previous)
        if replaced is not None:
            return replaced
    resolved = resolve_pronouns(text, previous[-1])
    if resolved is not None:
        return resolved
    if ellipsis is not None:
        return _resolve_ellipsis(text, ellipsis, previous)
    return question
