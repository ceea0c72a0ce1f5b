"""What folding traditional Chinese into simplified costs indexing and search.

Chunks are real: CMRC 2018 contexts (simplified Chinese) and TAT-QA paragraphs
(English) parsed and chunked by the ingestion code, and the CMRC chunks converted to
traditional script with OpenCC s2t. Measured:

- `to_simplified` alone, per 1,000 chunks of each kind;
- `keyword_tokens` (the BM25 tokens of a snapshot build) over every CMRC chunk,
  `HashingEmbedder.embed` (the ingestion's embedding stage) over the same chunks, a
  cold snapshot build of a knowledge base holding them (SQLite), and `keyword` and
  `hybrid-v1` search of CMRC questions on that snapshot: each with
  `retrieval.tokens.to_simplified` as it is ("on") and replaced by the identity
  ("off", the tokenizer before script folding), alternating run by run in one
  process, each item's fastest run counted; then once more "on", adding up the time
  spent inside `to_simplified`.

    python bench/script_normalisation.py [--rounds 3] [--no-write]
"""

from __future__ import annotations

import argparse
import json
import math
import time
import uuid

from common import CORPUS, markdown_table, setup_django, write_section


def chunk_texts(texts: list[str]) -> list[str]:
    from ingestion.chunking import chunk_blocks
    from ingestion.formats import parse_document

    return [
        chunk.text
        for text in texts
        for chunk in chunk_blocks(parse_document("text", text.encode()))
    ]


def load_cmrc() -> dict:
    return json.loads((CORPUS / "retrieval/cmrc2018/cmrc2018_dev.json").read_text())


def load_chunks() -> dict[str, list[str]]:
    import opencc

    cmrc = load_cmrc()
    simplified = chunk_texts(
        [p["context"] for article in cmrc["data"] for p in article["paragraphs"]]
    )
    tatqa = json.loads((CORPUS / "retrieval/tat-qa/tatqa_dataset_dev.json").read_text())
    english = chunk_texts(
        ["\n\n".join(p["text"] for p in item["paragraphs"]) for item in tatqa]
    )
    s2t = opencc.OpenCC("s2t")
    return {
        "simplified": simplified,
        "traditional": [s2t.convert(text) for text in simplified],
        "english": english,
    }


def populate(texts: list[str]):
    """A knowledge base whose published documents hold `texts`, 20 chunks each."""
    from documents.models import Document, KnowledgeBase
    from retrieval.embeddings import get_embedder, to_bytes
    from retrieval.models import Chunk

    kb = KnowledgeBase.objects.create(id="bench-script", name="bench script")
    vectors = get_embedder().embed(texts)
    documents, chunks = [], []
    for index, (text, vector) in enumerate(zip(texts, vectors, strict=True)):
        if index % 20 == 0:
            documents.append(
                Document(
                    id=uuid.uuid4(),
                    knowledge_base=kb,
                    filename=f"doc-{index // 20}.txt",
                    content_type="text/plain",
                    size_bytes=len(text),
                    sha256="0" * 64,
                    storage_key="bench",
                    status="published",
                )
            )
        chunks.append(
            Chunk(
                document=documents[-1],
                knowledge_base=kb,
                ordinal=index % 20,
                text=text,
                heading_path=[],
                char_start=0,
                char_end=len(text),
                embedding=to_bytes(vector),
                embedding_model=get_embedder().name,
            )
        )
    Document.objects.bulk_create(documents)
    Chunk.objects.bulk_create(chunks, batch_size=1000)
    KnowledgeBase.objects.filter(pk=kb.pk).update(index_version=1)
    return kb


def fastest(call, rounds: int) -> float:
    """Seconds of the fastest of `rounds` runs: on a shared host the rest of each
    run's time belongs to the neighbours."""
    best = math.inf
    for _ in range(rounds):
        started = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - started)
    return best


