"""Curator against the tools people would pick instead (issue 38), in one run.

- Parsing: per format, Curator's `parse_document` against markitdown (and, for
  PDF, pypdfium2's bare text dump), time and word recall (`peers_parsing.py`).
- Small documents: the worker's cost per small Markdown document against
  markitdown's conversion per document (`peers_parsing.py`).
- Search: 100,000 distinct passages, CMRC 2018 dev questions whose gold passage is
  known, Curator's keyword and hybrid search against Tantivy with jieba's words:
  latency, recall@5 and @1, and the index build from the passages' text
  (`peers_search.py`).

The peers come from requirements-bench.txt (`make venv-bench`), never from the
service's requirements. Systems run one after the other inside a round, rounds
alternate who goes first, ratios are taken within a round, medians reported.

    python bench/peers.py [--quick] [--json FILE] [--no-write] [--passages N]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import sys
from pathlib import Path

from common import REPO, markdown_table, median, setup_django, write_section

DATABASE = REPO / "var" / "bench" / "peers.sqlite3"


def search_bench(passages: int, questions: int, build_rounds: int, rounds: int) -> dict:
    import peers_search as bench
    from django.db import connections

    corpus = bench.corpus(passages)
    asked = random.Random(38).sample(corpus.questions, questions)
    print(f"{len(corpus.passages):,} passages, {len(asked)} questions", file=sys.stderr)

    # The first round's terms are the ones the chunk rows are written with.
    builds = [bench.build_round(corpus.passages, curator_first=True, snapshot=False)]
    connections.close_all()  # the pool's processes never use the database
    with multiprocessing.get_context("fork").Pool(2) as pool:
        user = bench.populate(corpus.passages, corpus.places, builds[0]["terms"], pool)
    builds[0]["curator_index_s"] = bench.curator_snapshot_build()
    for number in range(1, build_rounds):
        builds.append(bench.build_round(corpus.passages, number % 2 == 0, True))
    engine = builds[-1]["tantivy"]

    passage_of = bench.chunk_passages()
    found = {"keyword": [], "hybrid": [], "tantivy": []}
    for question, gold in asked:
        keyword = [
            passage_of[c] for c in bench.curator_search(user, question, "keyword")
        ]
        hybrid = [
            passage_of[c] for c in bench.curator_search(user, question, "hybrid-v1")
        ]
        for name, ranking in (
            ("keyword", keyword),
            ("hybrid", hybrid),
            ("tantivy", engine.search(question)),
        ):
            found[name].append((ranking, gold))
    texts = [question for question, _ in asked]
    samples = [bench.latency_round(user, engine, texts) for _ in range(rounds)]

    def recall(name: str, depth: int) -> float:
        hits = [gold in ranking[:depth] for ranking, gold in found[name]]
        return sum(hits) / len(hits)

    def built(key: str, clock: int = 0) -> float:
        return median([build[key][clock] for build in builds])

    def totals(system: str, clock: int) -> list[float]:
        steps = {"curator": ("curator_terms_s", "curator_index_s")}.get(
            system, ("tantivy_words_s", "tantivy_index_s")
        )
        return [sum(build[step][clock] for step in steps) for build in builds]

    def ratio(clock: int) -> float:
        pairs = zip(totals("curator", clock), totals("tantivy", clock), strict=True)
        return median([c / t for c, t in pairs])

    return {
        "distinct_passages": len(corpus.passages),
        "cmrc_pieces": corpus.pieces,
        "questions": len(asked),
        "rounds": rounds,
        **bench.summary(samples),
        "recall_at_5": recall("keyword", 5),
        "recall_at_1": recall("keyword", 1),
        "tantivy_recall_at_5": recall("tantivy", 5),
        "tantivy_recall_at_1": recall("tantivy", 1),
        "hybrid_recall_at_5": recall("hybrid", 5),
        "build_rounds": len(builds),
        "build_s": median(totals("curator", 0)),
        "tantivy_build_s": median(totals("tantivy", 0)),
        "build_ratio_to_tantivy": ratio(0),
        "build_cpu_s": median(totals("curator", 1)),
        "tantivy_build_cpu_s": median(totals("tantivy", 1)),
        "build_cpu_ratio_to_tantivy": ratio(1),
        "chunk_terms_s": built("curator_terms_s"),
        "chunk_terms_ms_per_passage": built("curator_terms_s")
        * 1000
        / len(corpus.passages),
        "snapshot_build_s": built("curator_index_s"),
        "tantivy_jieba_s": built("tantivy_words_s"),
        "tantivy_index_s": built("tantivy_index_s"),
        "chunk_terms_cpu_s": built("curator_terms_s", 1),
        "snapshot_build_cpu_s": built("curator_index_s", 1),
        "tantivy_jieba_cpu_s": built("tantivy_words_s", 1),
        "tantivy_index_cpu_s": built("tantivy_index_s", 1),
    }


def issue_table(result: dict) -> str:
    """The table of issue 38, re-measured: Curator against the best peer."""
    parsing, small, search = (
        result["parsing"],
        result["small_documents"],
        result["search"],
    )
    office = ("docx", "pptx", "xlsx", "html")

    def joined(key: str, kinds=office, digits: int = 3) -> str:
        return " / ".join(f"{parsing[k][key]:.{digits}g}" for k in kinds)

    pdf = parsing["pdf"]
    worker_ms = small["worker_ms_per_document"]
    markitdown_ms = small["markitdown_ms_per_document"]
    size = f"{search['distinct_passages']:,}"
    rows = [
        [
            "whole-document conversion, DOCX / PPTX / XLSX / HTML",
            f"{joined('curator_s')} s",
            f"markitdown {joined('markitdown_s')} s",
            joined("ratio"),
        ],
        [
            f"PDF parse ({pdf['files']} files, {pdf['megabytes']:.1f} MB), OCR off",
            f"{pdf['megabytes'] / pdf['curator_s']:.2f} MB/s",
            f"pypdfium2 bare dump {pdf['megabytes'] / pdf['pypdfium2_s']:.1f} MB/s, "
            f"markitdown {pdf['megabytes'] / pdf['markitdown_s']:.2f} MB/s",
            f"{pdf['ratio_to_pypdfium2']:.2f} (dump), {pdf['ratio']:.2f} (markitdown)",
        ],
        [
            "PDF word recall (reference: pdfminer.six `extract_text`)",
            f"{pdf['word_recall']:.3f}",
            f"markitdown {pdf['markitdown_word_recall']:.3f}",
            "",
        ],
        [
            "DOCX / PPTX / XLSX / HTML word recall (reference: python-docx, "
            "python-pptx, openpyxl, lxml)",
            joined("word_recall"),
            f"markitdown {joined('markitdown_word_recall')}",
            "",
        ],
        [
            f"small Markdown documents ({small['documents']}, 8 KB at most), each",
            f"worker {worker_ms:.1f} ms",
            f"markitdown {markitdown_ms:.1f} ms",
            f"{worker_ms / markitdown_ms:.1f}",
        ],
        [
            f"keyword search p50 / p95 at {size} distinct passages",
            f"{search['keyword_p50_ms']:.2f} / {search['keyword_p95_ms']:.2f} ms",
            f"Tantivy {search['tantivy_p50_ms']:.2f} / "
            f"{search['tantivy_p95_ms']:.2f} ms",
            f"{search['keyword_p50_ratio_to_tantivy']:.2f} / "
            f"{search['keyword_p95_ratio_to_tantivy']:.2f}",
        ],
        [
            f"keyword recall@5 / @1 ({search['questions']} questions)",
            f"{search['recall_at_5']:.3f} / {search['recall_at_1']:.3f}",
            f"Tantivy {search['tantivy_recall_at_5']:.3f} / "
            f"{search['tantivy_recall_at_1']:.3f}",
            "",
        ],
        [
            f"index build at {size}, from the text: wall-clock (CPU) s",
            f"{search['build_s']:.0f} ({search['build_cpu_s']:.0f})",
            f"Tantivy {search['tantivy_build_s']:.0f} "
            f"({search['tantivy_build_cpu_s']:.0f})",
            f"{search['build_ratio_to_tantivy']:.2f} "
            f"({search['build_cpu_ratio_to_tantivy']:.2f})",
        ],
        [
            f"hybrid p50 at {size} (recall@5)",
            f"{search['hybrid_p50_ms']:.1f} ms ({search['hybrid_recall_at_5']:.3f})",
            "(no peer)",
            "",
        ],
    ]
    return markdown_table(["row", "Curator", "peer", "Curator / peer"], rows)


def details(result: dict) -> str:
    parsing, search = result["parsing"], result["search"]
    formats = markdown_table(
        [
            "format",
            "files",
            "MB",
            "reference words",
            "Curator s",
            "markitdown s",
            "Curator / markitdown",
            "Curator recall",
            "markitdown recall",
            "failures (Curator, markitdown)",
        ],
        [
            [
                kind,
                row["files"],
                row["megabytes"],
                row["reference_words"],
                row["curator_s"],
                row["markitdown_s"],
                row["ratio"],
                row["word_recall"],
                row["markitdown_word_recall"],
                f"{row['curator_failures']}, {row['markitdown_failures']}",
            ]
            for kind, row in parsing.items()
        ],
    )
    build = markdown_table(
        ["system", "tokenizing s", "indexing s", "build s", "build CPU s"],
        [
            [
                "Curator (`chunk_terms`, cold snapshot build)",
                search["chunk_terms_s"],
                search["snapshot_build_s"],
                search["build_s"],
                search["build_cpu_s"],
            ],
            [
                "Tantivy (`jieba.cut_for_search`, add and commit)",
                search["tantivy_jieba_s"],
                search["tantivy_index_s"],
                search["tantivy_build_s"],
                search["tantivy_build_cpu_s"],
            ],
            [
                "Curator / Tantivy",
                search["chunk_terms_s"] / search["tantivy_jieba_s"],
                search["snapshot_build_s"] / search["tantivy_index_s"],
                search["build_ratio_to_tantivy"],
                search["build_cpu_ratio_to_tantivy"],
            ],
        ],
    )
    return f"{formats}\n\nIndex build at {search['distinct_passages']:,}:\n\n{build}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    parser.add_argument("--json", help="also write the results here (- for stdout)")
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument("--passages", type=int, default=100_000)
    parser.add_argument(
        "--only", nargs="*", default=["parsing", "small", "search"], help="parts"
    )
    args = parser.parse_args()
    os.environ["SEARCH_SNAPSHOT_DIR"] = str(REPO / "var" / "bench" / "peers-snapshots")
    os.environ["SEARCH_WARMUP"] = "false"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{DATABASE}{suffix}").unlink(missing_ok=True)
    setup_django(f"sqlite:///{DATABASE}", fresh=False)
    import peers_parsing

    rounds = 3 if args.quick else 5
    result = {}
    if "parsing" in args.only:
        result["parsing"] = peers_parsing.parsing(1 if args.quick else 3)
    if "small" in args.only:
        result["small_documents"] = peers_parsing.small_documents(
            2 if args.quick else 5
        )
    if "search" in args.only:
        result["search"] = search_bench(
            args.passages, 200 if args.quick else 500, 1 if args.quick else 3, rounds
        )
    text = json.dumps(result, indent=1, default=str)
    if args.json == "-":
        print(text)
    elif args.json:
        Path(args.json).write_text(text + "\n")
    if len(result) < 3:
        print(text)
        return
    body = f"{issue_table(result)}\n\n{details(result)}"
    print(body)
    if not args.no_write:
        write_section(
            "peers",
            "Curator and the tools people would pick instead",
            method(result, args.quick),
            body,
        )


def method(result: dict, quick: bool) -> str:
    return METHOD.format(
        quick=" --quick" if quick else "",
        worker_method=result["small_documents"]["worker_method"],
        **result["search"],
    )


METHOD = """
`python bench/peers.py{quick}` (issue 38), the peers installed from
`requirements-bench.txt` (`make venv-bench`: markitdown 0.1.9 with its PDF, DOCX,
PPTX and XLSX extras, tantivy 0.27.0). Systems run one after the other within a
round, rounds alternate which goes first, ratios are taken within a round, medians
over rounds reported. Parsing: every corpus file of the format that its reference
reader opens, Curator's `ingestion.formats.parse_document(kind, data, limits)` with
OCR off against markitdown's `convert_stream` (in memory, the extension given);
word recall (NFKC, case-folded, a CJK character a word, with repeats) against
pdfminer.six's `extract_text` (PDF; pdftotext is not installed here), python-docx's
text runs of every paragraph, tables and text boxes included (DOCX), python-pptx's
text of every shape (PPTX, notes left out), openpyxl's value of every cell (XLSX),
lxml's text without scripts and styles (HTML), the file itself (Markdown).
Small documents: the worker's milliseconds per small Markdown document (SQLite,
hashing embedder), from {worker_method}, against markitdown converting the corpus
Markdown files of at most 8 KB. Search:
{distinct_passages:,} distinct passages (the CMRC 2018 dev contexts of every other
article cut into 250-character pieces, {cmrc_pieces:,} of them; filler from
`million_chunks.py`'s generator over the other articles' sentences), {questions}
CMRC questions whose answer lies inside one piece; Curator through
`retrieval.search.search` (visibility, version check, scoring, passage rows;
snapshots in files), Tantivy with `jieba.cut_for_search` words joined by spaces in
a whitespace-tokenized, lowercased, stored field, its default BM25, the question's
words OR-ed, the top 10 documents loaded; recall from each ranking. Build, from the
passages' text, one process: Curator's `chunk_terms` per passage (made at
ingestion, beside the vector) plus the cold build of the stored snapshot from the
chunk rows (which also loads the vectors), against jieba per passage plus Tantivy's
indexing and commit (its default writer: two threads here), {build_rounds} round(s).
"""


if __name__ == "__main__":
    main()
