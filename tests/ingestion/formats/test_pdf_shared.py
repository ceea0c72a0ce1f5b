"""Pages that share one content stream: read once, and a file multiplying one
page's text refused before its pages are read (issue 35: a 28 KB PDF failed
`too_many_chunks` only after 66-124 s)."""

from __future__ import annotations

import time

import pytest

from ingestion.blocks import ParseLimits, TextTooLarge, TooManyChunks
from ingestion.formats import parse_document, pdf_shared
from ingestion.formats.pdf_reader import FEW_PAGES, PageReader
from tests.ingestion.hostile import shared_stream_pdf, text_pages_pdf


@pytest.fixture
def pages_read(monkeypatch) -> list[int]:
    """How many times a page's text is read, by pdfium or by pdfminer."""
    calls: list[int] = []
    original = PageReader.read

    def read(self, number):
        calls.append(1)
        return original(self, number)

    monkeypatch.setattr(PageReader, "read", read)
    return calls


def test_pages_sharing_their_content_are_read_once_with_the_same_result(
    pages_read, monkeypatch
):
    data = shared_stream_pdf(40, 6, text=b"Staff receive twenty days of leave.")

    shared = parse_document("pdf", data)
    read_once = len(pages_read)
    monkeypatch.setattr(pdf_shared, "_page_key", lambda page, number: number)
    pages_read.clear()
    each = parse_document("pdf", data)

    assert read_once == 1
    assert len(pages_read) == 40
    assert shared == each
    assert sorted({block.page for block in shared}) == list(range(1, 41))


def test_each_shard_reads_a_shared_page_once_and_together_they_read_every_page(
    pages_read,
):
    data = shared_stream_pdf(FEW_PAGES + 2, 3, text=b"Leave rules.")

    shards = [parse_document("pdf", data, shard=(i, 2)) for i in range(2)]

    assert len(pages_read) == 2
    assert sorted(block.page for part in shards for block in part) == sorted(
        block.page for block in parse_document("pdf", data)
    )


def test_a_short_file_reads_each_page_as_if_alone(pages_read):
    # Repeating a page at most FEW_PAGES times costs what as many pages do:
    # pdfminer's pass over the structure, which finds the sharing, is left out.
    data = shared_stream_pdf(FEW_PAGES, 3, text=b"Leave rules.")

    blocks = parse_document("pdf", data)

    assert len(pages_read) == FEW_PAGES
    assert sorted({block.page for block in blocks}) == list(range(1, FEW_PAGES + 1))


def test_pages_with_their_own_content_are_each_read(pages_read):
    data = text_pages_pdf([f"Page {n} says something else." for n in range(6)])

    blocks = parse_document("pdf", data)

    assert len(pages_read) == 6
    assert [block.page for block in blocks] == [1, 2, 3, 4, 5, 6]


def test_a_small_file_multiplying_one_page_is_refused_before_its_pages_are_read(
    pages_read,
):
    data = shared_stream_pdf(200, 1000)
    assert len(data) < 32 * 1024

    started = time.monotonic()
    with pytest.raises(TooManyChunks, match="10,000 chunks"):
        parse_document("pdf", data)

    assert len(pages_read) == 1
    assert time.monotonic() - started < 5  # a minute when every page was read


def test_the_shared_text_is_held_to_the_text_limit_too(pages_read):
    data = shared_stream_pdf(100, 50)

    with pytest.raises(TextTooLarge):
        parse_document("pdf", data, ParseLimits(max_text_chars=100_000))

    assert len(pages_read) == 1
