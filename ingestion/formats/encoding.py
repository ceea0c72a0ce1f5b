"""Decoding text of unknown encoding: byte-order marks, UTF-16/32 without one,
declared charsets, the legacy Chinese, Japanese and Korean encodings, and cp1252
for the rest."""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable
from functools import cache

from charset_normalizer import from_bytes

from core.text import COMMON_TEXT

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
_LATIN_1_FALLBACK = "curator-latin-1"
# The five bytes cp1252 leaves undefined read as Latin-1 (C1 controls), as
# browsers read windows-1252.
codecs.register_error(
    _LATIN_1_FALLBACK,
    lambda error: (error.object[error.start : error.end].decode("latin-1"), error.end),
)
# Codecs Python accepts by name that no web page means as its charset.
_NOT_CHARSETS = frozenset(
    {"idna", "punycode", "unicode-escape", "raw-unicode-escape", "undefined"}
)
_CJK_SAMPLE = 20_000
# Encodings are guessed from the first bytes only, so that a large file costs no
# more to guess than a small one; the whole is then decoded with the guess.
SAMPLE_BYTES = 64 * 1024
_WIDE_ENCODINGS = ("utf-32-le", "utf-32-be", "utf-16-le", "utf-16-be")
# As documents/uploads.py admits wide text. Narrow text read as UTF-16 scatters
# over the whole plane.
_TEXT_CHARACTERS = re.compile(f"[{COMMON_TEXT}]")
_MIN_TEXT_SHARE = 0.95
_MIN_COMMON_SHARE = 0.8
_MAX_LONE_SHARE = 0.2
# A non-ASCII character alone among ASCII ones, touching a Latin letter.
_LONE_BY_LATIN = re.compile(
    r"(?<=[A-Za-z])[^\x00-\x7f](?![^\x00-\x7f])"
    r"|(?<![^\x00-\x7f])[^\x00-\x7f](?=[A-Za-z])"
)
_HTML_CHARSET = re.compile(
    rb"""<meta[^<>]+charset\s*=\s*["']?\s*([A-Za-z0-9_:.()+-]+)""", re.IGNORECASE
)


