"""Hostile text documents made at test time, each of about the size asked for.

Each generator repeats a small unit that some parser once handled in more than
linear time (or that costs the most per byte) up to `size` bytes; the benchmark
(bench/hostile_inputs.py) and tests/security/test_hostile_text.py share them.
"""

from __future__ import annotations

from collections.abc import Callable

KIB = 1024
MIB = 1024 * KIB


def _repeat(unit: bytes, size: int, *, head: bytes = b"", tail: bytes = b"") -> bytes:
    count = max(1, (size - len(head) - len(tail)) // len(unit))
    return head + unit * count + tail


def unclosed_tags(size: int) -> bytes:
    """`<a href='x'` again and again, never closed: html.parser rescans the
    unfinished tag from its start at every feed."""
    return _repeat(b"<a href='x'", size, head=b"<p>Leave policy. ")


def nested_tags(size: int) -> bytes:
    """Elements opened and never closed, nesting ever deeper."""
    return _repeat(b"<div><b><i><span>x", size)


def many_attributes(size: int) -> bytes:
    return _repeat(b' data-a="1" b=2', size, head=b"<p", tail=b">text</p>")


def tag_soup(size: int) -> bytes:
    """Brackets and fragments of markup without a single complete tag."""
    return _repeat(b"<</a <!-- <![CDATA[ &#x; &amp <p <", size)


def html_table_flood(size: int) -> bytes:
    return _repeat(b"<tr><td>1<td>2", size, head=b"<table><tr><th>a<th>b")


def backtick_run(size: int) -> bytes:
    """One long run of backticks after a word: the old code-span pattern tried
    every shorter opener against every later run."""
    return b"x" + b"`" * (size - 1)


def backtick_ladder(size: int) -> bytes:
    """Runs of 1, 2, 3 ... backticks, none closed by a run of its own length."""
    out, length = bytearray(b"x "), 1
    while len(out) < size:
        out += b"`" * length + b" a "
        length = length % 40 + 1
    return bytes(out[:size])


def emphasis_runs(size: int) -> bytes:
    """Openers of strong, emphasis and strikethrough that nothing closes."""
    return _repeat(b"**a *b __c _d ~~e ", size, head=b"x ")


def bracket_runs(size: int) -> bytes:
    """Link and image openers without their closing brackets."""
    return _repeat(b"[a ![b [c](d ", size, head=b"x ")


def angle_runs(size: int) -> bytes:
    """Tag, comment and autolink openers that never close."""
    return _repeat(b"<a <!-- <http://x ", size, head=b"x ")


def deep_nesting(size: int) -> bytes:
    """One line of blockquote markers and list markers nested deeper and deeper."""
    return _repeat(b"> - ", size, tail=b"text\n")


def table_flood(size: int) -> bytes:
    """A table whose rows hold hundreds of cells."""
    row = b"|" + b" a |" * 200 + b"\n"
    header = row + b"|" + b"---|" * 200 + b"\n"
    return _repeat(row, size, head=header)


def long_line(size: int) -> bytes:
    """One paragraph: a single line of ordinary words."""
    return _repeat(b"leave policy says ", size)


def one_long_word(size: int) -> bytes:
    return b"a" * size


def nul_bytes(size: int) -> bytes:
    """Text broken by NULs and other control characters (not UTF-16)."""
    return _repeat(b"text\x00\x01\x02 ", size)


def mixed_encodings(size: int) -> bytes:
    """UTF-8, GB18030, cp1252 and UTF-16 bytes mixed, so that no decoding fits."""
    unit = (
        "年假 ".encode()
        + "年假 ".encode("gb18030")
        + "café ".encode("cp1252")
        + "x ".encode("utf-16-le")
    )
    return _repeat(unit, size)


def short_lines(size: int) -> bytes:
    """Many one-word paragraphs: the most blocks per byte."""
    return _repeat(b"word\n\n", size)


Generator = Callable[[int], bytes]

# (kind, name, generator): the kinds are the parser's document kinds.
HOSTILE_INPUTS: list[tuple[str, str, Generator]] = [
    ("html", "unclosed tags", unclosed_tags),
    ("html", "tags nested deep", nested_tags),
    ("html", "many attributes", many_attributes),
    ("html", "tag soup", tag_soup),
    ("html", "table rows", html_table_flood),
    ("html", "one long word", one_long_word),
    ("markdown", "backtick run", backtick_run),
    ("markdown", "backtick ladder", backtick_ladder),
    ("markdown", "* _ ~ runs", emphasis_runs),
    ("markdown", "[ runs", bracket_runs),
    ("markdown", "< runs", angle_runs),
    ("markdown", "deep list/quote nesting", deep_nesting),
    ("markdown", "pipe-table flood", table_flood),
    ("markdown", "huge single line", long_line),
    ("markdown", "one long word", one_long_word),
    ("markdown", "short lines", short_lines),
    ("text", "huge single line", long_line),
    ("text", "one long word", one_long_word),
    ("text", "NUL bytes", nul_bytes),
    ("text", "mixed encodings", mixed_encodings),
    ("text", "short lines", short_lines),
]
