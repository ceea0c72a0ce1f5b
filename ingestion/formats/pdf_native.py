"""The compiled reader of PDF pages (`native/pdfium_pages.c`), where it was built.

`make` builds it next to its source; without a C compiler it is absent and
`pdf_pdfium.py` reads the words and rulings, and `pdf_layout.glyph_lines` places
the lines, in Python, as before, to the same results (tests hold the two equal
on every corpus PDF). A page's glyphs stay in the reader's arrays
(`NativeGlyphs`) and become tuples only for a page with a ruled table. It is loaded
once, at import, before the parser server changes user (`ingestion.sandbox`);
an old build (another `CURATOR_ABI`) is not used.
"""

from __future__ import annotations

import ctypes
import logging
import re
from collections.abc import Iterator, Sequence
from itertools import accumulate
from pathlib import Path

import numpy as np
from pypdfium2_raw.bindings import _libs

from core.text import UNSPACED

from .pdf_layout import Glyph, Line
from .pdf_tables import Box

logger = logging.getLogger(__name__)

LIBRARY_PATH = Path(__file__).resolve().parent / "native" / "pdfium_pages.so"
ABI = 5  # the C file's CURATOR_ABI
# pdfium's functions the C file calls, in the order of its `curator_bind`.
_FUNCTIONS = (
    "FPDFText_GetTextObject",
    "FPDFText_GetCharOrigin",
    "FPDFText_GetLooseCharBox",
    "FPDFText_GetCharBox",
    "FPDFText_GetMatrix",
    "FPDFText_GetFontSize",
    "FPDFText_IsHyphen",
    "FPDFPage_CountObjects",
    "FPDFPage_GetObject",
    "FPDFPageObj_GetType",
    "FPDFPageObj_GetMatrix",
    "FPDFFormObj_CountObjects",
    "FPDFFormObj_GetObject",
    "FPDFPath_CountSegments",
    "FPDFPath_GetPathSegment",
    "FPDFPathSegment_GetPoint",
    "FPDFPathSegment_GetType",
    "FPDFPathSegment_GetClose",
    "FPDFText_GetUnicode",
    "FPDFPageObj_GetBounds",
)
# The C file's `Glyph` (its flags: HYPHEN, SPACE) and the end of a page's text it
# points into for a space glyph and a lone hyphen.
_GLYPH = np.dtype(
    [
        ("first", "<i4"),
        ("end", "<i4"),
        ("direction", "<i4"),
        ("flags", "<i4"),
        ("start", "<f8"),
        ("stop", "<f8"),
        ("across", "<f8"),
        ("size", "<f8"),
    ]
)
_TEXT_END = " -"
_HYPHEN, _SPACE = 1, 2
# The C file's `Line`.
_LINE = np.dtype(
    [
        ("direction", "<i4"),
        ("paragraph", "<i4"),
        ("text_start", "<i4"),
        ("text_length", "<i4"),
        ("start", "<f8"),
        ("end", "<f8"),
        ("across", "<f8"),
        ("size", "<f8"),
    ]
)


def _ranges(character_class: str) -> np.ndarray:
    """A regular expression's character class ("a-z0") as (first, last) code
    points, for the C file's CJK test (`textutil.is_cjk`)."""
    pairs = [
        (ord(first), ord(last or first))
        for first, last in re.findall(r"(.)(?:-(.))?", character_class, re.DOTALL)
    ]
    return np.array(pairs, dtype="<u4").reshape(-1)


_CJK_RANGES = _ranges(UNSPACED)

Runs = list[tuple[int, int | None]]  # (glyphs before it, text object) a change


class _Context(ctypes.Structure):
    _fields_ = (
        ("glyphs", ctypes.c_void_p),
        ("glyph_count", ctypes.c_int32),
        ("glyph_capacity", ctypes.c_int32),
        ("run_glyphs", ctypes.c_void_p),
        ("run_objects", ctypes.c_void_p),
        ("run_count", ctypes.c_int32),
        ("run_glyph_capacity", ctypes.c_int32),
        ("run_object_capacity", ctypes.c_int32),
        ("text_objects", ctypes.c_void_p),
        ("text_object_count", ctypes.c_int32),
        ("text_object_capacity", ctypes.c_int32),
        ("rulings", ctypes.c_void_p),
        ("ruling_count", ctypes.c_int32),
        ("ruling_capacity", ctypes.c_int32),
        ("failed", ctypes.c_int32),
        ("lines", ctypes.c_void_p),
        ("line_count", ctypes.c_int32),
        ("line_capacity", ctypes.c_int32),
        ("line_text", ctypes.c_void_p),
        ("line_text_length", ctypes.c_int32),
        ("line_text_capacity", ctypes.c_int32),
    )


