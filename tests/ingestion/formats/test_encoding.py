"""Decoding text of unknown encoding."""

from __future__ import annotations

import pytest

from ingestion.formats import markdown, parse_document
from ingestion.formats.encoding import SAMPLE_BYTES, decode_text, wide_encoding
from tests.ingestion.formats.common import CORPUS, WHOLE, texts

COMMA = "\uff0c"  # fullwidth comma, spelled out to keep ruff's RUF001 quiet


SAMPLE = "Grüße aus Köln \u2013 中文"


@pytest.mark.parametrize(
    "encoding", ["utf-8", "utf-8-sig", "utf-16", "utf-16-be", "utf-32"]
)
def test_decode_unicode_encodings(encoding: str) -> None:
    data = SAMPLE.encode(encoding)
    if encoding == "utf-16-be":
        data = b"\xfe\xff" + data
    assert decode_text(data) == SAMPLE


@pytest.mark.parametrize("encoding", ["gb18030", "gbk"])
def test_decode_chinese_legacy_encodings(encoding: str) -> None:
    text = f"核电厂定期安全审查{COMMA}年假为二十五天。 ISO 9001"
    assert decode_text(text.encode(encoding)) == text


@pytest.mark.parametrize(
    "text",
    [
        "Müller über Straße und Grüße",
        "déjà vu, naïve café",
        "äöüß",
    ],
)
def test_decode_latin1_is_not_mistaken_for_chinese(text: str) -> None:
    assert decode_text(text.encode("latin-1")) == text


def test_decode_cp1252_punctuation() -> None:
    text = "\u201cQuoted\u201d \u2013 costs \u20ac5"
    assert decode_text(text.encode("cp1252")) == text


def test_decode_honours_a_declared_charset() -> None:
    text = "Привет, мир"
    assert decode_text(text.encode("koi8-r"), declared="koi8-r") == text


@pytest.mark.parametrize("declared", ["no-such-charset", "rot13", "zlib", "idna"])
def test_decode_ignores_unusable_declared_charsets(declared: str) -> None:
    text = "café"
    assert decode_text(text.encode("latin-1"), declared=declared) == text


def test_markdown_in_latin1_from_corpus() -> None:
    path = CORPUS / "markdown" / "unstructured" / "umlauts-non-utf8.md"
    if not path.is_file():
        pytest.skip("markdown corpus is not present")
    blocks = markdown.parse(path.read_bytes(), WHOLE)
    assert texts(blocks) == ["können", "können", "äöüß"]


SIMPLIFIED = f"核电厂定期安全审查{COMMA}员工每年享有二十五天带薪年假。"
TRADITIONAL = f"核電廠定期安全審查{COMMA}員工每年享有二十五天帶薪年假。"
JAPANESE = "従業員は毎年、二十五日の年次有給休暇を取得できます。"
KOREAN = "직원은 매년 이십오 일의 유급 휴가를 받을 수 있습니다."
FRENCH = "Les employés ont droit à vingt-cinq jours de congés payés \u2013 déjà."


def document_bytes(kind: str, sentence: str, encoding: str) -> bytes:
    """A small document of `kind` holding `sentence` in two paragraphs, encoded
    without a byte order mark or a declared charset."""
    if kind == "html":
        text = f"<html><body><h1>{sentence}</h1><p>{sentence}</p></body></html>"
    elif kind == "markdown":
        text = f"# {sentence}\n\n{sentence}\n"
    else:
        text = f"{sentence}\n\n{sentence}\n"
    return text.encode(encoding)