def paired(items, call, modes: dict, rounds: int) -> dict[str, float]:
    """Seconds per mode: each item's fastest run in that mode, summed; the modes
    alternate run by run, so a burst of load falls on both."""
    totals = dict.fromkeys(modes, 0.0)
    for item in items:
        best = dict.fromkeys(modes, math.inf)
        for _ in range(rounds):
            for mode, switch in modes.items():
                switch()
                started = time.perf_counter()
                call(item)
                best[mode] = min(best[mode], time.perf_counter() - started)
        for mode in modes:
            totals[mode] += best[mode]
    return totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3, help="timed runs of each")
    parser.add_argument(
        "--questions", type=int, default=300, help="CMRC questions searched"
    )
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()

    setup_django()
    from retrieval import chinese, tokens
    from retrieval.chinese import to_simplified
    from retrieval.embeddings import HashingEmbedder
    from retrieval.search import search_snapshots
    from retrieval.search_backends.snapshots.cache import snapshot_cache

    chunks = load_chunks()
    questions = [
        qa["question"]
        for article in load_cmrc()["data"]
        for paragraph in article["paragraphs"]
        for qa in paragraph["qas"]
    ][: args.questions]
    cmrc = chunks["simplified"]
    kb = populate(cmrc)
    tokens.keyword_tokens("预热 warm-up")  # jieba's dictionary, the converter
    embedder = HashingEmbedder(256)  # kept, as a parser keeps its own

    def snapshot_build(_) -> None:
        snapshot_cache.clear()
        snapshot_cache.snapshots([kb.pk])

    snapshots = snapshot_cache.snapshots([kb.pk])

    def converter_on() -> None:
        tokens.to_simplified = to_simplified
        chinese._remembered.cache_clear()  # nothing left from the previous round

    modes = {
        "off": lambda: setattr(tokens, "to_simplified", lambda text: text),
        "on": converter_on,
    }
    # name -> (items, what one item is, the call)
    timed = {
        "keyword_tokens": (cmrc, "chunk", tokens.keyword_tokens),
        "embed": (cmrc, "chunk", lambda text: embedder.embed([text])),
        "snapshot build": ([kb], "build", snapshot_build),
        "keyword search": (
            questions,
            "question",
            lambda q: search_snapshots(snapshots, q, top_k=10, profile="keyword"),
        ),
        "hybrid-v1 search": (
            questions,
            "question",
            lambda q: search_snapshots(snapshots, q, top_k=10, profile="hybrid-v1"),
        ),
    }
    spent = {"seconds": 0.0, "calls": 0}

    def counted(text: str) -> str:
        started = time.perf_counter()
        try:
            return to_simplified(text)
        finally:
            spent["seconds"] += time.perf_counter() - started
            spent["calls"] += 1

    def inside_converter(items, call) -> tuple[float, int]:
        """Seconds spent in to_simplified, and its calls, over one run of each item."""
        converter_on()
        tokens.to_simplified = counted
        spent.update(seconds=0.0, calls=0)
        for item in items:
            call(item)
        return spent["seconds"], spent["calls"]

    pipeline_rows = []
    for name, (items, unit, call) in timed.items():
        # A snapshot build takes seconds: more runs of it, to find a quiet one.
        rounds = args.rounds if len(items) > 1 else 3 * args.rounds
        seconds = paired(items, call, modes, rounds)
        off, on = seconds["off"] * 1000, seconds["on"] * 1000
        inside, calls = inside_converter(items, call)
        inside *= 1000
        over = f"all {len(cmrc)} chunks"
        if unit == "question":
            off, on, inside = (value / len(items) for value in (off, on, inside))
            calls /= len(items)
            over = f"one question (of {len(items)})"
        pipeline_rows.append(
            [name, over, off, on, f"{100 * (on / off - 1):+.1f} %", inside, calls]
        )
    modes["on"]()

    converter_rows = []
    for kind, texts in chunks.items():

        def convert_all(texts=texts) -> None:
            chinese._remembered.cache_clear()
            for text in texts:
                to_simplified(text)

        total = fastest(convert_all, 3 * args.rounds)
        converter_rows.append(
            [
                kind,
                len(texts),
                round(sum(map(len, texts)) / len(texts)),
                total / len(texts) * 1000 * 1000,
            ]
        )

    body = (
        markdown_table(
            ["chunks", "count", "mean characters", "to_simplified ms per 1,000"],
            converter_rows,
        )
        + "\n\n"
        + markdown_table(
            [
                "time of",
                "over",
                "off ms",
                "on ms",
                "change",
                "in to_simplified ms",
                "its calls",
            ],
            pipeline_rows,
        )
        + "\n"
    )
    print(body)
    if not args.no_write:
        write_section(
            "script-normalisation",
            "Script normalisation (traditional to simplified)",
            "`python bench/script_normalisation.py`: the converter on and replaced "
            "by the identity, alternating run by run in one process; per chunk or "
            f"question the fastest of {args.rounds} runs in each mode, summed (a "
            f"snapshot build: the fastest of {3 * args.rounds}). CMRC 2018 dev "
            "contexts and TAT-QA dev paragraphs, parsed and chunked by the ingestion "
            "code; the traditional chunks are the CMRC ones through OpenCC s2t. The "
            "snapshot build reads the chunks from SQLite; the searches run on that "
            "snapshot, as `evaluate_retrieval` does. *In to_simplified*: the time "
            "spent inside the converter in one more run with it on, call by call (a "
            "remembered text is a call too); the A/B difference of a single "
            "operation is within this host's noise, this column is not. The first "
            "table converts the chunks in a tight loop, its dictionaries warm in the "
            "CPU caches; between jieba's lookups a call costs several times more.",
            body,
        )


if __name__ == "__main__":
    main()
