"""Decoding text of unknown encoding."""

from __future__ import annotations

import pytest

from ingestion.formats import markdown
from ingestion.formats.encoding import decode_text
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
