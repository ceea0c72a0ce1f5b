"""PDF glyphs to paragraphs: where each glyph sits, then lines and paragraphs.

pdfminer's layout analysis builds an object per character and groups them all
geometrically. For plain text in reading order, content-stream order plus a few
geometric checks is enough, at a fraction of the cost.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pdfminer.pdfdevice import PDFTextDevice
from pdfminer.pdffont import PDFUnicodeNotDefined
from pdfminer.pdfinterp import PDFResourceManager
from pdfminer.pdfpage import PDFPage

from .textutil import CJK_FIRST, is_cjk

if TYPE_CHECKING:
    from pdfminer.pdfcolor import PDFColorSpace
    from pdfminer.pdfdevice import PDFTextSeq
    from pdfminer.pdffont import PDFFont
    from pdfminer.pdfinterp import PDFGraphicState
    from pdfminer.utils import Matrix, Point

# A glyph as (text, direction, along_start, along_end, across, size): coordinates are
# rotated so that text runs towards +along and the next line sits at a lower `across`.
Glyph = tuple[str, int, float, float, float, float]

_LINE_TOLERANCE = 0.5  # baseline shift, in font sizes, still on the same line
_WORD_GAP = 0.1  # gap, in font sizes, read as a space (pdfminer's word_margin)
_CJK_WORD_GAP = 1.0  # CJK text is often letter-spaced; only a wide gap is a space
_MAX_LINE_STEP = 1.6  # baseline step, in font sizes, that still continues a paragraph
_MAX_SIZE_RATIO = 1.25  # a bigger change of font size starts a new paragraph
_MAX_WORD_GAP = 1.0  # a wider gap on one baseline separates columns or cells
_OPEN_PARAGRAPHS = 16  # paragraphs a new line may still join


class GlyphCollector(PDFTextDevice):
    """Records each glyph's text and position in content-stream order, page by page
    (`glyphs` holds the last page's)."""

    def __init__(self, rsrcmgr: PDFResourceManager) -> None:
        super().__init__(rsrcmgr)
        self.glyphs: list[Glyph] = []

    def begin_page(self, page: PDFPage, ctm: Matrix) -> None:
        self.glyphs = []

    def render_string_horizontal(
        self,
        seq: PDFTextSeq,
        matrix: Matrix,
        pos: Point,
        font: PDFFont,
        fontsize: float,
        scaling: float,
        charspace: float,
        wordspace: float,
        rise: float,
        dxscale: float,
        ncs: PDFColorSpace,
        graphicstate: PDFGraphicState,
    ) -> Point:
        """pdfminer's loop with `render_char` inlined: most text is horizontal, and
        a call, a matrix and a font-size computation per glyph added up to a fifth
        of the parse. Positions and advances are computed exactly as there."""
        x, y = pos
        a, b, c, d, e, f = matrix
        size = fontsize * math.hypot(c, d) or 1.0
        to_unichr, char_width, glyphs = font.to_unichr, font.char_width, self.glyphs
        needcharspace = False
        for obj in seq:
            if isinstance(obj, (int, float)):
                x -= obj * dxscale
                needcharspace = True
                continue
            if not isinstance(obj, bytes):
                continue  # pdfminer logs and skips it too
            for cid in font.decode(obj):
                if needcharspace:
                    x += charspace
                try:
                    text = to_unichr(cid)
                except PDFUnicodeNotDefined:
                    text = ""
                advance = char_width(cid) * fontsize * scaling
                if text:
                    glyphs.append(
                        _horizontal_glyph(
                            text,
                            x * a + y * c + e,
                            x * b + y * d + f,
                            (a * advance, b * advance) if advance else (a, b),
                            size,
                        )
                    )
                x += advance
                if cid == 32 and wordspace:
                    x += wordspace
                needcharspace = True
        return (x, y)

    def render_char(
        self,
        matrix: Matrix,
        font: PDFFont,
        fontsize: float,
        scaling: float,
        rise: float,
        cid: int,
        ncs: PDFColorSpace,
        graphicstate: PDFGraphicState,
    ) -> float:
        # Vertical fonts only (horizontal text goes through the loop above).
        try:
            text = font.to_unichr(cid)
        except PDFUnicodeNotDefined:
            text = ""  # pdfminer would print "(cid:N)": noise for search
        advance = font.char_width(cid) * fontsize * scaling
        if text:
            a, b, c, d, e, f = matrix
            if font.is_vertical():
                delta = (c * advance, d * advance) if advance else (-c, -d)
                size = fontsize * math.hypot(a, b)
            else:
                delta = (a * advance, b * advance) if advance else (a, b)
                size = fontsize * math.hypot(c, d)
            self.glyphs.append(_horizontal_glyph(text, e, f, delta, size or 1.0))
        return advance


def _horizontal_glyph(
    text: str, e: float, f: float, delta: tuple[float, float], size: float
) -> Glyph:
    """The glyph at (e, f) advancing by `delta`, rotated to run towards +along."""
    dx, dy = delta
    if abs(dx) >= abs(dy):
        if dx >= 0:
            return (text, 0, e, e + dx, f, size)
        return (text, 2, -e, -e - dx, -f, size)
    if dy >= 0:
        return (text, 1, f, f + dy, -e, size)
    return (text, 3, -f, -f - dy, e, size)


def _to_page(direction: int, along: float, across: float) -> tuple[float, float]:
    """Undo the rotation applied by `GlyphCollector.render_char`."""
    if direction == 0:
        return along, across
    if direction == 1:
        return -across, along
    if direction == 2:
        return -along, -across
    return across, -along


@dataclass(slots=True)
class Line:
    """A run of glyphs on one baseline, in the rotated frame of `Glyph`."""

    direction: int
    start: float
    end: float
    across: float
    size: float
    parts: list[str]

    @property
    def text(self) -> str:
        return "".join(self.parts)


def glyph_paragraphs(glyphs: list[Glyph]) -> list[list[str]]:
    """The text of each line of each paragraph of `glyph_lines`."""
    return [[line.text for line in lines] for lines in glyph_lines(glyphs)]


def glyph_lines(glyphs: Sequence[Glyph]) -> list[list[Line]]:
    """Group glyphs into lines, and lines into paragraphs.

    Lines are built in content-stream order. A new line joins the most recently
    extended paragraph whose last line sits just above it, so columns drawn row by
    row (forms, newsletters) still come out one paragraph at a time. Glyphs of
    the compiled PDF reader (`pdf_native.NativeGlyphs`) are placed by it, the
    same way.
    """
    placed_by_reader = getattr(glyphs, "paragraph_lines", None)
    if placed_by_reader is not None and (found := placed_by_reader()) is not None:
        return found
    return _python_lines(glyphs)


def _python_lines(glyphs: Sequence[Glyph]) -> list[list[Line]]:
    paragraphs: list[list[Line]] = []
    recent: list[int] = []  # paragraph indexes, most recently extended last
    line: Line | None = None
    home = -1
    pending_space = False
    # The line at hand, kept in locals while glyphs extend it (this loop runs
    # once per glyph) and written back before the next line is placed, which
    # reads it.
    line_direction = -1
    line_end = line_across = line_size = 0.0
    parts: list[str] = []
    last = ""  # its last character
    for text, direction, start, end, across, size in glyphs:
        if text.isspace():
            pending_space = True
            continue
        # Same baseline and no column gap: the glyph continues the line.
        if direction == line_direction:
            scale = size if size > line_size else line_size  # max(), without a call
            if (
                abs(across - line_across) <= _LINE_TOLERANCE * scale
                and line_end - scale <= start <= line_end + _MAX_WORD_GAP * scale
            ):
                gap = start - line_end
                first = text[0]
                if (
                    last >= CJK_FIRST
                    and first >= CJK_FIRST
                    and is_cjk(last)
                    and is_cjk(first)
                ):
                    if gap > _CJK_WORD_GAP * scale:
                        parts.append(" ")
                elif pending_space or gap > _WORD_GAP * scale:
                    parts.append(" ")
                parts.append(text)
                last = text[-1]
                line_end = end if end > line_end else line_end
                line_across = across
                line_size = scale
                pending_space = False
                continue
        if line is not None:
            line.end, line.across, line.size = line_end, line_across, line_size
        parts = [text]
        new = Line(direction, start, end, across, size, parts)
        home = _place_line(new, line, home, paragraphs, recent)
        line = new
        line_direction, line_end, line_across, line_size = direction, end, across, size
        last = text[-1]
        pending_space = False
    if line is not None:
        line.end, line.across, line.size = line_end, line_across, line_size
    return paragraphs


def _place_line(
    line: Line,
    previous: Line | None,
    previous_home: int,
    paragraphs: list[list[Line]],
    recent: list[int],
) -> int:
    """Add `line` to the paragraph it continues, or to a new one; return its index."""
    home = -1
    if previous is not None and previous.direction != line.direction:
        # Vertical CJK set with a horizontal font draws punctuation rotated: a glyph
        # right next to the previous one continues its paragraph.
        x0, y0 = _to_page(previous.direction, previous.end, previous.across)
        x1, y1 = _to_page(line.direction, line.start, line.across)
        scale = max(line.size, previous.size)
        if math.hypot(x1 - x0, y1 - y0) <= _MAX_LINE_STEP * scale:
            home = previous_home
    if home < 0:
        across, size, start = line.across, line.size, line.start
        for index in reversed(recent[-_OPEN_PARAGRAPHS:]):
            above = paragraphs[index][-1]
            # Not just above: cannot go on here (checked first, it is most).
            step = above.across - across
            above_size = above.size
            scale = above_size if above_size > size else size
            if step <= 0 or step > _MAX_LINE_STEP * scale:
                continue
            # Whether `line` is the next line of `above`'s paragraph, just below:
            # close enough, starting within it, of a like size.
            smaller = size if size < above_size else above_size
            if (
                above.direction == line.direction
                and _LINE_TOLERANCE * scale < step
                and above.start - 0.5 * (above.end - above.start) <= start <= above.end
                and scale <= _MAX_SIZE_RATIO * smaller
            ):
                home = index
                break
    if home < 0:
        home = len(paragraphs)
        paragraphs.append([line])
    else:
        paragraphs[home].append(line)
        # `home` is among the last _OPEN_PARAGRAPHS or the previous line's: found
        # from the end (remove() searched from the start, through every one).
        at = len(recent) - 1
        while recent[at] != home:
            at -= 1
        del recent[at]
    recent.append(home)
    return home
