"""Chunking: sizes, boundaries, headings, overlap and offsets."""

from __future__ import annotations

import random
import re
from itertools import pairwise

import pytest

from ingestion.blocks import HEADING, TABLE_ROW, Block
from ingestion.chunking import (
    Chunk,
    chunk_blocks,
    full_text,
    join_chunk_runs,
    text_units,
)

CJK_RE = re.compile(r"[\u3400-鿿]")
PERIOD = "。"
SEMICOLON = "\uff1b"
VOCABULARY = [
    *("employee", "leave", "annual", "policy", "manager", "approval", "request"),
    *("calendar", "days", "holiday", "salary", "benefit", "review", "period"),
    *("contract", "notice", "office", "remote", "travel", "expense", "receipt"),
    *("budget", "quarter", "report", "team", "project", "deadline", "meeting"),
]
HANZI = "核电厂定期安全审查管理评价设计运行维护人员培训文件记录要求系统设备检测标准程序"


def english_sentence(rng: random.Random) -> str:
    words = rng.choices(VOCABULARY, k=rng.randint(8, 24))
    return " ".join(words).capitalize() + "."


def english_paragraphs(count: int, seed: int = 1) -> list[str]:
    rng = random.Random(seed)
    return [
        " ".join(english_sentence(rng) for _ in range(rng.randint(2, 9)))
        for _ in range(count)
    ]


def chinese_paragraphs(count: int, seed: int = 2) -> list[str]:
    rng = random.Random(seed)
    return [
        "".join(
            "".join(rng.choices(HANZI, k=rng.randint(10, 40))) + PERIOD
            for _ in range(rng.randint(2, 8))
        )
        for _ in range(count)
    ]


def latin_words(text: str) -> int:
    return len(re.findall(r"[A-Za-z]+", text))


def assert_offsets(blocks: list[Block], chunks: list[Chunk]) -> None:
    text = full_text(blocks)
    assert [chunk.ordinal for chunk in chunks] == list(range(len(chunks)))
    for chunk in chunks:
        assert text[chunk.char_start : chunk.char_end] == chunk.text
        assert chunk.text == chunk.text.strip()


def test_empty_input() -> None:
    assert chunk_blocks([]) == []
    assert chunk_blocks([Block(""), Block("  \n\t ")]) == []


def test_small_document_is_one_chunk() -> None:
    blocks = [Block("First paragraph."), Block("Second paragraph.", page=1)]
    assert chunk_blocks(blocks) == [
        Chunk(
            ordinal=0,
            text="First paragraph.\n\nSecond paragraph.",
            heading_path=(),
            page=None,
            char_start=0,
            char_end=35,
        )
    ]


def test_long_english_text_sizes() -> None:
    blocks = [Block(p) for p in english_paragraphs(120)]
    chunks = chunk_blocks(blocks)
    assert_offsets(blocks, chunks)
    counts = [latin_words(chunk.text) for chunk in chunks]
    assert max(counts) <= 300
    # Greedy packing fills chunks: all but the last carry at least half a budget.
    assert min(counts[:-1]) >= 150
    assert sum(latin_words(b.text) for b in blocks) <= sum(counts)


def test_long_chinese_text_sizes() -> None:
    blocks = [Block(p) for p in chinese_paragraphs(120)]
    chunks = chunk_blocks(blocks)
    assert_offsets(blocks, chunks)
    counts = [len(CJK_RE.findall(chunk.text)) for chunk in chunks]
    assert max(counts) <= 500
    assert min(counts[:-1]) >= 250
    assert all(" " not in chunk.text for chunk in chunks)


def test_mixed_text_counts_words_and_characters() -> None:
    assert text_units("中文") == 2
    assert text_units("three short words") == pytest.approx(3 * 500 / 300)
    assert text_units("x" * 60) == pytest.approx(3 * 500 / 300)  # a blob, not a word


@pytest.mark.parametrize(
    "text",
    [
        "tab\tand\x0bvertical\x1cspace, e.g. 3.5",
        "x" * 60 + " y",
        " \n ",
        "§ 4.2 “Leave” – non-breaking\u00a0space",
    ],
)
def test_text_without_cjk_is_measured_like_any_other(text: str) -> None:
    # Text without CJK takes a shortcut (str.split); one CJK character sends the
    # same words down the regular path, where it counts as one unit more.
    assert text_units(text + " 中") == text_units(text) + 1