@pytest.mark.parametrize("kind", ["text", "html", "markdown"])
@pytest.mark.parametrize(
    ("sentence", "encoding"),
    [
        (SIMPLIFIED, "gb18030"),
        (SIMPLIFIED, "gbk"),
        (TRADITIONAL, "big5"),
        (TRADITIONAL, "cp950"),
        (JAPANESE, "shift_jis"),
        (JAPANESE, "cp932"),
        (JAPANESE, "euc_jp"),
        (KOREAN, "euc_kr"),
        (KOREAN, "cp949"),
        (FRENCH, "cp1252"),
        (FRENCH, "utf-16-le"),
        (FRENCH, "utf-16-be"),
        (SIMPLIFIED, "utf-16-le"),
        (KOREAN, "utf-16-be"),
        (JAPANESE, "utf-32-le"),
        (TRADITIONAL, "utf-32-be"),
    ],
)
def test_undeclared_encodings_are_detected(
    kind: str, sentence: str, encoding: str
) -> None:
    data = document_bytes(kind, sentence, encoding)

    assert texts(parse_document(kind, data)) == [sentence, sentence]


@pytest.mark.parametrize(
    ("text", "encoding"),
    [
        ("年假", "gb18030"),  # a word or two: too little to tell, GB18030 first
        (f"Annual leave (年假) is 25 days{COMMA} see 人事部.", "gb18030"),
        ("연차 휴가", "euc_kr"),
        ("年次有給休暇", "shift_jis"),
        ("年次有給休暇", "euc_jp"),
        ("Grüße", "cp1252"),
        ("Leave days", "utf-16-be"),  # also ideographs read as UTF-16-LE
        ("Leave days", "utf-16-le"),
    ],
)
def test_short_texts_are_detected(text: str, encoding: str) -> None:
    assert decode_text(text.encode(encoding)) == text


def test_a_declared_charset_still_wins_over_detection() -> None:
    data = KOREAN.encode("euc_kr")
    assert decode_text(data, declared="euc-kr") == KOREAN
    html = f'<meta charset="big5"><p>{TRADITIONAL}</p>'.encode("big5")
    assert texts(parse_document("html", html)) == [TRADITIONAL]


@pytest.mark.parametrize(
    ("sentence", "encoding"),
    [(TRADITIONAL, "big5"), (KOREAN, "euc_kr"), (JAPANESE, "euc_jp")],
)
def test_a_large_file_is_decoded_whole_with_the_encoding_of_its_start(
    sentence: str, encoding: str
) -> None:
    # The guess reads the start only, cut wherever SAMPLE_BYTES falls; a damaged
    # byte further on is replaced, and does not send the whole file to cp1252.
    line = (sentence + "\n").encode(encoding)
    start = line * (2 * SAMPLE_BYTES // len(line))
    data = start + b"\xff\xff" + line * 10

    text = decode_text(data)

    assert text.count(sentence) == start.count(line) + 10
    assert "\ufffd" in text


def test_wide_text_needs_more_than_a_stray_nul() -> None:
    # A UTF-8 file with a NUL in it is UTF-8, not UTF-16 read from a stray byte.
    text = "Annual leave is 25 days.\x00 Grüße aus Köln.\n" * 10
    assert decode_text(text.encode()) == text
    assert wide_encoding(text.encode()) is None


@pytest.mark.parametrize(
    "data", [b"\x00" * 64, bytes(range(256)) * 4], ids=["nuls", "binary"]
)
def test_binary_is_not_taken_for_wide_text(data: bytes) -> None:
    assert wide_encoding(data) is None
    assert isinstance(decode_text(data), str)


def test_big5_is_read_as_windows_writes_it() -> None:
    # cp950, the Big5 Windows saves, adds the euro sign among others.
    text = f"{TRADITIONAL} 每日津貼 €25。"
    assert decode_text(text.encode("cp950")) == text


@pytest.mark.parametrize(
    "text",
    [
        "It\u2019s the employee\u2019s right; don\u2019t wait.",
        "\u201cLeave\u201d is l\u2019avance \u2013 d\u2019accord.",
    ],
)
def test_cp1252_punctuation_inside_words_is_not_taken_for_cjk(text: str) -> None:
    # 0x92 (a curly apostrophe) and a letter make a common kanji in Shift_JIS.
    assert decode_text(text.encode("cp1252")) == text
