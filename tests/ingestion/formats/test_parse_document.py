"""parse_document: the registry's contract for every kind."""

from __future__ import annotations

import pytest

from documents.kinds import FILE_KINDS
from ingestion import formats
from ingestion.blocks import Block, ParseError
from ingestion.formats import ParseRequest, parse_document

TEXT = FILE_KINDS.named("text")


def test_unknown_kind_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="unsupported document kind"):
        parse_document("odt", b"whatever")


def test_unexpected_exception_becomes_parse_error_with_type_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def explode(data: bytes, request: ParseRequest) -> list[Block]:
        raise KeyError("/srv/secret/path.txt")

    monkeypatch.setitem(formats.PARSERS, TEXT, explode)
    with pytest.raises(ParseError) as caught:
        parse_document("text", b"hello")
    assert "KeyError" in caught.value.reason
    assert "/srv" not in caught.value.reason


def test_memory_error_is_not_swallowed(monkeypatch: pytest.MonkeyPatch) -> None:
    def exhaust(data: bytes, request: ParseRequest) -> list[Block]:
        raise MemoryError

    monkeypatch.setitem(formats.PARSERS, TEXT, exhaust)
    with pytest.raises(MemoryError):
        parse_document("text", b"hello")


def test_parse_error_reason_is_short_and_single_line() -> None:
    error = ParseError("damaged\nPDF: " + "x" * 500)
    assert len(error.reason) <= 200
    assert "\n" not in error.reason
    assert str(error) == error.reason


def test_whitespace_blocks_are_dropped() -> None:
    assert parse_document("text", b"  \n\n \t \n") == []
