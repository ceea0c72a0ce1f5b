"""PDF pages through pdfium: their words with positions, their rulings, and how
well pdfium read their text.

pdfium's text page (C++) interprets the page, maps glyphs to Unicode and inserts
the spaces and line breaks between words, which pdfminer.six does in Python at
a tenth of the speed. Its text, split at whitespace, gives the words; only the
first and last character of each word are asked where they sit (a few calls a
word instead of several a character), and each word becomes one glyph of
`pdf_layout` (`Glyph`), so the layout, column and table code reads pdfium's
pages as it reads pdfminer's. The loops that run once a word or a path segment
are done by the compiled reader (`pdf_native.py`) where it is built; the Python
loops here are its fallback and its reference, with the same results. They call
pdfium through prototypes of our own that take plain addresses, without
argument types, with ready pointers (`_untyped`).
Figures: docs/benchmarks.md, "PDF parsing".
"""

from __future__ import annotations

import ctypes
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pypdfium2
import pypdfium2.raw as pdfium_c
from pypdfium2_raw.bindings import _libs

from .pdf_layout import Glyph
from .pdf_native import NativeGlyphs, NativePages, Runs
from .pdf_tables import Box, add_ruling, ruling_limit_reached

_VOID, _INT, _DOUBLE = ctypes.c_void_p, ctypes.c_int, ctypes.c_double
_LIBRARY = _libs["pdfium"]


def _function(name: str, result: type | None, *arguments: type) -> ctypes._CFuncPtr:
    function = _LIBRARY[name]  # a new function object: pypdfium2's stays as it is
    function.argtypes = list(arguments)
    function.restype = result
    return function


_count_chars = _function("FPDFText_CountChars", _INT, _VOID)
_get_text = _function("FPDFText_GetText", _INT, _VOID, _INT, _INT, _VOID)
_is_hyphen = _function("FPDFText_IsHyphen", _INT, _VOID, _INT)
_map_error = _function("FPDFText_HasUnicodeMapError", _INT, _VOID, _INT)
_char_origin = _function("FPDFText_GetCharOrigin", _INT, _VOID, _INT, _VOID, _VOID)
_char_box = _function("FPDFText_GetCharBox", _INT, _VOID, _INT, *[_VOID] * 4)
_loose_box = _function("FPDFText_GetLooseCharBox", _INT, _VOID, _INT, _VOID)
_count_objects = _function("FPDFPage_CountObjects", _INT, _VOID)
_get_form_object = _function("FPDFFormObj_GetObject", _VOID, _VOID, ctypes.c_ulong)


# Functions without argument types, for the loops that run once a word or a path
# segment: every pointer is passed as a ready `c_void_p` (or `_Handle`) and every
# index as a Python int (a C int), which ctypes passes without converting them,
# a third faster a call. Nothing checks the arguments: a bare int passed for a
# pointer would be cut to 32 bits.


class _Handle(ctypes.c_void_p):
    """A returned pointer kept as a pointer (a `c_void_p` would become an int),
    ready to be passed on."""


def _untyped(name: str, result: type) -> ctypes._CFuncPtr:
    function = _LIBRARY[name]
    function.restype = result
    return function


def _pointers(array: ctypes.Array, count: int) -> list[ctypes.c_void_p]:
    """Pointers to the first `count` items of `array`."""
    at, size = ctypes.addressof(array), ctypes.sizeof(array._type_)
    return [ctypes.c_void_p(at + size * index) for index in range(count)]


_fast_unicode = _untyped("FPDFText_GetUnicode", ctypes.c_uint)
_fast_text_object = _untyped("FPDFText_GetTextObject", _VOID)
_fast_origin = _untyped("FPDFText_GetCharOrigin", _INT)
_fast_loose = _untyped("FPDFText_GetLooseCharBox", _INT)
_fast_matrix = _untyped("FPDFText_GetMatrix", _INT)
_fast_font_size = _untyped("FPDFText_GetFontSize", _DOUBLE)

