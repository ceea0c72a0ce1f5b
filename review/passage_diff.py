"""What changed between two versions of a document, passage by passage (no Django).

A *passage* is one block of the original (a paragraph, list item or table row) with
its heading path and page. `passages_from_chunks` rebuilds them from stored chunks:
the overlap a chunk repeats from the one before is cut off, a block cut across chunks
is joined again and a chunk holding several blocks is split at the blank lines
between them. So a change of chunk boundaries is not a change of text.

`diff_passages` aligns the two lists with `difflib.SequenceMatcher` over passage
texts (whitespace collapsed). Inside a run the alignment could not match, a removed
and an added passage that are similar enough are paired as `changed`; an added
passage whose text was removed elsewhere is `moved`. Similarity and the inline diff
read CJK text character by character and other text word by word, since Chinese
puts no spaces between words.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from enum import StrEnum
from functools import cached_property
from itertools import pairwise

from core.text import UNSPACED

# One character of a script without spaces (as the chunker counts them), a word,
# a run of whitespace or one other character.
_TOKEN = re.compile(rf"[{UNSPACED}]|[^\W{UNSPACED}]+|\s+|[^\w\s]")
_BLOCK_BREAK = re.compile(r"\n[ \t]*\n\s*")
_SPACES = re.compile(r"\s+")

# A removed and an added passage at least this similar (see `similarity`) are one
# passage `changed`, not one removed and one added.
SIMILARITY_THRESHOLD = 0.5
# Longer passages are shown whole, deleted and inserted: aligning them could take
# seconds.
_MAX_INLINE_TOKENS = 20_000
# How far ahead in the added passages a removed one looks for its new version.
_PAIRING_WINDOW = 8


class ChangeKind(StrEnum):
    ADDED = "added"
    """Only in the new version."""
    REMOVED = "removed"
    """Only in the old version."""
    CHANGED = "changed"
    """In both, with different text."""
    MOVED = "moved"
    """The same text, somewhere else."""


@dataclass(frozen=True)
class Passage:
    text: str
    heading_path: tuple[str, ...] = ()
    page: int | None = None


@dataclass(frozen=True)
class StoredChunk:
    """What `passages_from_chunks` needs of a chunk row, in ordinal order."""

    text: str
    heading_path: tuple[str, ...]
    page: int | None
    char_start: int
    char_end: int


@dataclass(frozen=True)
class Segment:
    """A piece of an inline diff: `equal`, `delete` (old only) or `insert`."""

    op: str
    text: str


@dataclass(frozen=True)
class PassageChange:
    kind: ChangeKind
    old: Passage | None
    new: Passage | None
    similarity: float | None = None

    @property
    def where(self) -> Passage:
        """The passage whose page and heading locate the change."""
        return self.new or self.old  # type: ignore[return-value]

    @cached_property
    def segments(self) -> list[Segment]:
        """The inline diff of a changed passage; empty for other kinds."""
        if self.kind != ChangeKind.CHANGED or self.old is None or self.new is None:
            return []
        return inline_diff(self.old.text, self.new.text)


@dataclass(frozen=True)
class PassageDiff:
    changes: list[PassageChange] = field(default_factory=list)
    unchanged: int = 0
    old_total: int = 0
    new_total: int = 0

    def count(self, kind: ChangeKind) -> int:
        return sum(1 for change in self.changes if change.kind == kind)

    @property
    def added(self) -> int:
        return self.count(ChangeKind.ADDED)

    @property
    def removed(self) -> int:
        return self.count(ChangeKind.REMOVED)

    @property
    def changed(self) -> int:
        return self.count(ChangeKind.CHANGED)

    @property
    def moved(self) -> int:
        return self.count(ChangeKind.MOVED)


def passages_from_chunks(chunks: Iterable[StoredChunk]) -> list[Passage]:
    """The blocks the chunks were cut from, each once, in document order."""
    passages: list[Passage] = []
    previous: StoredChunk | None = None
    for chunk in chunks:
        text, joiner = _new_text(previous, chunk)
        pieces = _BLOCK_BREAK.split(text)
        if joiner is not None and passages and pieces[0].strip():
            last = passages[-1]
            joined = (last.text + joiner + pieces[0]).rstrip()
            passages[-1] = Passage(joined, last.heading_path, last.page)
            pieces = pieces[1:]
        passages.extend(
            Passage(piece.strip(), chunk.heading_path, chunk.page)
            for piece in pieces
            if piece.strip()
        )
        previous = chunk
    return passages


def _new_text(
    previous: StoredChunk | None, chunk: StoredChunk
) -> tuple[str, str | None]:
    """The part of `chunk` not in `previous`, and what joins it to the block the
    previous chunk ended in (None: it starts a block).

    Offsets index the document's full text, where blocks are joined by a blank line:
    a chunk starting right where the previous one ended, or one character later (the
    space cut between two words), goes on with the same block. Offsets that do not
    increase say nothing, and the chunk is taken whole. The copy of a table's header
    row a chunk may start with (before the text its offsets cover) is left out: the
    header row is a block of its own further up.
    """
    covered = chunk.char_end - chunk.char_start
    text = chunk.text[max(len(chunk.text) - covered, 0) :]
    if (
        previous is None
        or previous.heading_path != chunk.heading_path
        or chunk.char_start <= previous.char_start
    ):
        return text, None
    gap = chunk.char_start - previous.char_end
    if gap < 0:
        rest = text[-gap:]
        return rest, None if _BLOCK_BREAK.match(rest) else ""
    return text, {0: "", 1: " "}.get(gap)


def tokens(text: str) -> list[str]:
    """CJK characters one by one, other words whole, whitespace runs and marks."""
    return _TOKEN.findall(text)


def similarity(old: str, new: str) -> float:
    """How much two texts share, 0 to 1: the Dice coefficient of their sets of
    adjacent token pairs (whitespace left out). Linear in their length, unlike an
    alignment, so pairing many long passages stays cheap."""
    return _dice(_shingles(old), _shingles(new))


def _shingles(text: str) -> frozenset:
    words = [token for token in tokens(text) if not token.isspace()]
    if len(words) < 2:
        return frozenset(words)
    return frozenset(pairwise(words))


def _dice(old: frozenset, new: frozenset) -> float:
    if not old and not new:
        return 1.0
    return 2 * len(old & new) / (len(old) + len(new))


def inline_diff(old: str, new: str) -> list[Segment]:
    """`old` turned into `new` as equal, deleted and inserted pieces."""
    old_tokens, new_tokens = tokens(old), tokens(new)
    if max(len(old_tokens), len(new_tokens)) > _MAX_INLINE_TOKENS:
        return [Segment("delete", old), Segment("insert", new)]
    matcher = SequenceMatcher(None, old_tokens, new_tokens, autojunk=False)
    segments: list[Segment] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            _append(segments, "equal", "".join(old_tokens[i1:i2]))
            continue
        if i2 > i1:
            _append(segments, "delete", "".join(old_tokens[i1:i2]))
        if j2 > j1:
            _append(segments, "insert", "".join(new_tokens[j1:j2]))
    return segments


def _append(segments: list[Segment], op: str, text: str) -> None:
    if segments and segments[-1].op == op:
        segments[-1] = Segment(op, segments[-1].text + text)
    else:
        segments.append(Segment(op, text))


def diff_passages(old: Sequence[Passage], new: Sequence[Passage]) -> PassageDiff:
    """Changes from `old` to `new` in the new version's order (removed ones where
    they were), and how many passages stayed as they were."""
    old_keys, new_keys = _keys(old, new)
    matcher = SequenceMatcher(None, old_keys, new_keys, autojunk=False)
    changes: list[PassageChange] = []
    unchanged = 0
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            unchanged += i2 - i1
        else:
            changes.extend(_pair(old[i1:i2], new[j1:j2]))
    return PassageDiff(
        changes=_find_moves(changes),
        unchanged=unchanged,
        old_total=len(old),
        new_total=len(new),
    )


def _keys(old: Sequence[Passage], new: Sequence[Passage]) -> tuple[list, list]:
    """Each passage's text, whitespace collapsed, as a small int (cheap to compare)."""
    ids: dict[str, int] = {}

    def key(passage: Passage) -> int:
        return ids.setdefault(_normal(passage.text), len(ids))

    return [key(p) for p in old], [key(p) for p in new]


