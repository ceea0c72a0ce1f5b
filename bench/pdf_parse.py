"""PDF parsing speed against pypdfium2's bare text dump, and word recall.

- Speed: every corpus PDF that opens without a password (`pdf/` and `kb-dev/pdf/`),
  parsed by `ingestion.formats.pdf.parse` (OCR off) and dumped by pypdfium2 alone
  (`get_textpage().get_text_range()` per page, the floor of any pdfium-based
  parse), interleaved: each round times the dump, then the parse, of the whole
  set; MB/s and the ratio of the two are taken in each round, medians reported.
- Recall: the words of pdfminer.six's `extract_text` (NFKC, case-folded; a CJK
  character is a word) found in the parse's text, counted with repeats: micro
  over all words, and per corpus folder.

    python bench/pdf_parse.py [--rounds 5] [--no-write] [--per-file]
"""

from __future__ import annotations

import argparse
import io
import logging
import re
import sys
import time
import unicodedata
from collections import Counter
from pathlib import Path

from common import CORPUS, REPO, markdown_table, median, write_section

sys.path.insert(0, str(REPO))

import pypdfium2
from pdfminer.high_level import extract_text

from ingestion.blocks import ParseError, ParseLimits
from ingestion.formats import pdf
from ingestion.formats.base import ParseRequest

OCR_OFF = ParseRequest(limits=ParseLimits(ocr_enabled=False))
_CJK = "\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff"
_WORD = re.compile(f"[{_CJK}]|[^\\W_{_CJK}]+")  # a CJK character is a word


def corpus_files() -> dict[Path, bytes]:
    """The corpus PDFs pdfium opens without a password, by path."""
    files = {}
    for path in sorted(CORPUS.rglob("*.pdf")):
        data = path.read_bytes()
        try:
            pypdfium2.PdfDocument(data).close()
        except pypdfium2.PdfiumError:
            continue
        files[path] = data
    return files


def bare_dump(data: bytes) -> str:
    document = pypdfium2.PdfDocument(data)
    try:
        return "\n".join(page.get_textpage().get_text_range() for page in document)
    finally:
        document.close()


def curator(data: bytes) -> str:
    try:
        return "\n".join(block.text for block in pdf.parse(data, OCR_OFF))
    except ParseError:
        return ""


def words(text: str) -> Counter:
    return Counter(_WORD.findall(unicodedata.normalize("NFKC", text).casefold()))


def _pdfminer_words(data: bytes) -> Counter | None:
    try:
        return words(extract_text(io.BytesIO(data)))
    except Exception:  # pdfminer gives up on the file: nothing to compare with
        return None


def recall_rows(files: dict[Path, bytes], per_file: bool) -> list[list]:
    """Word recall against pdfminer's extract_text, per corpus folder and all."""
    found: dict[str, list[int]] = {}
    for path, data in files.items():
        reference = _pdfminer_words(data)
        if reference is None:
            continue
        ours = words(curator(data))
        hit = sum((reference & ours).values())
        total = sum(reference.values())
        group = _group(path)
        for key in (group, "all"):
            counts = found.setdefault(key, [0, 0, 0])
            counts[0] += hit
            counts[1] += total
            counts[2] += 1
        if per_file and total:
            print(f"{hit / total:.3f} {total:7d} {path.relative_to(CORPUS)}")
    return [
        [group, files_, total, hit / total if total else float("nan")]
        for group, (hit, total, files_) in sorted(found.items())
    ]


def _group(path: Path) -> str:
    """The corpus a file came from: pdf/<source> or kb-dev."""
    parts = path.relative_to(CORPUS).parts
    return "kb-dev" if parts[0] == "kb-dev" else "/".join(parts[:2])


def speed_rows(files: dict[Path, bytes], rounds: int) -> list[list]:
    """MB/s of the dump and the parse, and the parse's time over the dump's, in
    wall-clock and in CPU seconds (this host is shared: CPU time is steadier)."""
    megabytes = sum(map(len, files.values())) / 1e6
    bare, ours, ratios, cpu_ratios = [], [], [], []
    for _ in range(rounds):
        wall, cpu = [], []
        for read in (bare_dump, curator):
            started, started_cpu = time.perf_counter(), time.process_time()
            for data in files.values():
                read(data)
            wall.append(time.perf_counter() - started)
            cpu.append(time.process_time() - started_cpu)
        bare.append(megabytes / wall[0])
        ours.append(megabytes / wall[1])
        ratios.append(wall[1] / wall[0])
        cpu_ratios.append(cpu[1] / cpu[0])
    return [
        [
            len(files),
            f"{megabytes:.2f}",
            median(bare),
            median(ours),
            median(ratios),
            median(cpu_ratios),
        ]
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds")
    parser.add_argument("--no-write", action="store_true", help="only print")
    parser.add_argument("--per-file", action="store_true", help="print each recall")
    args = parser.parse_args()
    logging.disable(logging.WARNING)  # pdfminer's complaints about damaged files
    if not CORPUS.is_dir():
        print(f"skipping: {CORPUS} is not here")
        return
    files = corpus_files()
    speed = markdown_table(
        [
            "PDFs",
            "MB",
            "pypdfium2 dump MB/s",
            "Curator MB/s",
            "Curator time / dump",
            "CPU time / dump",
        ],
        speed_rows(files, args.rounds),
    )
    recall = markdown_table(
        ["corpus folder", "PDFs", "pdfminer words", "word recall"],
        recall_rows(files, args.per_file),
    )
    body = f"{speed}\n\n{recall}"
    print(body)
    if not args.no_write:
        write_section(
            "pdf-parse",
            "PDF parsing: pdfium's glyphs against its bare dump (issue 38)",
            "`python bench/pdf_parse.py`: every corpus PDF that pdfium opens "
            "without a password (`pdf/`, `kb-dev/pdf/`). Speed: "
            "`ingestion.formats.pdf.parse` with OCR off against pypdfium2's bare "
            "text dump (`get_textpage().get_text_range()` per page), the floor of "
            f"a parse through pdfium; {args.rounds} interleaved rounds (the dump "
            "of the whole set, then the parse), the ratios (wall-clock and CPU "
            "seconds) taken within each round, medians. Target: within 3x of the "
            "dump. Recall: the words of "
            "pdfminer.six's `extract_text` (NFKC, case-folded, a CJK character "
            "one word) found in the parse's text, with repeats, per folder and all "
            "(micro). Target: not below the pdfminer-based parse's.",
            body,
        )


if __name__ == "__main__":
    main()