_fast_object = _untyped("FPDFPage_GetObject", _VOID)
_fast_object_type = _untyped("FPDFPageObj_GetType", _INT)
_fast_object_matrix = _untyped("FPDFPageObj_GetMatrix", _INT)
_fast_count_form_objects = _untyped("FPDFFormObj_CountObjects", _INT)
_fast_count_segments = _untyped("FPDFPath_CountSegments", _INT)
_fast_segment = _untyped("FPDFPath_GetPathSegment", _Handle)
_fast_point = _untyped("FPDFPathSegment_GetPoint", _INT)
_fast_segment_type = _untyped("FPDFPathSegment_GetType", _INT)
_fast_segment_close = _untyped("FPDFPathSegment_GetClose", _INT)
_object_bounds = _untyped("FPDFPageObj_GetBounds", _INT)

_TEXT, _PATH, _FORM = (
    pdfium_c.FPDF_PAGEOBJ_TEXT,
    pdfium_c.FPDF_PAGEOBJ_PATH,
    pdfium_c.FPDF_PAGEOBJ_FORM,
)
_MOVE_TO, _LINE_TO = pdfium_c.FPDF_SEGMENT_MOVETO, pdfium_c.FPDF_SEGMENT_LINETO
# pdfium writes U+FFFE for a glyph without Unicode and for a hyphen that ends a
# line (the word goes on on the next line, with no line break between).
_NO_TEXT = "\ufffe"
_WORD = re.compile(r"[^\s\ufffe]+\ufffe?|\ufffe")
# Replacement, private-use and control characters: glyphs read wrongly.
_ODD = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f\ue000-\uf8ff\ufffd]")
# A word of pdfium's whose characters do not run along its baseline is read a
# glyph a character, as pdfminer gives them, for the layout to place: pdfium put
# no line break or space between characters set one under the other (vertical
# writing; punctuation too small for pdfium to see a new line: kampo, jo) or
# more than _MAX_SPREAD font sizes a character apart (digits in the boxes of a
# tax form: i1040nr). Under one another: further than _OFF_BASELINE font sizes
# from the baseline, the layout's tolerance for one line
# (`pdf_layout._LINE_TOLERANCE`).
_MAX_SPREAD = 2.0
_OFF_BASELINE = 0.5
# pdfium's boxes are single floats: an em-wide gap (LaTeX's \quad after a section
# number) must not land a hair past the layout's limit of one em for one line.
_FLOAT_SLACK = 1e-4  # font sizes added to the end of a word
_MAP_SAMPLES = 64  # characters a page is sampled at for fonts without a map
_MAX_OBJECTS = 200_000  # page objects looked at for rulings (forms nest)
Matrix = tuple[float, float, float, float, float, float]
_IDENTITY: Matrix = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)


def address(handle: object) -> int:
    """The plain address of a pypdfium2 handle (`PdfPage.raw`, `PdfTextPage.raw`)."""
    return ctypes.cast(handle, _VOID).value or 0


@dataclass(slots=True)
class PageWords:
    """A page's words as glyphs, and what its text says about pdfium's reading:
    characters read (not whitespace); the share of them without a Unicode map
    (pdfium wrote the font's code instead), sampled; those read as a
    replacement, private-use or control character; and the text objects it drew
    but read nothing of (`lost_text_objects`)."""

    glyphs: Sequence[Glyph]
    chars: int = 0
    unmapped_share: float = 0.0
    odd: int = 0
    lost_objects: int = 0


