"""The passage diff a reviewer reads: pure functions, no database."""

from __future__ import annotations

import time

from ingestion.blocks import Block
from ingestion.chunking import chunk_blocks
from review.passage_diff import (
    Passage,
    Segment,
    StoredChunk,
    diff_passages,
    inline_diff,
    passages_from_chunks,
    similarity,
)


def passages(*texts: str) -> list[Passage]:
    return [Passage(text, ("Policy",), page) for page, text in enumerate(texts, 1)]


def kinds(diff) -> list[str]:
    return [change.kind.value for change in diff.changes]


def stored(chunks) -> list[StoredChunk]:
    return [
        StoredChunk(c.text, c.heading_path, c.page, c.char_start, c.char_end)
        for c in chunks
    ]


def test_identical_versions_have_no_changes():
    old = passages("Annual leave is 25 days.", "Sick leave is paid.")
    diff = diff_passages(old, list(old))

    assert diff.changes == []
    assert (diff.unchanged, diff.old_total, diff.new_total) == (2, 2, 2)


def test_whitespace_alone_is_not_a_change():
    diff = diff_passages(
        passages("Annual  leave\nis 25 days."), passages("Annual leave is 25 days.")
    )

    assert diff.changes == []
    assert diff.unchanged == 1


def test_added_removed_and_changed_passages_in_the_new_order():
    old = passages(
        "Annual leave is 25 days per year for every full-time employee.",
        "Parking is free for all staff.",
        "Expenses are reimbursed within 30 days.",
    )
    new = passages(
        "Annual leave is 28 days per year for every full-time employee.",
        "Expenses are reimbursed within 30 days.",
        "Remote work needs a manager's approval.",
    )

    diff = diff_passages(old, new)

    assert kinds(diff) == ["changed", "removed", "added"]
    assert (diff.added, diff.removed, diff.changed, diff.unchanged) == (1, 1, 1, 1)
    changed, removed, added = diff.changes
    assert changed.old.text.startswith("Annual leave is 25")
    assert changed.new.text.startswith("Annual leave is 28")
    assert changed.similarity >= 0.8
    assert removed.new is None
    assert removed.where.text == "Parking is free for all staff."
    assert removed.where.page == 2
    assert added.old is None
    assert added.where == Passage(
        "Remote work needs a manager's approval.", ("Policy",), 3
    )


def test_dissimilar_replacement_is_a_removal_and_an_addition():
    diff = diff_passages(
        passages("Parking is free for all staff."),
        passages("Remote work needs a manager's approval."),
    )

    assert kinds(diff) == ["removed", "added"]


def test_changed_passage_has_a_word_level_inline_diff():
    diff = diff_passages(
        passages("Annual leave is 25 days for every employee."),
        passages("Annual leave is 28 days for every employee."),
    )

    assert diff.changes[0].segments == [
        Segment("equal", "Annual leave is "),
        Segment("delete", "25"),
        Segment("insert", "28"),
        Segment("equal", " days for every employee."),
    ]


def test_chinese_is_diffed_character_by_character():
    old = "员工每年享有三周带薪年假，具体天数按工龄计算。"
    new = "员工每年享有四周带薪年假，具体天数按工龄计算。"

    diff = diff_passages(passages(old), passages(new))

    assert kinds(diff) == ["changed"]
    assert diff.changes[0].segments == [
        Segment("equal", "员工每年享有"),
        Segment("delete", "三"),
        Segment("insert", "四"),
        Segment("equal", "周带薪年假，具体天数按工龄计算。"),
    ]
    # Whole sentences differ, characters mostly do not.
    assert similarity(old, new) > 0.85


def test_inline_diff_rebuilds_both_texts():
    old = "Reimbursement: 差旅费用 within 30 days, see § 4."
    new = "Reimbursement: 差旅及住宿费用 within 14 days; see § 5."

    segments = inline_diff(old, new)

    assert "".join(s.text for s in segments if s.op != "insert") == old
    assert "".join(s.text for s in segments if s.op != "delete") == new


def test_a_reordered_passage_is_moved_not_removed_and_added():
    old = passages("First rule.", "Second rule.", "Third rule.", "Fourth rule.")
    new = passages("First rule.", "Third rule.", "Fourth rule.", "Second rule.")

    diff = diff_passages(old, new)

    assert kinds(diff) == ["moved"]
    moved = diff.changes[0]
    assert (moved.old.page, moved.new.page) == (2, 4)
    assert diff.unchanged == 3


def test_empty_versions():
    assert diff_passages([], []).changes == []
    everything_new = diff_passages([], passages("One.", "Two."))
    assert kinds(everything_new) == ["added", "added"]
    everything_gone = diff_passages(passages("One.", "Two."), [])
    assert kinds(everything_gone) == ["removed", "removed"]
    assert everything_gone.removed == 2


def test_passages_are_the_blocks_whatever_the_chunk_boundaries():
    long_paragraph = " ".join(
        f"Rule {i} says something about leave." for i in range(60)
    )
    blocks = [
        Block("Intro one.", ("Leave",), page=1),
        Block("Intro two.", ("Leave",), page=1),
        Block(long_paragraph, ("Leave", "Rules"), page=2),
        Block(
            "".join(f"第{i}条规定员工享有带薪年假。" for i in range(40)), ("年假",), 3
        ),
    ]
    small = chunk_blocks(
        blocks, max_cjk_chars=120, max_latin_words=40, overlap_ratio=0.3
    )
    large = chunk_blocks(blocks, max_cjk_chars=500, max_latin_words=300)
    assert len(small) > len(large)

    from_small = passages_from_chunks(stored(small))
    from_large = passages_from_chunks(stored(large))

    assert [p.text for p in from_small] == [b.text for b in blocks]
    assert from_small == from_large
    assert (from_small[2].heading_path, from_small[2].page) == (("Leave", "Rules"), 2)
    assert from_small[3].heading_path == ("年假",)
    assert diff_passages(from_large, from_small).changes == []


def test_chunks_without_usable_offsets_are_taken_whole():
    chunks = [
        StoredChunk("One.", (), None, 0, 4),
        StoredChunk("Two.", (), None, 0, 4),
    ]

    assert [p.text for p in passages_from_chunks(chunks)] == ["One.", "Two."]


def test_long_runs_of_changes_stay_fast():
    old = [
        Passage(f"Clause {i}: the limit is {i} days for staff.") for i in range(5000)
    ]
    new = [
        Passage(f"Clause {i}: the limit is {i + 1} days for staff.")
        for i in range(5000)
    ]

    started = time.perf_counter()
    diff = diff_passages(old, new)
    elapsed = time.perf_counter() - started

    assert diff.changed == 5000
    assert elapsed < 10


def test_copies_of_a_table_header_in_later_chunks_are_not_passages():
    header = "Employee | Team | Annual leave"
    rows = [f"Employee {i} | Team {i % 7} | {20 + i % 10} days" for i in range(60)]
    blocks = [
        Block(header, ("Leave",), kind="table_row"),
        *(
            Block(row, ("Leave",), kind="table_row", table_header=header)
            for row in rows
        ),
    ]
    chunks = chunk_blocks(blocks, max_cjk_chars=100, max_latin_words=60)
    assert sum(chunk.text.startswith(header) for chunk in chunks) > 2

    assert [p.text for p in passages_from_chunks(stored(chunks))] == [header, *rows]