def _load() -> ctypes.CDLL | None:
    if not LIBRARY_PATH.is_file():
        return None
    try:
        library = ctypes.CDLL(str(LIBRARY_PATH))
    except OSError as exc:
        logger.warning("the compiled PDF page reader does not load: %s", exc)
        return None
    pdfium = _libs["pdfium"]
    addresses = (ctypes.c_void_p * len(_FUNCTIONS))(
        *(ctypes.cast(pdfium[name], ctypes.c_void_p).value for name in _FUNCTIONS)
    )
    try:
        library.curator_bind.argtypes = (ctypes.c_void_p, ctypes.c_int)
        library.curator_bind.restype = ctypes.c_int
        bound = library.curator_bind(addresses, len(_FUNCTIONS))
    except AttributeError:  # not ours
        bound = None
    if bound != ABI:
        logger.warning("the compiled PDF page reader is an old build: run make")
        return None
    library.curator_context_new.restype = ctypes.POINTER(_Context)
    library.curator_context_free.argtypes = (ctypes.POINTER(_Context),)
    library.curator_context_free.restype = None
    library.curator_page_words.argtypes = (
        ctypes.POINTER(_Context),
        ctypes.c_void_p,
        ctypes.c_char_p,
        ctypes.c_int32,
    )
    library.curator_page_words.restype = ctypes.c_int32
    library.curator_page_drawing.argtypes = (ctypes.POINTER(_Context), ctypes.c_void_p)
    library.curator_page_drawing.restype = ctypes.c_int32
    library.curator_page_unicode.argtypes = (
        ctypes.c_void_p,
        ctypes.c_int32,
        ctypes.c_void_p,
    )
    library.curator_page_unicode.restype = None
    library.curator_page_lines.argtypes = (
        ctypes.POINTER(_Context),
        ctypes.c_void_p,
        ctypes.c_int32,
        ctypes.c_char_p,
        ctypes.c_int32,
        ctypes.c_void_p,
        ctypes.c_int32,
    )
    library.curator_page_lines.restype = ctypes.c_int32
    library.curator_page_order.argtypes = (
        ctypes.POINTER(_Context),
        ctypes.c_void_p,
        ctypes.c_int32,
        ctypes.c_void_p,
        ctypes.c_int32,
        ctypes.c_void_p,
        ctypes.c_void_p,
        ctypes.c_void_p,
    )
    library.curator_page_order.restype = ctypes.c_int32
    library.curator_hypot.argtypes = (ctypes.c_double, ctypes.c_double)
    library.curator_hypot.restype = ctypes.c_double
    return library


_LIBRARY = _load()


def available() -> bool:
    """Whether the compiled reader was built and loads."""
    return _LIBRARY is not None


def _array(address: int, dtype: np.dtype | str, count: int) -> np.ndarray:
    """A copy of the `count` items at `address` (the context reuses its
    buffers). Copied with `string_at`: a ctypes array type a size costs more."""
    dtype = np.dtype(dtype)
    if count == 0:
        return np.empty(0, dtype)
    return np.frombuffer(ctypes.string_at(address, dtype.itemsize * count), dtype)


