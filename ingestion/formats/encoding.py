"""Decoding text of unknown encoding: byte-order marks, declared charsets, and a
guess between GB18030 and cp1252 for the rest."""

from __future__ import annotations

import codecs
import re
from functools import cache

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# WHATWG label mapping: browsers read these labels as the wider encoding.
_CHARSET_ALIASES = {
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "x-gbk": "gb18030",
    "gb_2312-80": "gb18030",
    "csgb2312": "gb18030",
    "chinese": "gb18030",
    "iso-8859-1": "cp1252",
    "iso8859-1": "cp1252",
    "latin1": "cp1252",
    "latin-1": "cp1252",
    "l1": "cp1252",
    "ascii": "cp1252",
    "us-ascii": "cp1252",
    "windows-1252": "cp1252",
}
# Bytes 0x80-0x9F read as Latin-1 give C1 controls; cp1252 has letters for most.
_C1_TO_CP1252 = {
    0x80 + i: char
    for i, char in enumerate(bytes(range(0x80, 0xA0)).decode("cp1252", "replace"))
    if char != "\ufffd"
}
# Codecs Python accepts by name that no web page means as its charset.
_NOT_CHARSETS = frozenset(
    {"idna", "punycode", "unicode-escape", "raw-unicode-escape", "undefined"}
)
_CJK_SAMPLE = 20_000
_HTML_CHARSET = re.compile(
    rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_:.()+-]+)""", re.IGNORECASE
)


def decode_text(data: bytes, declared: str | None = None) -> str:
    """Decode bytes of unknown encoding, deterministically.

    Order: byte-order mark, strict UTF-8, the declared charset (used only if it decodes
    with almost no replacement characters), GB18030 if the result reads as Chinese,
    else cp1252 with Latin-1 for the bytes cp1252 leaves undefined.
    """
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return data[len(bom) :].decode(encoding, errors="replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    if declared:
        text = _decode_declared(data, declared)
        if text is not None:
            return text
    try:
        text = data.decode("gb18030")
    except UnicodeDecodeError:
        pass
    else:
        if _looks_chinese(text):
            return text
    return data.decode("latin-1").translate(_C1_TO_CP1252)


def _decode_declared(data: bytes, declared: str) -> str | None:
    label = declared.strip().strip("\"'").lower()
    label = _CHARSET_ALIASES.get(label, label)
    try:
        encoding = codecs.lookup(label).name
    except LookupError:
        return None
    if encoding in _NOT_CHARSETS:
        return None
    if encoding == "cp1252":
        return data.decode("latin-1").translate(_C1_TO_CP1252)
    try:
        text = data.decode(encoding, errors="replace")
    except (LookupError, UnicodeError, ValueError):
        return None  # a codec Python knows but that is not a text charset
    if text.count("\ufffd") > len(text) // 1000:
        return None
    return text


@cache
def _in_gb2312(char: str) -> bool:
    try:
        char.encode("gb2312")
    except UnicodeEncodeError:
        return False
    return True


def _looks_chinese(text: str) -> bool:
    """Most non-ASCII characters are common Chinese ones (GB2312 covers them).

    Latin-1 text often decodes as GB18030 too, but its accented letters pair with
    ASCII bytes into rare ideographs outside GB2312.
    """
    sample = [char for char in text[:_CJK_SAMPLE] if ord(char) > 0x7F]
    if not sample:
        return False
    common = sum(1 for char in sample if _in_gb2312(char))
    return common >= 0.8 * len(sample)


def html_declared_charset(data: bytes) -> str | None:
    """The charset named by a <meta> tag near the start of the document, if any."""
    match = _HTML_CHARSET.search(data[:8192])
    return match.group(1).decode("ascii") if match else None