def page_words(
    textpage: int, order: dict[int, int], native: NativePages | None = None
) -> PageWords:
    """The words of pdfium's text page at address `textpage`, as glyphs in the
    order their text objects are drawn (`order`: text object -> its place),
    read by the compiled reader where there is one (`native`), else by
    `python_words`."""
    text = _page_text(textpage, native)
    # Characters that are not whitespace: str.split() cuts at exactly those
    # str.isspace() knows, three times faster than asking each character.
    chars, odd = sum(map(len, text.split())), len(_ODD.findall(text))
    glyphs = native.words(textpage, text) if native is not None else None
    arranged = (
        native.arranged(textpage, len(text), order)
        if native is not None and glyphs is not None
        else None
    )
    if arranged is None:
        if native is not None and glyphs is not None:
            runs = native.runs()
        else:
            glyphs, runs = python_words(textpage, text)
        arranged = (
            _placed(runs, order),
            lost_text_objects(textpage, len(text), order, runs),
        )
    placed, lost = arranged
    return PageWords(
        glyphs if placed is None else _reordered(glyphs, placed),
        chars,
        unmapped_share=_unmapped_share(textpage, text),
        odd=odd,
        lost_objects=lost,
    )


def lost_text_objects(
    textpage: int, chars: int, order: dict[int, int], runs: Runs
) -> int:
    """The page's text objects that pdfium drew with an extent (their bounds are
    not a point: a space draws none) but holds no character of in its text page:
    text it lost (vertical writing in a font it does not have, jo.pdf). Only
    objects no word starts in are looked at, the characters of the page only
    where there are such objects."""
    seen = {text_object for _, text_object in runs}
    candidates = [text_object for text_object in order if text_object not in seen]
    if not candidates:
        return 0
    bounds = (ctypes.c_float * 4)()
    left, bottom, right, top = _pointers(bounds, 4)
    drawn = [
        text_object
        for text_object in candidates
        if _object_bounds(ctypes.c_void_p(text_object), left, bottom, right, top)
        and (bounds[2] > bounds[0] or bounds[3] > bounds[1])
    ]
    if not drawn:
        return 0
    handle = ctypes.c_void_p(textpage)
    held = {_fast_text_object(handle, index) for index in range(chars)}
    return sum(1 for text_object in drawn if text_object not in held)


def python_words(textpage: int, text: str) -> tuple[list[Glyph], Runs]:
    """The glyphs of the words of `text`, pdfium's text page at `textpage`, and
    where the text object changes: (glyphs before it, the object).

    A space before a word, drawn or put by pdfium, becomes a space glyph where
    the word before ends: the layout spaces words by it, as by pdfminer's space
    glyphs. A line break is no space: the layout sees whether the line goes on.
    A word whose characters do not run along its baseline (`_MAX_SPREAD`,
    `_OFF_BASELINE`) becomes a glyph a character.

    This loop runs once a word: the calls are the untyped ones of `_Placer`,
    and the font of the text object at hand is kept in local variables.
    """
    at = _Placer(textpage)
    handle, origin, loose, loose_at = at.handle, at.origin, at.loose, at.loose_at
    first_x, first_y, last_x, last_y = at.origin_at
    text_object, char_origin, loose_box = _fast_text_object, _fast_origin, _fast_loose
    glyphs: list[Glyph] = []
    append = glyphs.append
    runs: Runs = []
    current = None
    size = a = b = slack = 0.0
    rightwards = True
    for match in _WORD.finditer(text):
        first, end = match.span()
        word = match.group()
        if word[-1] == _NO_TEXT and not (word := _hyphen(textpage, word, end - 1)):
            continue
        text_object_here = text_object(handle, first)
        if text_object_here != current:
            current = text_object_here
            size, a, b, slack, rightwards = at.take_font(first)
            runs.append((len(glyphs), current))
        if first and text[first - 1] == " " and glyphs:
            _, direction, _, start, across, space_size = glyphs[-1]
            append((" ", direction, start, start, across, space_size))
        char_origin(handle, first, first_x, first_y)
        last = end - 1
        if last == first:
            origin[2], origin[3] = origin[0], origin[1]
        else:
            char_origin(handle, last, last_x, last_y)
            dx, dy = origin[2] - origin[0], origin[3] - origin[1]
            across = dy * a - dx * b
            if not (
                -_OFF_BASELINE * size <= across <= _OFF_BASELINE * size
                and dx * a + dy * b <= _MAX_SPREAD * size * (last - first)
            ):
                glyphs.extend(at.char_glyphs(text, first, end))
                continue
        if rightwards:  # most words: inlined
            loose_box(handle, last, loose_at)
            append((word, 0, origin[0], loose[2] + slack, origin[3], size))
        else:
            append(at.glyph(word, last))
    return glyphs, runs


