"""`retrieval/tokens.py`: the terms of a text, as search and the embedder read them.

That they read Traditional Chinese as simplified is tested in `test_chinese.py`.
"""

from __future__ import annotations

import pytest

from retrieval.tokens import query_tokens, tokenize
from tests.retrieval.test_embeddings import LEAVE, LEAVE_ZH


def test_tokenize_latin_words_and_numbers() -> None:
    assert tokenize("Annual Leave: 3.5 days, 1,000 USD; version 1.2.3 don't") == [
        "annual",
        "leave",
        "3.5",
        "days",
        "1000",
        "usd",
        "version",
        "1.2.3",
        "don't",
    ]


def test_tokenize_cjk_unigrams_and_bigrams() -> None:
    assert tokenize("年假天") == [
        "年",
        "假",
        "天",
        "年假",
        "假天",
    ]


def test_tokenize_normalises_fullwidth_forms() -> None:
    # Fullwidth letters and digits, as Chinese documents often write them.
    assert tokenize("\uff21\uff22\uff23 \uff12\uff15") == ["abc", "25"]


def test_tokenize_mixed_script() -> None:
    assert tokenize("GPT4模型") == ["gpt4", "模", "型", "模型"]


@pytest.mark.parametrize(
    "text",
    [
        LEAVE,
        LEAVE_ZH,
        "Version 1.2.3 costs $1,000.50; 1,2 and 12,34 are not thousands.",
        "Don\u2019t mix ＡＢＣ１２３, it's 3.5% of 中文English混排 text 第2章",
        "한국어 텍스트 and 日本語のテキスト, café naïve résumé",
        "",
        "   !!! ,,, ...",
        "𠀀𠀁 rare ideographs 2024年",
    ],
)
def test_term_runs_give_the_terms_of_iter_terms(text: str) -> None:
    from retrieval.tokens import iter_terms, term_runs

    flattened = [(is_cjk, term) for is_cjk, terms in term_runs(text) for term in terms]
    assert flattened == list(iter_terms(text))


def test_a_question_is_searched_without_its_english_question_words() -> None:
    assert query_tokens("What features does Mammoth support?") == [
        "features",
        "mammoth",
        "support",
    ]
    assert query_tokens("What’s new in version 2?") == ["new", "version", "2"]


def test_words_that_also_name_things_stay_in_the_question() -> None:
    assert query_tokens("What is long-term debt?") == ["long", "term", "debt"]
    assert query_tokens("How do I reset my IT password?") == [
        "i",
        "reset",
        "my",
        "it",
        "password",
    ]


def test_a_question_of_question_words_alone_keeps_them() -> None:
    assert query_tokens("Where and when?") == ["where", "and", "when"]


def test_chinese_function_words_stay_in_the_question() -> None:
    assert "什么" in query_tokens("什么是总体评价？")
