"""From an engine's text boxes to lines and paragraphs in reading order."""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from core.text import UNSPACED

_CJK_EDGE = re.compile(f"[{UNSPACED}]")


@dataclass(frozen=True)
class OcrLine:
    """One line of text; `box` is (left, top, right, bottom) in image pixels."""

    text: str
    confidence: float
    box: tuple[int, int, int, int]
    paragraph: int


@dataclass(frozen=True)
class OcrPage:
    lines: tuple[OcrLine, ...]
    width: int
    height: int
    seconds: float

    @property
    def confidence(self) -> float:
        """Mean recognition confidence (0..1), weighted by characters; 0 if empty."""
        weights = [len(line.text) for line in self.lines]
        if not sum(weights):
            return 0.0
        total = sum(
            w * line.confidence for w, line in zip(weights, self.lines, strict=True)
        )
        return total / sum(weights)

    @property
    def paragraphs(self) -> list[str]:
        """Each paragraph's lines joined: Chinese without a space, English with one."""
        grouped: dict[int, list[str]] = {}
        for line in self.lines:
            grouped.setdefault(line.paragraph, []).append(line.text)
        return [_join_pieces(texts) for texts in grouped.values()]

    @property
    def text(self) -> str:
        return "\n\n".join(self.paragraphs)


@dataclass(frozen=True)
class TextBox:
    """What an engine found: a box (left, top, right, bottom), its text and score."""

    left: float
    top: float
    right: float
    bottom: float
    text: str
    score: float

    @property
    def height(self) -> float:
        return self.bottom - self.top

    @property
    def centre(self) -> tuple[float, float]:
        return (self.left + self.right) / 2, (self.top + self.bottom) / 2

    def moved(self, dx: float, dy: float) -> TextBox:
        return replace(
            self,
            left=self.left + dx,
            right=self.right + dx,
            top=self.top + dy,
            bottom=self.bottom + dy,
        )


def text_box(points: Any, text: str, score: float, scale: float) -> TextBox:
    xs = [point[0] / scale for point in points]
    ys = [point[1] / scale for point in points]
    return TextBox(min(xs), min(ys), max(xs), max(ys), text, float(score))


def lines_in_reading_order(boxes: Sequence[TextBox]) -> list[OcrLine]:
    """Group text boxes into lines and paragraphs, in reading order.

    Boxes that share a row and are at most a word gap apart make one line; lines
    stacked closely with overlapping spans make a block (a column of text is one
    block, its neighbour another); an indented line starts a new paragraph in its
    block. Blocks are read one at a time: of those with nothing left above them,
    the leftmost first, so a title comes before the columns under it and the left
    column before the right one.
    """
    boxes = [box for box in boxes if box.text.strip()]
    if not boxes:
        return []
    em = statistics.median(box.height for box in boxes)
    lines: list[OcrLine] = []
    paragraph = -1
    for block in _blocks_in_order(_segments(boxes, em), em):
        for index, line in enumerate(block):
            # A first-line indent; a bigger step is text wrapping round a picture.
            step = line.left - block[index - 1].left if index else 0
            if index == 0 or _INDENT_EMS * em < step < _WRAP_EMS * em:
                paragraph += 1
            lines.append(
                OcrLine(
                    text=_join_pieces([box.text.strip() for box in line.boxes]),
                    confidence=_char_weighted_score(line.boxes),
                    box=(
                        round(line.left),
                        round(line.top),
                        round(line.right),
                        round(line.bottom),
                    ),
                    paragraph=paragraph,
                )
            )
    return lines


_WORD_GAP_EMS = 0.8  # a wider gap in a row separates columns (or table cells)
_LINE_GAP_EMS = 1.0  # a wider gap between lines separates blocks
_INDENT_EMS = 0.8
_WRAP_EMS = 4.0


@dataclass(frozen=True)
class _Segment:
    boxes: tuple[TextBox, ...]

    @property
    def left(self) -> float:
        return min(box.left for box in self.boxes)

    @property
    def right(self) -> float:
        return max(box.right for box in self.boxes)

    @property
    def top(self) -> float:
        return min(box.top for box in self.boxes)

    @property
    def bottom(self) -> float:
        return max(box.bottom for box in self.boxes)


def _segments(boxes: list[TextBox], em: float) -> list[_Segment]:
    """Rows of boxes, cut where the gap between two boxes is wider than a word's."""
    segments = []
    for row in _rows(boxes):
        current = [row[0]]
        for box in row[1:]:
            if box.left - max(b.right for b in current) > _WORD_GAP_EMS * em:
                segments.append(_Segment(tuple(current)))
                current = []
            current.append(box)
        segments.append(_Segment(tuple(current)))
    return segments


def _blocks_in_order(segments: list[_Segment], em: float) -> list[list[_Segment]]:
    blocks: list[list[_Segment]] = []
    open_blocks: list[list[_Segment]] = []  # those no later line has covered
    for segment in sorted(segments, key=lambda s: s.top):
        below = [block for block in open_blocks if _overlap(segment, block[-1]) > 0]
        # A line under two blocks (a heading under two columns) starts a new block.
        if (
            len(below) == 1
            and segment.top - below[0][-1].bottom <= _LINE_GAP_EMS * em
            and _overlap(segment, below[0][-1])
            >= 0.5 * min(_width(segment), _width(below[0][-1]))
        ):
            below[0].append(segment)
            continue
        open_blocks = [block for block in open_blocks if block not in below]
        blocks.append([segment])
        open_blocks.append(blocks[-1])
    ordered: list[list[_Segment]] = []
    remaining = blocks
    while remaining:
        free = [
            block
            for block in remaining
            if not any(
                other is not block
                and other[-1].bottom <= block[0].top + 0.5 * em
                and _span_overlap(other, block) > 0
                for other in remaining
            )
        ] or remaining
        chosen = min(free, key=lambda block: (min(s.left for s in block), block[0].top))
        ordered.append(chosen)
        remaining = [block for block in remaining if block is not chosen]
    return ordered


def _width(segment: _Segment) -> float:
    return segment.right - segment.left


def _overlap(a: _Segment, b: _Segment) -> float:
    return min(a.right, b.right) - max(a.left, b.left)


def _span_overlap(a: list[_Segment], b: list[_Segment]) -> float:
    return min(max(s.right for s in a), max(s.right for s in b)) - max(
        min(s.left for s in a), min(s.left for s in b)
    )


def _rows(boxes: list[TextBox]) -> list[list[TextBox]]:
    """Boxes that overlap vertically by half the smaller height share a row."""
    rows: list[list[TextBox]] = []
    for box in sorted(boxes, key=lambda b: (b.top + b.bottom) / 2):
        row = rows[-1] if rows else None
        if row is not None:
            top = min(b.top for b in row)
            bottom = max(b.bottom for b in row)
            overlap = min(bottom, box.bottom) - max(top, box.top)
            if overlap >= 0.5 * min(box.height, bottom - top):
                row.append(box)
                continue
        rows.append([box])
    return [sorted(row, key=lambda b: b.left) for row in rows]


def _join_pieces(pieces: list[str]) -> str:
    text = ""
    for piece in pieces:
        if not piece:
            continue
        if text and not (_CJK_EDGE.match(text[-1]) or _CJK_EDGE.match(piece[0])):
            text += " "
        text += piece
    return text


def _char_weighted_score(boxes: list[TextBox]) -> float:
    weights = [max(1, len(box.text)) for box in boxes]
    return sum(w * box.score for w, box in zip(weights, boxes, strict=True)) / sum(
        weights
    )
