"""Markdown: structure, inline markup and CJK lines."""

from __future__ import annotations

from ingestion.blocks import HEADING, LIST_ITEM, PARAGRAPH, TABLE_ROW
from ingestion.formats import markdown
from tests.ingestion.formats.common import WHOLE, texts

MARKDOWN = """---
title: Handbook
tags: [hr]
---
# Leave policy

Every **employee** gets _25_ days, see [the rules](https://example.com/rules)
and `config.yaml`. ![diagram](img/leave.png)

Carry-over
==========

- First item
- Second item with __bold__
  continued on the next line

```python
# not a heading
print("hi")
```

## Table

| Year | Days |
|------|-----:|
| 2024 | 25 |

### Deep
Text under deep.

## Back up
Text under back up.
"""


def test_markdown_structure() -> None:
    blocks = markdown.parse(MARKDOWN.encode(), WHOLE)
    assert [(b.kind, b.text, b.heading_path) for b in blocks] == [
        (HEADING, "Leave policy", ("Leave policy",)),
        (
            PARAGRAPH,
            "Every employee gets 25 days, see the rules and config.yaml.",
            ("Leave policy",),
        ),
        (HEADING, "Carry-over", ("Carry-over",)),
        (LIST_ITEM, "First item", ("Carry-over",)),
        (
            LIST_ITEM,
            "Second item with bold continued on the next line",
            ("Carry-over",),
        ),
        (PARAGRAPH, '# not a heading\nprint("hi")', ("Carry-over",)),
        (HEADING, "Table", ("Carry-over", "Table")),
        (TABLE_ROW, "Year | Days", ("Carry-over", "Table")),
        (TABLE_ROW, "2024 | 25", ("Carry-over", "Table")),
        (HEADING, "Deep", ("Carry-over", "Table", "Deep")),
        (PARAGRAPH, "Text under deep.", ("Carry-over", "Table", "Deep")),
        (HEADING, "Back up", ("Carry-over", "Back up")),
        (PARAGRAPH, "Text under back up.", ("Carry-over", "Back up")),
    ]


def test_markdown_setext_dash_is_level_two_and_rule_is_not_a_heading() -> None:
    data = b"Top\n===\n\nSub\n---\n\ntext\n\n---\n\nafter rule\n"
    blocks = markdown.parse(data, WHOLE)
    assert [(b.kind, b.text, b.heading_path) for b in blocks] == [
        (HEADING, "Top", ("Top",)),
        (HEADING, "Sub", ("Top", "Sub")),
        (PARAGRAPH, "text", ("Top", "Sub")),
        (PARAGRAPH, "after rule", ("Top", "Sub")),
    ]


def test_markdown_chinese_lines_join_without_spaces() -> None:
    data = "# 标题\n\n第一行\n第二行。\n".encode()
    assert texts(markdown.parse(data, WHOLE)) == [
        "标题",
        "第一行第二行。",
    ]


def test_markdown_hash_without_space_is_not_a_heading() -> None:
    blocks = markdown.parse(b"#hashtag is text\n", WHOLE)
    assert [(b.kind, b.text) for b in blocks] == [(PARAGRAPH, "#hashtag is text")]


def test_empty_table_cells_are_kept() -> None:
    """Empty cells are kept, so that every value stays under its header cell."""
    blocks = markdown.parse(
        b"|  | 2019 | 2018 |\n|---|---|---|\n| Other | 44.1 |  |\n|  |  |  |\n", WHOLE
    )
    assert [(b.kind, b.text) for b in blocks] == [
        (TABLE_ROW, " | 2019 | 2018"),
        (TABLE_ROW, "Other | 44.1 | "),
    ]