class NativePages:
    """The compiled reader's buffers for one document's pages."""

    def __init__(self) -> None:
        if _LIBRARY is None:
            raise RuntimeError("the compiled PDF page reader is not built")
        self._library = _LIBRARY
        self._context = _LIBRARY.curator_context_new()
        if not self._context:
            raise MemoryError("no memory for the PDF page reader")

    @classmethod
    def open(cls) -> NativePages | None:
        """A reader, or None where the compiled one is not built."""
        return cls() if _LIBRARY is not None else None

    def close(self) -> None:
        if self._context:
            self._library.curator_context_free(self._context)
            self._context = None

    def _check_open(self) -> None:
        if not self._context:
            raise ValueError("the PDF page reader is closed")

    def unicode(self, textpage: int, count: int) -> np.ndarray:
        """The code point of each of the text page's `count` characters."""
        self._check_open()
        codes = np.empty(count, dtype="<u4")
        self._library.curator_page_unicode(textpage, count, codes.ctypes.data)
        return codes

    def words(self, textpage: int, text: str) -> NativeGlyphs | None:
        """The glyphs of `text`'s words (pdfium's text page at `textpage`), as
        `pdf_pdfium.python_words` gives them; None when the reader ran out of
        memory. Where the text object changes stays in the reader, for
        `arranged` (or `runs`) until its next call."""
        self._check_open()
        # A lone surrogate (pdfium's text read a character at a time,
        # `pdf_pdfium._page_text`) goes as it is, as `lines` reads it back.
        encoded = text.encode("utf-32-le", "surrogatepass")
        count = self._library.curator_page_words(
            self._context, textpage, encoded, len(text)
        )
        if count < 0:
            return None
        context = self._context.contents
        return NativeGlyphs(self, _array(context.glyphs, _GLYPH, count), text, encoded)

    def runs(self) -> Runs:
        """Where the text object changes in the last `words`: (glyphs before
        it, the object), as `pdf_pdfium.python_words` gives them."""
        context = self._context.contents
        count = context.run_count
        objects = _array(context.run_objects, "<u8", count).tolist()
        return list(
            zip(
                _array(context.run_glyphs, "<i4", count).tolist(),
                [text_object or None for text_object in objects],
                strict=True,
            )
        )

    def arranged(
        self, textpage: int, chars: int, order: dict[int, int]
    ) -> tuple[list[tuple[int, int]] | None, int] | None:
        """For the last `words`: `pdf_pdfium._placed` and
        `pdf_pdfium.lost_text_objects`, against `order` (text object -> its
        place, in drawing order); None when out of memory."""
        self._check_open()
        drawn = np.fromiter(order, dtype="<u8", count=len(order))
        room = self._context.contents.run_count + 1
        places = np.empty(room, dtype="<i4")
        starts = np.empty(room, dtype="<i4")
        out = np.zeros(3, dtype="<i4")
        failed = self._library.curator_page_order(
            self._context,
            textpage,
            chars,
            drawn.ctypes.data,
            len(drawn),
            places.ctypes.data,
            starts.ctypes.data,
            out.ctypes.data,
        )
        if failed:
            return None
        in_order, placed, lost = out.tolist()
        if in_order:
            return None, lost
        return list(
            zip(places[:placed].tolist(), starts[:placed].tolist(), strict=True)
        ), lost

    def glyphs_from(self, glyphs: list[Glyph]) -> NativeGlyphs:
        """Glyphs read another way (pdfminer's), for the compiled reader to
        place into lines: their texts one after the other, each glyph of
        whitespace marked as such (`str.isspace`, as `glyph_lines` asks)."""
        records = np.zeros(len(glyphs), dtype=_GLYPH)
        if not glyphs:
            return NativeGlyphs(self, records, "", b"")
        texts, directions, starts, stops, acrosses, sizes = zip(*glyphs, strict=True)
        ends = list(accumulate(map(len, texts)))
        records["first"] = [0, *ends[:-1]]
        records["end"] = ends
        records["direction"] = directions
        records["flags"] = [_SPACE if text.isspace() else 0 for text in texts]
        records["start"] = starts
        records["stop"] = stops
        records["across"] = acrosses
        records["size"] = sizes
        text = "".join(texts)
        encoded = text.encode("utf-32-le", "surrogatepass")
        return NativeGlyphs(self, records, text, encoded)

    def lines(self, glyphs: NativeGlyphs) -> list[list[Line]] | None:
        """`pdf_layout.glyph_lines` of the page's glyphs, or None when out of
        memory or closed (the Python loop places them then)."""
        if not self._context:  # closed with its document
            return None
        records = glyphs.records
        count = self._library.curator_page_lines(
            self._context,
            records.ctypes.data,
            len(records),
            glyphs.encoded,
            len(glyphs.text),
            _CJK_RANGES.ctypes.data,
            len(_CJK_RANGES) // 2,
        )
        if count < 0:
            return None
        context = self._context.contents
        found = _array(context.lines, _LINE, count)
        text = ctypes.string_at(context.line_text, 4 * context.line_text_length)
        text = text.decode("utf-32-le", "surrogatepass")
        starts = found["text_start"].tolist()
        ends = (found["text_start"] + found["text_length"]).tolist()
        homes = found["paragraph"].tolist()
        paragraphs: list[list[Line]] = [[] for _ in range(max(homes, default=-1) + 1)]
        for home, direction, start, end, across, size, first, last in zip(
            homes,
            found["direction"].tolist(),
            found["start"].tolist(),
            found["end"].tolist(),
            found["across"].tolist(),
            found["size"].tolist(),
            starts,
            ends,
            strict=True,
        ):
            paragraphs[home].append(
                Line(direction, start, end, across, size, [text[first:last]])
            )
        return paragraphs

    def drawing(self, page: int) -> tuple[list[int], list[Box]] | None:
        """The page's text objects in drawing order and its rulings, as
        `pdf_pdfium.page_drawing`'s walk gives them; None when out of memory."""
        self._check_open()
        if self._library.curator_page_drawing(self._context, page) < 0:
            return None
        context = self._context.contents
        text_objects = _array(
            context.text_objects, "<u8", context.text_object_count
        ).tolist()
        flat = _array(context.rulings, "<f8", 4 * context.ruling_count).tolist()
        rulings: list[Box] = list(zip(*[iter(flat)] * 4, strict=True))
        return text_objects, rulings