def _hyphen(textpage: int, word: str, last: int) -> str:
    """`word` ending in U+FFFE: a hyphen that ends a line, or a glyph with no
    Unicode, dropped."""
    return word[:-1] + ("-" if _is_hyphen(textpage, last) == 1 else "")


def _placed(runs: Runs, order: dict[int, int]) -> list[tuple[int, int]] | None:
    """Where the drawing place of the runs changes, (the place, the first glyph
    from there), or None when it only goes forward: pdfium sorts the objects of
    one baseline left to right, which would pull a margin note drawn after a
    paragraph into the middle of it."""
    placed: list[tuple[int, int]] = [(-1, 0)]
    drawn, in_order = -1, True
    for start, text_object in runs:
        place = order.get(text_object, drawn)  # type: ignore[arg-type]
        if place != drawn:
            in_order = in_order and place > drawn
            drawn = place
            placed.append((drawn, start))
    return None if in_order else placed


def _reordered(
    glyphs: Sequence[Glyph], placed: list[tuple[int, int]]
) -> Sequence[Glyph]:
    """The glyphs sorted by where their text objects are drawn (`_placed`). A
    space glyph goes with the word after it only while the word before stays
    the one before."""
    bounds = [start for _, start in placed] + [len(glyphs)]
    kept: list[tuple[int, int]] = []  # (first, end) of each part, in order
    is_space = (
        glyphs.is_space
        if isinstance(glyphs, NativeGlyphs)
        else lambda index: glyphs[index][0] == " "
    )
    previous = -2
    for index in sorted(range(len(placed)), key=lambda index: placed[index][0]):
        first, end = bounds[index], bounds[index + 1]
        if first < end and is_space(first) and previous != index - 1:
            first += 1
        kept.append((first, end))
        previous = index
    if isinstance(glyphs, NativeGlyphs):
        return glyphs.taken(kept)
    return [glyph for first, end in kept for glyph in glyphs[first:end]]


