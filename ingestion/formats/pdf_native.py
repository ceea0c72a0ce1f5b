"""The compiled reader of PDF pages (`native/pdfium_pages.c`), where it was built.

`make` builds it next to its source; without a C compiler it is absent and
`pdf_pdfium.py` reads the words and rulings in Python, as before, to the same
glyphs and rulings (tests hold the two equal on every corpus PDF). It is loaded
once, at import, before the parser server changes user (`ingestion.sandbox`);
an old build (another `CURATOR_ABI`) is not used.
"""

from __future__ import annotations

import ctypes
import logging
from pathlib import Path

import numpy as np
from pypdfium2_raw.bindings import _libs

from .pdf_layout import Glyph
from .pdf_tables import Box

logger = logging.getLogger(__name__)

LIBRARY_PATH = Path(__file__).resolve().parent / "native" / "pdfium_pages.so"
ABI = 1  # the C file's CURATOR_ABI
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
)
# The C file's `Glyph` and the end of a page's text it points into for a space
# glyph and a lone hyphen.
_GLYPH = np.dtype(
    [
        ("first", "<i4"),
        ("end", "<i4"),
        ("direction", "<i4"),
        ("hyphen", "<i4"),
        ("start", "<f8"),
        ("stop", "<f8"),
        ("across", "<f8"),
        ("size", "<f8"),
    ]
)
_TEXT_END = " -"

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
    library.curator_bind.argtypes = (ctypes.c_void_p, ctypes.c_int)
    library.curator_bind.restype = ctypes.c_int
    if library.curator_bind(addresses, len(_FUNCTIONS)) != ABI:
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

    def unicode(self, textpage: int, count: int) -> np.ndarray:
        """The code point of each of the text page's `count` characters."""
        codes = np.empty(count, dtype="<u4")
        self._library.curator_page_unicode(textpage, count, codes.ctypes.data)
        return codes

    def words(self, textpage: int, text: str) -> tuple[list[Glyph], Runs] | None:
        """The glyphs of `text`'s words (pdfium's text page at `textpage`) and
        where the text object changes, as `pdf_pdfium.python_words` gives them;
        None when the reader ran out of memory."""
        count = self._library.curator_page_words(
            self._context, textpage, text.encode("utf-32-le"), len(text)
        )
        if count < 0:
            return None
        context = self._context.contents
        found = _array(context.glyphs, _GLYPH, count)
        source = text + _TEXT_END
        texts = [
            source[first:end]
            for first, end in zip(
                found["first"].tolist(), found["end"].tolist(), strict=True
            )
        ]
        for index in np.flatnonzero(found["hyphen"]).tolist():
            texts[index] += "-"
        glyphs: list[Glyph] = list(
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
        runs = context.run_count
        objects = _array(context.run_objects, "<u8", runs).tolist()
        runs_list: Runs = list(
            zip(
                _array(context.run_glyphs, "<i4", runs).tolist(),
                [obj or None for obj in objects],
                strict=True,
            )
        )
        return glyphs, runs_list

    def drawing(self, page: int) -> tuple[list[int], list[Box]] | None:
        """The page's text objects in drawing order and its rulings, as
        `pdf_pdfium.page_drawing`'s walk gives them; None when out of memory."""
        if self._library.curator_page_drawing(self._context, page) < 0:
            return None
        context = self._context.contents
        text_objects = _array(
            context.text_objects, "<u8", context.text_object_count
        ).tolist()
        flat = _array(context.rulings, "<f8", 4 * context.ruling_count).tolist()
        rulings: list[Box] = list(zip(*[iter(flat)] * 4, strict=True))
        return text_objects, rulings