def test_over_long_sentence_is_cut_at_whitespace_never_inside_a_word() -> None:
    rng = random.Random(3)
    sentence = " ".join(rng.choices(VOCABULARY, k=1000))  # no punctuation at all
    blocks = [Block(sentence)]
    chunks = chunk_blocks(blocks, overlap_ratio=0)
    assert_offsets(blocks, chunks)
    assert len(chunks) >= 4
    for chunk in chunks:
        assert latin_words(chunk.text) <= 300
        assert set(chunk.text.split()) <= set(VOCABULARY)
    assert " ".join(chunk.text for chunk in chunks) == sentence


def test_long_paragraph_is_cut_at_sentence_ends() -> None:
    rng = random.Random(4)
    paragraph = " ".join(english_sentence(rng) for _ in range(60))
    chunks = chunk_blocks([Block(paragraph)], overlap_ratio=0)
    assert len(chunks) > 1
    assert all(chunk.text.endswith(".") for chunk in chunks)


def test_chinese_without_punctuation_is_cut_between_characters() -> None:
    rng = random.Random(5)
    run = "".join(rng.choices(HANZI, k=1300))
    chunks = chunk_blocks([Block(run)], overlap_ratio=0)
    assert [len(chunk.text) for chunk in chunks] == [500, 500, 300]
    assert "".join(chunk.text for chunk in chunks) == run


def test_chinese_semicolon_is_a_weaker_break() -> None:
    rng = random.Random(6)
    clauses = ["".join(rng.choices(HANZI, k=90)) for _ in range(8)]
    text = SEMICOLON.join(clauses) + PERIOD
    chunks = chunk_blocks([Block(text)], overlap_ratio=0)
    assert len(chunks) == 2
    assert chunks[0].text.endswith(SEMICOLON)


def test_latin_word_inside_cjk_run_is_not_cut() -> None:
    rng = random.Random(7)
    text = (
        "".join(rng.choices(HANZI, k=495))
        + "Kubernetes"
        + "".join(rng.choices(HANZI, k=300))
    )
    chunks = chunk_blocks([Block(text)], overlap_ratio=0)
    assert any("Kubernetes" in chunk.text for chunk in chunks)


def test_heading_sections_are_never_mixed() -> None:
    intro, details = english_paragraphs(2, seed=8)
    blocks = [
        Block("Leave", ("Leave",), kind=HEADING),
        Block(intro, ("Leave",)),
        Block("Carry-over", ("Leave", "Carry-over"), kind=HEADING),
        Block(details, ("Leave", "Carry-over")),
        Block("Expenses", ("Expenses",), kind=HEADING),
        Block("Keep receipts.", ("Expenses",)),
    ]
    chunks = chunk_blocks(blocks)
    assert_offsets(blocks, chunks)
    assert [(chunk.heading_path, chunk.text) for chunk in chunks] == [
        (("Leave",), intro),
        (("Leave", "Carry-over"), details),
        (("Expenses",), "Keep receipts."),
    ]


def test_heading_without_content_keeps_its_words() -> None:
    blocks = [
        Block("Appendix A", ("Appendix A",), kind=HEADING),
        Block("Appendix B", ("Appendix B",), kind=HEADING),
        Block("Body of B.", ("Appendix B",)),
    ]
    chunks = chunk_blocks(blocks)
    assert [(chunk.heading_path, chunk.text) for chunk in chunks] == [
        (("Appendix A",), "Appendix A"),
        (("Appendix B",), "Body of B."),
    ]


def test_overlap_repeats_trailing_sentences_within_a_section() -> None:
    paragraphs = english_paragraphs(40, seed=9)
    blocks = [Block(p, ("Section",)) for p in paragraphs] + [
        Block("Other", ("Other",), kind=HEADING),
        Block(english_paragraphs(1, seed=10)[0], ("Other",)),
    ]
    chunks = chunk_blocks(blocks)
    assert_offsets(blocks, chunks)
    section = [chunk for chunk in chunks if chunk.heading_path == ("Section",)]
    assert len(section) >= 3
    for previous, current in pairwise(section):
        # The overlap starts inside the previous chunk, at a sentence start...
        assert previous.char_start < current.char_start < previous.char_end
        overlap = current.text[: previous.char_end - current.char_start]
        assert previous.text.endswith(overlap)
        assert overlap[0].isupper()
        # ...and stays small: about a tenth of the budget.
        assert latin_words(overlap) <= 30
    for chunk in chunks:
        assert text_units(chunk.text) <= 500
    other = next(chunk for chunk in chunks if chunk.heading_path == ("Other",))
    assert other.char_start > section[-1].char_end


def test_no_overlap_when_disabled() -> None:
    blocks = [Block(p) for p in english_paragraphs(40, seed=11)]
    chunks = chunk_blocks(blocks, overlap_ratio=0)
    assert all(a.char_end < b.char_start for a, b in pairwise(chunks))