class NativeGlyphs(Sequence[Glyph]):
    """A page's glyphs as the compiled reader gave them: made into tuples only
    when asked for (a page with a ruled table), and placed into lines and
    paragraphs by the compiled reader (`paragraph_lines`, which
    `pdf_layout.glyph_lines` calls)."""

    def __init__(
        self, pages: NativePages, records: np.ndarray, text: str, encoded: bytes
    ) -> None:
        self.records, self.text, self.encoded = records, text, encoded
        self._pages = pages
        self._tuples: list[Glyph] | None = None
        self._firsts: list[int] | None = None
        self._flags: list[int] = []

    def tuples(self) -> list[Glyph]:
        if self._tuples is None:
            found, source = self.records, self.text + _TEXT_END
            texts = [
                source[first:end]
                for first, end in zip(
                    found["first"].tolist(), found["end"].tolist(), strict=True
                )
            ]
            for index in np.flatnonzero(found["flags"] & _HYPHEN).tolist():
                texts[index] += "-"
            self._tuples = list(
                zip(
                    texts,
                    found["direction"].tolist(),
                    found["start"].tolist(),
                    found["stop"].tolist(),
                    found["across"].tolist(),
                    found["size"].tolist(),
                    strict=True,
                )
            )
        return self._tuples

    def taken(self, parts: list[tuple[int, int]]) -> NativeGlyphs:
        """The glyphs of `parts`, (first, end) index ranges, in that order."""
        bounds = np.array(parts or [(0, 0)], dtype=np.int64).reshape(-1, 2)
        lengths = bounds[:, 1] - bounds[:, 0]
        # Each part's indexes as one array: its first, counted on from where
        # the part begins in the result.
        begins = np.cumsum(lengths) - lengths
        indexes = np.repeat(bounds[:, 0] - begins, lengths) + np.arange(lengths.sum())
        return NativeGlyphs(self._pages, self.records[indexes], self.text, self.encoded)

    def paragraph_lines(self) -> list[list[Line]] | None:
        """The lines of each paragraph, or None (out of memory)."""
        return self._pages.lines(self)

    def __len__(self) -> int:
        return len(self.records)

    def is_space(self, index: int) -> bool:
        """Whether glyph `index` is a space (without making the tuples)."""
        if self._firsts is None:
            self._firsts = self.records["first"].tolist()
            self._flags = self.records["flags"].tolist()
        return self._firsts[index] == len(self.text) or bool(
            self._flags[index] & _SPACE
        )

    def __getitem__(self, index):  # type: ignore[override]
        return self.tuples()[index]

    def __iter__(self) -> Iterator[Glyph]:
        return iter(self.tuples())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]
