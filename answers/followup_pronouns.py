"""Pronouns of a follow-up question replaced by the previous question's subject
(rule 1 of `followups`): "What is its response time?" -> "What is the response
time of <subject>?", "它的响应时间呢？" -> "<subject>的响应时间呢？".
"""

from __future__ import annotations

from retrieval.lexicon import en, zh

from .followup_items import apply_edits, named_items, noun_runs
from .followup_words import Token, is_chinese, question_tokens

# A pronoun after this many content words of a question this long has its own
# antecedent ("Can employees take leave when they are sick?").
OWN_ANTECEDENT_WORDS = 2
OWN_ANTECEDENT_QUESTION_WORDS = 7
OWN_ANTECEDENT_QUESTION_CJK_CHARS = 10


def _subject(earlier: str) -> str | None:
    """What a pronoun in the next question most likely points at."""
    tokens = question_tokens(earlier)
    if is_chinese(earlier):
        return _chinese_subject(earlier, tokens)
    runs = noun_runs(tokens, earlier)
    if not runs:
        return None
    items = named_items(earlier)

    def holds_item(run: list[Token]) -> bool:
        return any(run[0].start <= item.start < run[-1].end for item in items)

    # A named item first, then the longest phrase; of equals the later ("the
    # response time of the on-call service": the service).
    run = max(
        enumerate(runs), key=lambda pair: (holds_item(pair[1]), len(pair[1]), pair[0])
    )[1]
    start = run[0].start
    before = [token for token in tokens if token.end <= start]
    if before and before[-1].lower in en.DETERMINERS:
        start = before[-1].start
    return earlier[start : run[-1].end]


def _chinese_subject(earlier: str, tokens: list[Token]) -> str | None:
    words = [
        token for token in tokens if token.text not in {"请问", "那么", "那", "还有"}
    ]
    subject: list[Token] = []
    for token in words:
        if token.cjk and token.text in zh.PREDICATE and any(t.content for t in subject):
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
    runs = noun_runs(tokens, earlier)
    if not runs:
        return None
    run = max(enumerate(runs), key=lambda pair: (len(pair[1]), pair[0]))[1]
    return earlier[run[0].start : run[-1].end]


def resolve_pronouns(question: str, earlier: str) -> str | None:
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
    return apply_edits(question, edits)


def _chinese_pronoun(
    token: Token, noun: Token | None, subject: str
) -> tuple[int, int, str] | None:
    if token.text in zh.PERSONAL:
        return token.start, token.end, subject
    if token.text not in zh.DEMONSTRATIVE:
        return None
    if noun is None:
        # "这是什么意思": a pronoun; "我该怎么办": "should", not one.
        return (token.start, token.end, subject) if token.text != "该" else None
    if noun.text in zh.TIME_WORDS:
        return None  # "这周", "这个月"
    if noun.text in subject:
        return token.start, noun.end, subject  # "该事件" -> "一级事件"
    # "其响应时间" -> "一级事件的响应时间"
    return token.start, token.end, f"{subject}的"


def _english_pronoun(
    question: str, tokens: list[Token], index: int, subject: str
) -> tuple[int, int, str] | None:
    token = tokens[index]
    previous = tokens[index - 1].lower if index else None
    run = _words_right_after(question, tokens, index)
    capital = token.text[:1].isupper() and index == 0
    edit = _english_edit(question, token, previous, run, subject)
    if edit is None or not capital:
        return edit
    start, end, text = edit
    return start, end, text[:1].upper() + text[1:]


def _words_right_after(question: str, tokens: list[Token], index: int) -> list[Token]:
    """The content words after `tokens[index]`, up to the first other word or
    anything but spaces between two."""
    token = tokens[index]
    run = []
    for next_token in tokens[index + 1 :]:
        if (
            not next_token.content
            or question[(run[-1] if run else token).end : next_token.start].strip()
        ):
            break
        run.append(next_token)
    return run


def _english_edit(
    question: str,
    token: Token,
    previous: str | None,
    run: list[Token],
    subject: str,
) -> tuple[int, int, str] | None:
    """The edit for an English pronoun; `_english_pronoun` capitalises it where
    it starts the question."""
    word = token.lower
    if word == "it" and en.DUMMY_IT.search(question[token.start :]):
        return None
    if word in en.PERSONAL:
        return token.start, token.end, subject
    if word in en.POSSESSIVE or (word == "her" and run):
        if run:
            owned = question[run[0].start : run[-1].end]
            return token.start, run[-1].end, f"the {owned} of {subject}"
        return token.start, token.end, f"{subject}'s"
    if word in en.DEMONSTRATIVE:
        return _demonstrative_edit(token, previous, run, subject)
    return None


def _demonstrative_edit(
    token: Token, previous: str | None, run: list[Token], subject: str
) -> tuple[int, int, str] | None:
    # "the rule that applies": "that" after a content word is no pronoun.
    if (
        token.lower == "that"
        and previous is not None
        and previous not in en.FOLLOWUP_STOPWORDS
    ):
        return None
    if not run:
        return token.start, token.end, subject  # "Who approves that?"
    if run[0].key in {t.key for t in question_tokens(subject)}:
        return token.start, run[0].end, subject  # "this incident"
    if run[0].lower in en.TIME_WORDS:
        return None  # "this year"
    if previous is None or previous in en.AUXILIARIES | en.QUESTION_WORDS:
        return token.start, token.end, subject  # "Is that mandatory?"
    return None  # "Who signs this form?": a noun the subject does not name