def _normal(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


def _pair(old: Sequence[Passage], new: Sequence[Passage]) -> list[PassageChange]:
    """A run of removed and added passages, with similar ones paired in order.

    Each removed passage looks for its best match among the next few added ones,
    so the work grows with the run's length, not with its square.
    """
    changes: list[PassageChange] = []
    new_shingles = [_shingles(passage.text) for passage in new]
    next_new = 0
    for removed in old:
        removed_shingles = _shingles(removed.text)
        best, best_score = None, SIMILARITY_THRESHOLD
        for index in range(next_new, min(len(new), next_new + _PAIRING_WINDOW)):
            score = _dice(removed_shingles, new_shingles[index])
            if score >= best_score:
                best, best_score = index, score
                if score == 1.0:
                    break
        if best is None:
            changes.append(PassageChange(ChangeKind.REMOVED, removed, None))
            continue
        changes.extend(
            PassageChange(ChangeKind.ADDED, None, added) for added in new[next_new:best]
        )
        changes.append(
            PassageChange(
                ChangeKind.CHANGED, removed, new[best], similarity=round(best_score, 3)
            )
        )
        next_new = best + 1
    changes.extend(
        PassageChange(ChangeKind.ADDED, None, added) for added in new[next_new:]
    )
    return changes


def _find_moves(changes: list[PassageChange]) -> list[PassageChange]:
    """An added passage whose exact text was removed elsewhere is `moved` (and the
    removal is dropped): a reordering is not two changes."""
    removed: dict[str, list[int]] = {}
    for index, change in enumerate(changes):
        if change.kind == ChangeKind.REMOVED:
            removed.setdefault(_normal(change.old.text), []).append(index)
    if not removed:
        return changes
    dropped: set[int] = set()
    result: list[PassageChange | None] = list(changes)
    for index, change in enumerate(changes):
        if change.kind != ChangeKind.ADDED:
            continue
        candidates = removed.get(_normal(change.new.text))
        if candidates:
            origin = candidates.pop(0)
            dropped.add(origin)
            result[index] = PassageChange(
                ChangeKind.MOVED, changes[origin].old, change.new
            )
    return [c for i, c in enumerate(result) if i not in dropped and c is not None]
