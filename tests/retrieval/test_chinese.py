"""Traditional Chinese folded into simplified for matching; everything else kept."""

from __future__ import annotations

import pytest

from retrieval.chinese import to_simplified
from retrieval.embeddings import HashingEmbedder
from retrieval.tokens import (
    iter_terms,
    keyword_tokens,
    normalized,
    term_runs,
    tokenize,
    word_pairs,
)

TRADITIONAL = "員工每年享有二十五天帶薪年假，請於人事系統中提出申請。"
SIMPLIFIED = "员工每年享有二十五天带薪年假，请于人事系统中提出申请。"


def test_traditional_becomes_simplified() -> None:
    assert to_simplified(TRADITIONAL) == SIMPLIFIED


@pytest.mark.parametrize(
    ("traditional", "simplified"),
    [
        ("臺灣的軟體公司", "台湾的软体公司"),  # Taiwan
        ("裡面", "里面"),  # Taiwan's 裡 and OpenCC's 裏 alike
        ("裏面", "里面"),
        ("衞生署敍述", "卫生署叙述"),  # Hong Kong variants
        ("為什麼", "为什么"),
        ("爲什麼", "为什么"),
    ],
)
def test_regional_variants_meet_in_one_form(traditional: str, simplified: str) -> None:
    assert to_simplified(traditional) == simplified


def test_long_texts_convert_alike() -> None:
    # Chunk-sized texts are remembered, longer ones converted each time.
    assert to_simplified(TRADITIONAL * 200) == SIMPLIFIED * 200
    assert to_simplified(TRADITIONAL) == SIMPLIFIED


def test_simplified_text_is_left_as_it_is() -> None:
    # 著 is also a simplified character (著名, 所著), 么 too (什么).
    text = "鲁迅所著的小说很著名，为什么？" + SIMPLIFIED
    assert to_simplified(text) == text


def test_mixed_text_converts_only_the_chinese() -> None:
    assert to_simplified("Version 1.2 的說明：參見 README.md，共 3 頁") == (
        "Version 1.2 的说明：参见 README.md，共 3 页"
    )


@pytest.mark.parametrize(
    "text", ["Every employee gets 25 days of leave.", "", "Ｆｕｌｌ　ｗｉｄｔｈ １２３"]
)
def test_text_without_chinese_is_returned_untouched(text: str) -> None:
    assert to_simplified(text) is text


def test_only_the_script_changes() -> None:
    # Fullwidth forms and CJK punctuation stay: NFKC is the tokenizer's business.
    assert to_simplified("ＡＢＣ１２３「說明」《書》") == "ＡＢＣ１２３「说明」《书》"


def test_one_character_for_one() -> None:
    text = TRADITIONAL + "憑藉 乾隆 頭髮 發展 後面 計劃 𠀀𠀁 \U0002a6a5 鍾錶 檯燈" * 3
    converted = to_simplified(text)
    assert converted != text
    assert len(converted) == len(text)


@pytest.mark.parametrize("separator", ["\x00", "\ud800"])
def test_nul_and_lone_surrogates_do_not_cut_the_text(separator: str) -> None:
    # The binding would stop at a NUL and cannot encode a lone surrogate.
    assert to_simplified(f"臺{separator}灣{separator}") == f"台{separator}湾{separator}"


# --- tokens: indexing and questions see simplified text ------------------------


def test_every_tokenizer_sees_simplified_text() -> None:
    assert keyword_tokens(TRADITIONAL) == keyword_tokens(SIMPLIFIED)
    assert tokenize(TRADITIONAL) == tokenize(SIMPLIFIED)
    assert list(iter_terms(TRADITIONAL)) == list(iter_terms(SIMPLIFIED))
    assert list(term_runs(TRADITIONAL)) == list(term_runs(SIMPLIFIED))
    assert word_pairs(TRADITIONAL) == word_pairs(SIMPLIFIED)
    assert normalized(TRADITIONAL) == normalized(SIMPLIFIED)
    assert "带薪" in keyword_tokens(TRADITIONAL)


def test_nfkc_comes_before_the_conversion() -> None:
    # Fullwidth letters become ASCII; a compatibility ideograph (U+F902) and a
    # Kangxi radical (U+2F9E) become 車 first, and only then 车.
    assert tokenize("ＡＢＣ臺灣") == ["abc", "台", "湾", "台湾"]
    assert tokenize("\uf902") == ["车"]
    assert tokenize("\u2f9e") == ["车"]


def test_traditional_and_simplified_text_embed_alike() -> None:
    embedder = HashingEmbedder()
    traditional, simplified = embedder.embed([TRADITIONAL, SIMPLIFIED])
    assert (traditional == simplified).all()
    assert embedder.name == "hashing-v2-512"