def decode_text(data: bytes, declared: str | None = None) -> str:
    """Decode bytes of unknown encoding, deterministically.

    Order: byte-order mark, UTF-16/32 without one (`wide_encoding`), strict UTF-8,
    the declared charset (used only if it decodes with almost no replacement
    characters), a legacy CJK encoding (`cjk_encoding`), else cp1252 with Latin-1
    for the bytes cp1252 leaves undefined. Guesses look at the first SAMPLE_BYTES.
    """
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return data[len(bom) :].decode(encoding, errors="replace")
    sample = data[:SAMPLE_BYTES]
    encoding = wide_encoding(sample)
    if encoding is not None:
        return data.decode(encoding, errors="replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    if declared:
        text = _decode_declared(data, declared)
        if text is not None:
            return text
    encoding = cjk_encoding(sample)
    if encoding is not None:
        return data.decode(encoding, errors="replace")
    return data.decode("cp1252", errors=_LATIN_1_FALLBACK)


def wide_encoding(sample: bytes) -> str | None:
    """UTF-32 or UTF-16 (little or big end first) for text saved without a byte
    order mark, if the sample reads as text in one of them.

    Narrow text has no NUL bytes; ASCII and Latin text in UTF-16 has one in two.
    A sample that is UTF-8 needs many NULs before it is taken for wide text.
    """
    nuls = sample.count(0)
    if not nuls:
        return None
    if nuls < len(sample) // 10 and _prefix(sample, "utf-8") is not None:
        return None
    readings = []
    for encoding in _WIDE_ENCODINGS:
        text = _prefix(sample, encoding)
        if text and "\x00" not in text:
            share = len(_TEXT_CHARACTERS.findall(text)) / len(text)
            if share >= _MIN_TEXT_SHARE:
                readings.append((encoding, text))
    if not readings:
        return None
    # A few Latin letters read the wrong way round are ideographs, and pass too.
    return max(readings, key=lambda reading: _latin_share(reading[1]))[0]


def _latin_share(text: str) -> float:
    return sum(1 for char in text if char < "\u0250") / len(text)


def _prefix(sample: bytes, encoding: str) -> str | None:
    """The sample decoded strictly, but for a character cut by the sample's end."""
    decoder = codecs.getincrementaldecoder(encoding)(errors="strict")
    try:
        return decoder.decode(sample, final=False)
    except UnicodeDecodeError:
        return None


def cjk_encoding(sample: bytes) -> str | None:
    """The legacy Chinese, Japanese or Korean encoding the sample is written in.

    An encoding fits if the sample decodes in it and most of its non-ASCII
    characters are common ones (`_COMMON`): Latin-1 text decodes in most of them
    too, but into rare characters. Where several fit (EUC-KR bytes are valid
    GB18030, EUC-JP kana are GB2312 kana), charset-normalizer measures which reads
    least like noise and most like its language; a few ideographs in English text
    read well in all of them, and then the order of `_COMMON` decides.
    """
    fitting = []
    for encoding, is_common in _COMMON.items():
        text = _prefix(sample, encoding)
        if text is not None and _mostly_common(text, is_common):
            fitting.append(encoding)
    if len(fitting) <= 1:
        return fitting[0] if fitting else None
    scores = {
        match.encoding: (match.chaos, -match.coherence)
        for match in from_bytes(_whole_characters(sample), cp_isolation=fitting)
    }
    unread = (float("inf"), 0.0)
    return min(fitting, key=lambda encoding: scores.get(encoding, unread))


def _whole_characters(sample: bytes) -> bytes:
    """A sample cut from a larger file up to its last line break or space, for
    charset-normalizer, which refuses an encoding whose last character the cut split.
    These encodings never use either byte inside a character."""
    if len(sample) < SAMPLE_BYTES:
        return sample
    end = max(sample.rfind(b"\n"), sample.rfind(b" "))
    return sample[: end + 1] if end >= len(sample) // 2 else sample


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
        return data.decode("cp1252", errors=_LATIN_1_FALLBACK)
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


def _lead_byte_in(encoding: str, *ranges: tuple[int, int]) -> Callable[[str], bool]:
    """Whether a character's first byte in `encoding` falls in one of `ranges`:
    these encodings order their repertoire by frequency, common rows first."""

    @cache
    def is_common(char: str) -> bool:
        try:
            encoded = char.encode(encoding)
        except UnicodeEncodeError:
            return False
        # Python's EUC-KR spells syllables outside KS X 1001 as 8-byte jamo runs.
        return len(encoded) == 2 and any(
            low <= encoded[0] <= high for low, high in ranges
        )

    return is_common


# Per encoding (the Windows supersets of Big5, Shift_JIS and EUC-KR, as files are
# written), in the order ties are settled without charset-normalizer: its common
# characters. GB2312 for GB18030; Big5's symbols and level 1 hanzi; JIS X 0208's
# symbols, kana and level 1 kanji (in Shift_JIS and in EUC-JP); KS X 1001's
# symbols, jamo and Hangul syllables (hanja are rare in Korean text).
_COMMON: dict[str, Callable[[str], bool]] = {
    "gb18030": _in_gb2312,
    "cp950": _lead_byte_in("big5", (0xA1, 0xC6)),
    "cp932": _lead_byte_in("cp932", (0x81, 0x84), (0x88, 0x98)),
    "euc_jp": _lead_byte_in("euc_jp", (0xA1, 0xA8), (0xB0, 0xCF)),
    "cp949": _lead_byte_in("euc_kr", (0xA1, 0xAC), (0xB0, 0xC8)),
}


def _mostly_common(text: str, is_common: Callable[[str], bool]) -> bool:
    """Most non-ASCII characters are common ones, and few stand alone beside a
    Latin letter: cp1252's curly apostrophe and a letter ("don’t") make a common
    kanji in Shift_JIS, where real CJK text has runs of them."""
    text = text[:_CJK_SAMPLE]
    sample = [char for char in text if ord(char) > 0x7F]
    if not sample:
        return False
    common = sum(1 for char in sample if is_common(char))
    lone = len(_LONE_BY_LATIN.findall(text))
    return common >= _MIN_COMMON_SHARE * len(sample) and lone <= _MAX_LONE_SHARE * len(
        sample
    )


def html_declared_charset(data: bytes) -> str | None:
    """The charset named by a <meta> tag near the start of the document, if any."""
    match = _HTML_CHARSET.search(data[:8192])
    return match.group(1).decode("ascii") if match else None
