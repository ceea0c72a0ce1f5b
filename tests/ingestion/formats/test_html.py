"""HTML: visible text, structure and declared charsets."""

from __future__ import annotations

import pytest

from ingestion.blocks import HEADING, LIST_ITEM, PARAGRAPH, TABLE_ROW
from ingestion.formats import html
from tests.ingestion.formats.common import CORPUS, WHOLE, texts

PAGE = """<!DOCTYPE html>
<html><head>
<meta charset="utf-8"><title>Browser title</title>
<style>body { color: red }</style>
<script>var secret = "do not index";</script>
</head><body>
<noscript>Enable JavaScript</noscript>
<template><p>template text</p></template>
<!-- a comment -->
<h1>Leave &amp; absence</h1>
<p>Every <b>employee</b> <i>receives</i>&nbsp;25&nbsp;days.<br>Second line.</p>
<div hidden>hidden div</div>
<div style="display: none">invisible</div>
<h2>Details</h2>
<ul><li>First item</li><li>Second <a href="/x">item</a></li></ul>
<table>
  <tr><th>Year</th><th>Days</th></tr>
  <tr><td>2024</td><td>25</td></tr>
  <tr><td colspan="2">Total: 25</td></tr>
</table>
<h2>Other</h2>
<pre>line one
  line two</pre>
</body></html>
"""


def test_html_visible_text_structure() -> None:
    blocks = html.parse(PAGE.encode(), WHOLE)
    assert [(b.kind, b.text, b.heading_path) for b in blocks] == [
        (HEADING, "Leave & absence", ("Leave & absence",)),
        (
            PARAGRAPH,
            "Every employee receives 25 days. Second line.",
            ("Leave & absence",),
        ),
        (HEADING, "Details", ("Leave & absence", "Details")),
        (LIST_ITEM, "First item", ("Leave & absence", "Details")),
        (LIST_ITEM, "Second item", ("Leave & absence", "Details")),
        (TABLE_ROW, "Year | Days", ("Leave & absence", "Details")),
        (TABLE_ROW, "2024 | 25", ("Leave & absence", "Details")),
        (TABLE_ROW, "Total: 25", ("Leave & absence", "Details")),
        (HEADING, "Other", ("Leave & absence", "Other")),
        (PARAGRAPH, "line one\n  line two", ("Leave & absence", "Other")),
    ]
    everything = " ".join(texts(blocks))
    for dropped in (
        "secret",
        "color",
        "Browser title",
        "JavaScript",
        "template",
        "comment",
        "hidden",
        "invisible",
    ):
        assert dropped not in everything


def test_html_double_br_splits_paragraphs() -> None:
    assert texts(html.parse(b"<p>one<br><br>two</p>", WHOLE)) == ["one", "two"]


CHINESE = "年假为二十五天。"


@pytest.mark.parametrize(
    "meta",
    [
        '<meta charset="gbk">',
        '<meta http-equiv="Content-Type" content="text/html; charset=gb2312">',
    ],
)
def test_html_declared_gbk_charset(meta: str) -> None:
    data = f"<html><head>{meta}</head><body><p>{CHINESE}</p></body></html>".encode(
        "gbk"
    )
    assert texts(html.parse(data, WHOLE)) == [CHINESE]


def test_html_declared_charset_loses_to_valid_utf8() -> None:
    # Like the corpus page qq.html: UTF-8 bytes, <meta> says gb2312.
    data = f'<meta charset="gb2312"><p>{CHINESE}</p>'.encode()
    assert texts(html.parse(data, WHOLE)) == [CHINESE]


def test_html_wrong_declared_charset_falls_back() -> None:
    data = '<meta charset="utf-8"><p>Café crème \u20ac5</p>'.encode("cp1252")
    assert texts(html.parse(data, WHOLE)) == ["Café crème \u20ac5"]


def test_html_utf16_with_bom() -> None:
    data = "<p>Grüße 世界</p>".encode("utf-16")
    assert texts(html.parse(data, WHOLE)) == ["Grüße 世界"]


def test_html_corpus_utf16_page() -> None:
    path = CORPUS / "html" / "unstructured" / "example-steelJIS-datasheet-utf-16.html"
    if not path.is_file():
        pytest.skip("html corpus is not present")
    text = " ".join(texts(html.parse(path.read_bytes(), WHOLE)))
    assert "SNB22-3" in text
    assert "成分" in text


def test_empty_table_cells_are_kept() -> None:
    """Empty cells are kept, so that every value stays under its header cell."""
    blocks = html.parse(
        b"<table><tr><th></th><th>2019</th></tr>"
        b"<tr><td>Other</td><td>44.1</td></tr><tr><td></td><td> </td></tr></table>",
        WHOLE,
    )
    assert [(b.kind, b.text) for b in blocks] == [
        (TABLE_ROW, " | 2019"),
        (TABLE_ROW, "Other | 44.1"),
    ]
