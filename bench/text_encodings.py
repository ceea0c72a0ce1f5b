"""How often `decode_text` reads undeclared text right, and how long it takes.

Snippets of 10, 50 and 500 characters cut at random offsets from text in each
language (the demo documents for English and simplified Chinese; the Chinese turned
traditional with OpenCC; a few sentences written for Japanese, Korean, French and
English with curly quotes),
encoded without a byte order mark or a declared charset. A snippet counts as read
right if `decode_text` gives back exactly its text. Then one 20 MB file per
encoding, decoded whole.

    python bench/text_encodings.py [--snippets 200] [--no-write]
"""

from __future__ import annotations

import argparse
import random
import sys
import time

from common import REPO, markdown_table, write_section

sys.path.insert(0, str(REPO))

import opencc

from ingestion.formats.encoding import decode_text

DEMO = REPO / "workbench" / "demo"
JAPANESE = (
    "従業員は毎年、二十五日の年次有給休暇を取得できます。申請は二週間前までに上長へ"
    "提出してください。病気休暇には医師の診断書が必要です。出張旅費は規程に従って"
    "精算し、領収書を添付してください。"
)
KOREAN = (
    "직원은 매년 이십오 일의 유급 휴가를 받을 수 있습니다. 휴가 신청은 두 주 전까지 "
    "팀장에게 제출해야 합니다. 병가에는 의사의 진단서가 필요합니다. 출장 경비는 "
    "규정에 따라 정산하고 영수증을 첨부하십시오."
)
FRENCH = (
    "Les employés ont droit à vingt-cinq jours de congés payés par année. La demande "
    "doit être déposée deux semaines à l’avance auprès du responsable. Un certificat "
    "médical est exigé pour les congés de maladie – au-delà de trois jours. Les frais "
    "de déplacement sont remboursés sur présentation des reçus."
)
# cp1252's curly quotes (0x91-0x94) are bytes that start a character in Shift_JIS
# and Big5.
CURLY = (
    "It\u2019s the employee\u2019s right to take \u201cannual leave\u201d; don\u2019t "
    "wait until December. The manager\u2019s approval isn\u2019t needed for a "
    "single day \u2013 we\u2019ll record it in the team\u2019s \u201cleave\u201d sheet."
)
SIZES = (10, 50, 500)
LARGE_BYTES = 20_000_000


def demo_text(pattern: str) -> str:
    return "\n".join(path.read_text() for path in sorted(DEMO.glob(pattern)))


def snippets(text: str, size: int, count: int, rng: random.Random) -> list[str]:
    text = text * (1 + 2 * size // len(text))
    starts = [rng.randrange(len(text) - size) for _ in range(count)]
    return [text[start : start + size] for start in starts]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snippets", type=int, default=200, help="per size")
    parser.add_argument("--no-write", action="store_true", help="only print")
    args = parser.parse_args()
    rng = random.Random(16)
    simplified = demo_text("[!a-z]*.md")
    cases = [
        ("Chinese (simplified)", simplified, "gb18030"),
        ("Chinese (traditional)", opencc.OpenCC("s2t").convert(simplified), "big5"),
        ("Japanese", JAPANESE, "shift_jis"),
        ("Japanese", JAPANESE, "euc_jp"),
        ("Korean", KOREAN, "euc_kr"),
        ("French", FRENCH, "cp1252"),
        ("English", demo_text("[a-z]*.md"), "cp1252"),
        ("English, curly quotes", CURLY, "cp1252"),
        ("Chinese (simplified)", simplified, "utf-16-le"),
        ("French", FRENCH, "utf-16-be"),
        ("Chinese (simplified)", simplified, "utf-32-le"),
    ]
    rows = []
    for language, text, encoding in cases:
        text = "".join(c for c in text if _encodable(c, encoding))
        right = []
        for size in SIZES:
            pieces = snippets(text, size, args.snippets, rng)
            hits = sum(decode_text(piece.encode(encoding)) == piece for piece in pieces)
            right.append(f"{100 * hits / len(pieces):.1f} %")
        data = text.encode(encoding)
        data *= 1 + LARGE_BYTES // len(data)
        started = time.perf_counter()
        decode_text(data[:LARGE_BYTES])
        large_ms = (time.perf_counter() - started) * 1000
        rows.append([language, encoding, *right, large_ms])
    headers = ["text", "encoding", *(f"{size} chars" for size in SIZES)]
    body = markdown_table([*headers, "20 MB file, ms"], rows)
    print(body)
    if not args.no_write:
        write_section(
            "text-encodings",
            "Text encoding detection",
            "`python bench/text_encodings.py`: share of "
            f"{args.snippets} snippets per size, cut at random offsets, that "
            "`decode_text` reads back exactly when no byte order mark or charset "
            "is given (the demo documents for English and simplified Chinese, the "
            "Chinese turned traditional with OpenCC, a few sentences for "
            "Japanese, Korean, French and English with curly quotes); then one "
            "20 MB file decoded whole (guesses read its first 64 KiB). The misses "
            "are snippets too short to tell apart: a few kanji valid and common in "
            "EUC-JP, GB18030 and EUC-KR alike (GB18030 is chosen), or UTF-16 "
            "ideographs without a single ASCII character, hence without a NUL "
            "byte to show it is UTF-16.",
            body,
        )


def _encodable(char: str, encoding: str) -> bool:
    try:
        char.encode(encoding)
    except UnicodeEncodeError:
        return False
    return True


if __name__ == "__main__":
    main()
