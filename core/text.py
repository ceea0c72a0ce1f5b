"""What counts as Chinese, Japanese or Korean text, and as a number: one place.

Regular-expression character ranges, named after their Unicode blocks, and the
classes composed from them that the parsers, the tokenizer and the answerer use.
A module that needs another set composes it here from the same blocks, so that
"CJK" never means two things by accident. Imports nothing: the parser processes
and the worker read it too.
"""

from __future__ import annotations

# Unicode blocks, as ranges inside a character class.
HANGUL_JAMO = "\u1100-\u11ff"
RADICALS = "\u2e80-\u2fdf"  # CJK radicals supplement, Kangxi radicals
CJK_PUNCTUATION = "\u3000-\u303f"  # CJK symbols and punctuation ("，" is fullwidth)
KANA = "\u3040-\u30ff"  # hiragana, katakana
BOPOMOFO = "\u3100-\u312f"
HANGUL_COMPATIBILITY_JAMO = "\u3130-\u318f"
BOPOMOFO_EXTENDED = "\u31a0-\u31ff"  # with CJK strokes and katakana extensions
HAN_EXTENSION_A = "\u3400-\u4dbf"
HAN_UNIFIED = "\u4e00-\u9fff"
HANGUL_SYLLABLES = "\uac00-\ud7af"
HAN_COMPATIBILITY = "\uf900-\ufaff"
CJK_COMPATIBILITY_FORMS = "\ufe30-\ufe4f"
FULLWIDTH_FORMS = "\uff00-\uffef"  # halfwidth and fullwidth forms
HAN_SUPPLEMENTARY = "\U00020000-\U0003134f"  # extensions B to H

# Chinese characters: every Han ideograph, in the basic and supplementary planes.
HAN = HAN_EXTENSION_A + HAN_UNIFIED + HAN_COMPATIBILITY + HAN_SUPPLEMENTARY

# The letters of Chinese, Japanese and Korean, without their punctuation: what the
# tokenizer cuts into characters rather than reading as words.
CJK_LETTERS = (
    HANGUL_JAMO
    + RADICALS
    + KANA
    + BOPOMOFO
    + HANGUL_COMPATIBILITY_JAMO
    + BOPOMOFO_EXTENDED
    + HAN
    + HANGUL_SYLLABLES
)

# Scripts written without spaces between words, with their punctuation and
# fullwidth forms: where lines join without a space and text is measured in
# characters. Hangul is left out: Korean separates words with spaces.
UNSPACED = (
    RADICALS
    + CJK_PUNCTUATION
    + KANA
    + BOPOMOFO
    + BOPOMOFO_EXTENDED
    + HAN
    + CJK_COMPATIBILITY_FORMS
    + FULLWIDTH_FORMS
)

# Code points of everyday text in the languages Curator reads: ASCII and Latin,
# general punctuation, CJK punctuation, kana, Han, Hangul and fullwidth forms.
# Bytes decoded with the wrong encoding scatter over the whole plane instead.
COMMON_TEXT = (
    "\t\n\r\x0c\x20-\x7e\xa0-\u024f\u2000-\u206f"
    + CJK_PUNCTUATION
    + KANA
    + HAN_UNIFIED
    + HANGUL_SYLLABLES
    + FULLWIDTH_FORMS
)

# A number as documents write it with digits: thousands grouped by commas
# ("1,250.5"), or plain digits with an optional decimal part ("1250.5").
GROUPED_NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?"
NUMBER = rf"{GROUPED_NUMBER}|\d+(?:\.\d+)?"