def test_table_rows_stay_whole_and_grouped() -> None:
    rows = [f"Employee {i} | Team {i % 7} | {20 + i % 10} days" for i in range(120)]
    blocks = [Block("Leave table", ("Leave",), kind=HEADING)] + [
        Block(row, ("Leave",), kind=TABLE_ROW) for row in rows
    ]
    chunks = chunk_blocks(blocks, overlap_ratio=0)
    assert len(chunks) > 1
    pieces = [line for chunk in chunks for line in chunk.text.split("\n\n")]
    assert pieces == rows


def test_chunk_page_is_the_page_of_its_first_block() -> None:
    paragraphs = english_paragraphs(12, seed=12)
    blocks = [Block(p, page=1 + i // 3) for i, p in enumerate(paragraphs)]
    chunks = chunk_blocks(blocks, overlap_ratio=0)
    starts = [sum(len(b.text) + 2 for b in blocks[:i]) for i in range(len(blocks))]
    for chunk in chunks:
        first = starts.index(chunk.char_start)  # chunks start at a block here
        assert chunk.page == blocks[first].page
    assert chunks[0].page == 1
    assert chunks[-1].page > 1


def test_custom_budget() -> None:
    blocks = [Block(p) for p in english_paragraphs(30, seed=13)]
    chunks = chunk_blocks(blocks, max_cjk_chars=100, max_latin_words=60)
    assert max(latin_words(chunk.text) for chunk in chunks) <= 60


@pytest.mark.parametrize(
    "options",
    [{"max_cjk_chars": 0}, {"max_latin_words": 0}, {"overlap_ratio": 1.0}],
)
def test_invalid_options(options: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="must"):
        chunk_blocks([Block("text")], **options)  # type: ignore[arg-type]


def test_runs_chunked_apart_are_numbered_and_placed_as_one_text() -> None:
    first = [
        Block("Leave", ("Leave",), kind=HEADING),
        Block("Twenty-five days a year.", ("Leave",)),
    ]
    second = [
        Block("Travel", ("Travel",), kind=HEADING),
        Block("Keep every receipt.", ("Travel",)),
    ]
    runs = [(chunk_blocks(run), len(full_text(run))) for run in (first, [], second)]

    joined = join_chunk_runs(runs)

    assert joined == chunk_blocks(first + second)
    text = full_text(first + second)
    assert [text[c.char_start : c.char_end] for c in joined] == [c.text for c in joined]
    assert [c.ordinal for c in joined] == [0, 1]


def table_with_header(count: int = 150) -> list[Block]:
    header = "Employee | Team | Annual leave"
    rows = [f"Employee {i} | Team {i % 7} | {20 + i % 10} days" for i in range(count)]
    return [
        Block("Leave table", ("Leave",), kind=HEADING),
        Block(header, ("Leave",), kind=TABLE_ROW),
        *(Block(row, ("Leave",), kind=TABLE_ROW, table_header=header) for row in rows),
    ]


@pytest.mark.parametrize("overlap_ratio", [0, 0.1])
def test_a_chunk_starting_inside_a_table_repeats_its_header_row(overlap_ratio) -> None:
    blocks = table_with_header()
    header = blocks[1].text
    chunks = chunk_blocks(
        blocks, max_cjk_chars=100, max_latin_words=60, overlap_ratio=overlap_ratio
    )
    text = full_text(blocks)

    assert len(chunks) > 3
    assert chunks[0].text.startswith(header + "\n\n")
    for chunk in chunks:
        covered = text[chunk.char_start : chunk.char_end]
        # The offsets cover the chunk's own rows; the copy of the header comes first.
        assert chunk.text in (covered, f"{header}\n\n{covered}")
        assert chunk.text.startswith(header + "\n\n")
        assert text_units(chunk.text, max_cjk_chars=100, max_latin_words=60) <= 100
    if not overlap_ratio:
        rows = [line for c in chunks for line in c.text.split("\n\n") if line != header]
        assert rows == [block.text for block in blocks[2:]]


def test_a_header_row_that_leaves_no_room_is_not_repeated() -> None:
    header = " | ".join(f"column {i}" for i in range(40))
    blocks = [
        Block(header, kind=TABLE_ROW),
        *(
            Block(" | ".join(["value"] * 40), kind=TABLE_ROW, table_header=header)
            for _ in range(3)
        ),
    ]
    chunks = chunk_blocks(blocks, max_cjk_chars=150, max_latin_words=90)

    assert_offsets(blocks, chunks)
