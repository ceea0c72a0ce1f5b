"""`retrieval/tokens.py`: the terms of a text, as search and the embedder read them.

That they read Traditional Chinese as simplified is tested in `test_chinese.py`.
"""

from __future__ import annotations

import json

import pytest

from retrieval.tokens import query_tokens, tokenize
from tests.ingestion.conftest import CORPUS
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


def _two_jieba_cuts(text: str) -> list[str]:
    """`keyword_tokens` as jieba's public calls give it: search mode without the
    HMM, then the longer words of accurate mode with it that search mode missed."""
    from retrieval.tokens import iter_terms, segmenter

    jieba = segmenter()
    tokens: list[str] = []
    for is_cjk, term in iter_terms(text):
        if not is_cjk or len(term) == 1:
            tokens.append(term)
            continue
        words = [w for w in jieba.lcut_for_search(term, HMM=False) if w.strip()]
        tokens.extend(words)
        tokens.extend(
            w for w in jieba.lcut(term, HMM=True) if len(w) > 1 and w not in words
        )
    return tokens


def _cmrc_texts(count: int) -> list[str]:
    path = CORPUS / "retrieval" / "cmrc2018" / "cmrc2018_dev.json"
    if not path.is_file():
        pytest.skip("../shared/corpus is not present")
    paragraphs = [
        paragraph
        for article in json.loads(path.read_text(encoding="utf-8"))["data"]
        for paragraph in article["paragraphs"]
    ][:count]
    return [p["context"] for p in paragraphs] + [
        qa["question"] for p in paragraphs for qa in p["qas"]
    ]


@pytest.mark.parametrize(
    "text",
    [
        LEAVE_ZH,
        "王小明和李华在北京大学读书，他们的老师叫张伟。",  # names only the HMM guesses
        "中华人民共和国国务院总理在人民大会堂召开新闻发布会",  # words inside words
        "𠀀𠀁中国人民\u3400\u3401鿐鿑",  # Han outside jieba's range inside a run
        "日本語のテキスト 한국어 텍스트 GPT4模型 第2章 3.5%",
        "龘靐齉齾爩鱻麤龗灪吁龖厵滟爨癵籱饢驫",  # characters jieba's HMM never saw
        "的的的的的",
        "",
    ],
)
def test_keyword_tokens_are_jiebas_two_cuts_in_one_pass(text: str) -> None:
    from retrieval.tokens import keyword_tokens

    assert keyword_tokens(text) == _two_jieba_cuts(text)


def test_keyword_tokens_are_jiebas_two_cuts_over_cmrc() -> None:
    from retrieval.tokens import keyword_tokens

    texts = _cmrc_texts(120)
    assert len(texts) > 500
    for text in texts:
        assert keyword_tokens(text) == _two_jieba_cuts(text), text