def _unmapped_share(textpage: int, text: str) -> float:
    """The share of the page's characters whose font has no Unicode map, from
    up to `_MAP_SAMPLES` of them spread over the page."""
    step = max(1, len(text) // _MAP_SAMPLES)
    sampled = [i for i in range(0, len(text), step) if not text[i].isspace()]
    if not sampled:
        return 0.0
    return sum(_map_error(textpage, i) == 1 for i in sampled) / len(sampled)


class _Placer:
    """Where the words of one text page sit: the font (size, direction) of the
    text object at hand, and out-parameters for the calls, allocated once and
    passed as ready pointers (`handle`, `origin_at`, `loose_at`)."""

    def __init__(self, textpage: int) -> None:
        self.textpage = textpage
        self.handle = ctypes.c_void_p(textpage)
        self.origin = (ctypes.c_double * 4)()  # first character's x, y; last's
        self.tight = (ctypes.c_double * 4)()  # left, right, bottom, top
        self.loose = (ctypes.c_float * 4)()  # left, top, right, bottom
        self.matrix = (ctypes.c_float * 6)()
        self.origin_at = _pointers(self.origin, 4)
        self.tight_at = _pointers(self.tight, 4)
        self.loose_at = _pointers(self.loose, 1)[0]
        self.matrix_at = _pointers(self.matrix, 1)[0]
        self.size, self.a, self.b, self.slack = 1.0, 1.0, 0.0, 0.0
        self.rightwards = True

    def take_font(self, index: int) -> tuple[float, float, float, float, bool]:
        """The size and direction of character `index`'s font: (size, a, b,
        slack, rightwards), also kept as attributes."""
        matrix = self.matrix
        _fast_matrix(self.handle, index, self.matrix_at)
        a, b = matrix[0], matrix[1]
        norm = math.hypot(a, b) or 1.0
        self.a, self.b = a / norm, b / norm
        self.rightwards = a > 0 and abs(b) <= a
        size = _fast_font_size(self.handle, index) * math.hypot(matrix[2], matrix[3])
        self.size = size or 1.0
        self.slack = _FLOAT_SLACK * abs(self.size)
        return self.size, self.a, self.b, self.slack, self.rightwards

    def glyph(self, word: str, last: int) -> Glyph:
        """`word` as a glyph of `pdf_layout`: from its first character's origin
        on the baseline of its last one (a superscript first, the line goes
        on below it, as the layout takes it) to the end of character `last`:
        its advance when set horizontally (pdfium's loose box), the far side
        of its box when rotated."""
        textpage, size, origin = self.textpage, self.size, self.origin
        if abs(self.a) >= abs(self.b):
            _loose_box(textpage, last, self.loose_at)
            if self.a >= 0:
                return (word, 0, origin[0], self.loose[2] + self.slack, origin[3], size)
            return (word, 2, -origin[0], self.slack - self.loose[2], -origin[3], size)
        _char_box(textpage, last, *self.tight_at)
        if self.b >= 0:
            return (word, 1, origin[1], self.tight[3], -origin[2], size)
        return (word, 3, -origin[1], -self.tight[2], origin[2], size)

    def char_glyphs(self, text: str, first: int, end: int) -> list[Glyph]:
        """A glyph a character, for the layout to place, as pdfminer's."""
        glyphs = []
        for index in range(first, end):
            char = text[index]
            if char == _NO_TEXT:
                char = "-" if _is_hyphen(self.textpage, index) == 1 else ""
            if char:
                _char_origin(self.textpage, index, *self.origin_at[:2])
                self.origin[2], self.origin[3] = self.origin[0], self.origin[1]
                glyphs.append(self.glyph(char, index))
        return glyphs


def _page_text(textpage: int, native: NativePages | None = None) -> str:
    """The page's text, one character per pdfium character index."""
    count = _count_chars(textpage)
    if count <= 0:
        return ""
    # numpy's buffer: ctypes' create_string_buffer makes a new type a size.
    buffer = np.empty(count + 1, dtype="<u2")
    written = _get_text(textpage, 0, count, buffer.ctypes.data)
    text = buffer[: max(written - 1, 0)].tobytes().decode("utf-16-le", "replace")
    if len(text) == count:
        return text
    # pdfium left out control characters (or wrote a character beyond the BMP as
    # two): ask for each character instead, so indexes match again. (Asking for
    # halves of the page until their lengths come out right does not do: a
    # range of the right length can still be shifted by one.)
    if native is not None:
        codes = native.unicode(textpage, count)
    else:
        handle, get_unicode = ctypes.c_void_p(textpage), _fast_unicode
        codes = np.array([get_unicode(handle, i) for i in range(count)], "<u4")
    codes[(codes == 0) | (codes == 2) | (codes > 0x10FFFF)] = ord(_NO_TEXT)
    # Lone surrogates pass as they are, as chr() gives them.
    return codes.tobytes().decode("utf-32-le", "surrogatepass")


@dataclass(slots=True)
class PageDrawing:
    """The page's rulings (`pdf_tables.Box`) and its text objects, each with its
    place in drawing order."""

    rulings: list[Box]
    text_objects: dict[int, int]


def page_drawing(page: int, native: NativePages | None = None) -> PageDrawing:
    """Rulings from the straight segments of the page's paths, forms included,
    as `pdf_tables.TableCollector` records them from pdfminer; read by the
    compiled reader where there is one (`native`)."""
    found = native.drawing(page) if native is not None else None
    if found is not None:
        text_objects, rulings = found
        places = {text_object: place for place, text_object in enumerate(text_objects)}
        return PageDrawing(rulings, places)
    drawing = PageDrawing([], {})
    budget = [_MAX_OBJECTS]
    handle = ctypes.c_void_p(page)
    objects = [_fast_object(handle, index) for index in range(_count_objects(page))]
    _walk(objects, _IDENTITY, drawing, budget, _Segments())
    return drawing


class _Segments:
    """Out-parameters for the calls on paths, allocated once a page."""

    def __init__(self) -> None:
        self.matrix = (ctypes.c_float * 6)()
        self.matrix_at = _pointers(self.matrix, 1)[0]
        self.point = (ctypes.c_float * 2)()
        self.x_at, self.y_at = _pointers(self.point, 2)


def _walk(
    objects: list[int | None],
    outer: Matrix,
    drawing: PageDrawing,
    budget: list[int],
    out: _Segments,
) -> None:
    matrix, matrix_at = out.matrix, out.matrix_at
    text_objects, rulings = drawing.text_objects, drawing.rulings
    for handle in objects:
        budget[0] -= 1
        if budget[0] < 0:
            return
        pointer = ctypes.c_void_p(handle)
        kind = _fast_object_type(pointer)
        if kind == _TEXT:
            text_objects[handle] = len(text_objects)  # type: ignore[index]
        elif kind not in (_PATH, _FORM) or not _fast_object_matrix(pointer, matrix_at):
            continue
        elif kind == _PATH:
            if not ruling_limit_reached(rulings):
                inner = tuple(matrix[:])  # a slice is quicker than iterating it
                at = inner if outer is _IDENTITY else _times(inner, outer)
                _path_rulings(pointer, at, rulings, out)  # type: ignore[arg-type]
        else:
            inner = [
                _get_form_object(handle, index)
                for index in range(_fast_count_form_objects(pointer))
            ]
            _walk(inner, _times(tuple(matrix[:]), outer), drawing, budget, out)


def _path_rulings(
    path: ctypes.c_void_p, matrix: Matrix, rulings: list[Box], out: _Segments
) -> None:
    a, b, c, d, e, f = matrix
    point, x_at, y_at = out.point, out.x_at, out.y_at
    get_segment, get_point, get_type = _fast_segment, _fast_point, _fast_segment_type
    start = current = None
    for index in range(_fast_count_segments(path)):
        segment = get_segment(path, index)
        get_point(segment, x_at, y_at)
        px, py = point[0], point[1]  # unpacking a ctypes array is slower
        here = (px * a + py * c + e, px * b + py * d + f)
        kind = get_type(segment)
        if kind == _MOVE_TO:
            # A move closes nothing: a close flag here would draw no line.
            start = current = here
            continue
        if kind == _LINE_TO and current is not None:
            add_ruling(rulings, current, here)
        current = here
        if start is not None and _fast_segment_close(segment):
            add_ruling(rulings, current, start)
            current = start


def _times(inner: Matrix, outer: Matrix) -> Matrix:
    """`inner` then `outer`, as PDF matrices compose."""
    a, b, c, d, e, f = inner
    p, q, r, s, t, u = outer
    return (
        a * p + b * r,
        a * q + b * s,
        c * p + d * r,
        c * q + d * s,
        e * p + f * r + t,
        e * q + f * s + u,
    )


def open_document(data: bytes) -> pypdfium2.PdfDocument | None:
    """pdfium's document, or None when pdfium cannot open what pdfminer did."""
    try:
        return pypdfium2.PdfDocument(data)
    except pypdfium2.PdfiumError:
        return None
