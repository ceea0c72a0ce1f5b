"""A million published chunks: the scale curve 1k -> 1M, and the approximate index.

One knowledge base per size, its chunks written straight into the chunk table
with what ingestion stores with them (the real embedder's vector, the terms of
`retrieval.terms`; made in two processes). A chunk is three consecutive sentences
of the CMRC 2018 dev contexts followed by two from elsewhere, so that a million
chunks are a million different texts; its terms are the sum of its sentences'
(each tokenized once: jieba's runs end at a sentence's full stop, so the sum is
what tokenizing the chunk gives, 20 times faster). Snapshots are
shared as on a production host (`SEARCH_SNAPSHOT_DIR`), with the default
`SEARCH_ANN_MIN_CHUNKS`. Per size: the cold build of the stored snapshot (with
the approximate index where there is one), the first search of a new process,
p50/p95 per profile and of the extractive chat over CMRC questions, snapshot
bytes per chunk, and the next search after one more published document (median
and max of three). At the
largest sizes the vector list is measured both ways, exact and approximate, with
the approximate list's recall@10 against exact search (a result counts when its
score reaches the exact tenth score: windows that overlap tie).

    python bench/million_chunks.py [--sizes 1000 10000 100000 1000000] [--reuse]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path

from common import (
    CORPUS,
    REPO,
    markdown_table,
    median,
    percentile,
    setup_django,
    write_section,
)

BATCH = 5000
PER_DOCUMENT = 20
DATABASE = REPO / "var" / "bench" / "million.sqlite3"
SNAPSHOTS = REPO / "var" / "bench" / "million-snapshots"
SENTENCE = re.compile(r"[^。！？]{4,}[。！？]")

# Set before the pool forks, read by its processes.
SENTENCES: list[str] = []
SENTENCE_TOKENS: list[Counter] = []
SENTENCE_FOLDS: list[bool] = []


def cmrc() -> tuple[str, list[str]]:
    data = json.loads((CORPUS / "retrieval/cmrc2018/cmrc2018_dev.json").read_text())
    paragraphs = [p for article in data["data"] for p in article["paragraphs"]]
    text = "".join(p["context"] for p in paragraphs)
    questions = [qa["question"] for p in paragraphs for qa in p["qas"]]
    return text, questions


def load_sentences(text: str) -> None:
    from retrieval.tokens import folds, keyword_tokens

    SENTENCES.extend(SENTENCE.findall(text))
    SENTENCE_TOKENS.extend(Counter(keyword_tokens(s)) for s in SENTENCES)
    SENTENCE_FOLDS.extend(folds(s) for s in SENTENCES)


def chunk_sentences(index: int) -> list[int]:
    """Three consecutive sentences and two from elsewhere; no two indexes below
    the square of the sentence count give the same five."""
    count = len(SENTENCES)
    first = index % count
    other = ((index // count) * 7919 + first * 31 + 17) % count
    return [(first + i) % count for i in range(3)] + [other, (other + 1) % count]


def _made(span: tuple[int, int]) -> list[tuple[str, bytes, bytes, int, bool]]:
    from retrieval.embeddings import get_embedder, to_bytes
    from retrieval.terms import counted_terms

    picks = [chunk_sentences(i) for i in range(*span)]
    texts = ["".join(SENTENCES[i] for i in pick) for pick in picks]
    vectors = get_embedder().embed(texts)
    made = []
    for text, pick, vector in zip(texts, picks, vectors, strict=True):
        counts = sum((SENTENCE_TOKENS[i] for i in pick), Counter())
        terms = counted_terms(counts, any(SENTENCE_FOLDS[i] for i in pick))
        made.append((text, to_bytes(vector), terms.terms, terms.length, terms.folds))
    return made


def populate(size: int, pool) -> None:
    from django.contrib.auth import get_user_model

    from documents.models import Document, KnowledgeBase, Membership
    from retrieval.embeddings import get_embedder
    from retrieval.models import Chunk
    from retrieval.terms import TOKENIZER

    kb = KnowledgeBase.objects.create(id=f"scale-{size}", name=f"scale {size}")
    user = get_user_model().objects.create(username=f"scale-{size}")
    Membership.objects.create(user=user, knowledge_base=kb, role="viewer")
    model = get_embedder().name
    index = 0
    spans = [(start, min(start + BATCH, size)) for start in range(0, size, BATCH)]
    for made in pool.imap(_made, spans):
        documents, chunks = [], []
        for chunk_text, vector, terms, length, folds in made:
            if index % PER_DOCUMENT == 0:
                documents.append(
                    Document(
                        id=uuid.uuid4(),
                        knowledge_base=kb,
                        filename=f"doc-{index // PER_DOCUMENT}.md",
                        content_type="text/markdown",
                        size_bytes=len(chunk_text),
                        sha256="0" * 64,
                        storage_key="bench",
                        status="published",
                    )
                )
            chunks.append(
                Chunk(
                    document=documents[-1],
                    knowledge_base=kb,
                    ordinal=index % PER_DOCUMENT,
                    text=chunk_text,
                    heading_path=[],
                    char_start=0,
                    char_end=len(chunk_text),
                    embedding=vector,
                    embedding_model=model,
                    terms=terms,
                    term_count=length,
                    folds=folds,
                    tokenizer=TOKENIZER,
                )
            )
            index += 1
        Document.objects.bulk_create(documents)
        Chunk.objects.bulk_create(chunks, batch_size=1000)
        print(f"  {index:,} of {size:,} chunks", file=sys.stderr, flush=True)
    KnowledgeBase.objects.filter(pk=kb.pk).update(index_version=1)


FIRST_SEARCH = """
import sys, time
sys.path.insert(0, "bench")
from common import setup_django
setup_django(sys.argv[1], fresh=False)
from django.contrib.auth import get_user_model
from retrieval.search import search
user = get_user_model().objects.get(username=sys.argv[2])
started = time.perf_counter()
search(user=user, question=sys.argv[3], profile="hybrid-v1")
print(time.perf_counter() - started)
"""


def first_search_seconds(database_url: str, username: str, question: str) -> float:
    """The first search of a new process: it maps the stored snapshot."""
    out = subprocess.run(
        [sys.executable, "-c", FIRST_SEARCH, database_url, username, question],
        check=True,
        capture_output=True,
        text=True,
        cwd=REPO,
        env=os.environ,
    ).stdout
    return float(out.strip().splitlines()[-1])


def timed_ms(call) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def latencies(user, questions: list[str], profile: str) -> list[float]:
    from retrieval.search import search

    search(user=user, question=questions[0], profile=profile)  # warm
    return [
        timed_ms(lambda q=q: search(user=user, question=q, profile=profile))
        for q in questions
    ]


def chat_latencies(user, questions: list[str]) -> list[float]:
    from answers.chat import chat_answer

    return [timed_ms(lambda q=q: chat_answer(user=user, question=q)) for q in questions]


def searches_while_the_index_builds(cache, user, questions: list[str]) -> list[float]:
    """hybrid-v1 latencies of searches made while the approximate index is
    built in the background (none when there is nothing to build)."""
    from retrieval.search import search

    samples = []
    while cache.busy("index") and len(samples) < 10 * len(questions):
        question = questions[len(samples) % len(questions)]
        samples.append(
            timed_ms(
                lambda q=question: search(user=user, question=q, profile="hybrid-v1")
            )
        )
    return samples


def served_with(kb_id: str, approximate) -> None:
    """The knowledge base's snapshot served with this vector index (None: exact
    search) from now on: snapshots are frozen, so a copy takes its place."""
    import dataclasses

    from retrieval.search_backends.snapshots.cache import snapshot_cache

    entry = snapshot_cache.entry(kb_id)
    current = entry.snapshot
    replaced = dataclasses.replace(current, approximate=approximate)
    if not snapshot_cache._swap(entry, current, replaced):
        raise SystemExit("the snapshot changed under the benchmark")


def recall_at_10(snapshot, approximate, vectors) -> float:
    """Share of the approximate top 10 whose score reaches exact search's tenth."""
    from retrieval.search_backends.snapshots import vector_index

    reached = []
    for query in vectors:
        _, exact = vector_index.nearest(snapshot.matrix, None, query, 10)
        _, found = vector_index.nearest(snapshot.matrix, approximate, query, 10)
        tenth = exact[-1] if len(exact) else 0.0
        reached.append(float((found >= tenth - 1e-6).sum()) / max(len(exact), 1))
    return sum(reached) / len(reached)


def stored_bytes(kb_id: str) -> int:
    folder = SNAPSHOTS / kb_id
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--sizes", type=int, nargs="*", default=[1_000, 10_000, 100_000, 1_000_000]
    )
    parser.add_argument(
        "--reuse", action="store_true", help="keep the chunks of an earlier run"
    )
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()

    os.environ["SEARCH_SNAPSHOT_DIR"] = str(SNAPSHOTS)
    os.environ["SEARCH_WARMUP"] = "false"
    if not args.reuse:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{DATABASE}{suffix}").unlink(missing_ok=True)
    database_url = setup_django(f"sqlite:///{DATABASE}", fresh=False)
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from query_latency import publish_to_visible_ms

    from documents.models import KnowledgeBase
    from retrieval.embeddings import get_embedder
    from retrieval.search import PROFILES
    from retrieval.search_backends.snapshots import vector_index
    from retrieval.search_backends.snapshots.cache import snapshot_cache

    text, questions = cmrc()
    load_sentences(text)
    queries = questions[:100]
    query_vectors = get_embedder().embed_queries(questions[:200])
    from django.db import connections

    connections.close_all()  # the pool's processes never use the database
    with multiprocessing.get_context("fork").Pool(2) as pool:
        for size in args.sizes:
            if not KnowledgeBase.objects.filter(id=f"scale-{size}").exists():
                started = time.perf_counter()
                populate(size, pool)
                print(
                    f"{size:,} chunks written in {time.perf_counter() - started:.0f} s",
                    file=sys.stderr,
                )

    rows, curve, builds, compare, during = [], [], [], [], []
    for size in args.sizes:
        kb_id = f"scale-{size}"
        user = get_user_model().objects.get(username=kb_id)
        shutil.rmtree(SNAPSHOTS / kb_id, ignore_errors=True)
        snapshot_cache.clear()
        started = time.perf_counter()
        snapshot_cache.snapshots([kb_id])
        cold_s = time.perf_counter() - started  # what the first query waits
        meanwhile = searches_while_the_index_builds(snapshot_cache, user, queries)
        snapshot_cache.wait_for("index")
        snapshot = snapshot_cache.snapshots([kb_id])[0]
        build_s = time.perf_counter() - started
        if meanwhile:
            during.append(
                [
                    size,
                    cold_s,
                    build_s,
                    len(meanwhile),
                    median(meanwhile),
                    percentile(meanwhile, 0.95),
                ]
            )
        first_s = median(
            [first_search_seconds(database_url, kb_id, questions[0]) for _ in range(3)]
        )
        p50 = {}
        for profile in PROFILES:
            samples = latencies(user, queries, profile)
            p50[profile] = median(samples)
            rows.append([size, profile, p50[profile], percentile(samples, 0.95)])
        chat = chat_latencies(user, queries[:30])
        rows.append([size, "chat (extractive)", median(chat), percentile(chat, 0.95)])
        curve.append([size, *(p50[p] for p in PROFILES), median(chat)])
        builds.append(
            [
                size,
                "approximate" if snapshot.approximate else "exact",
                build_s,
                first_s,
                snapshot.nbytes() / size,
                stored_bytes(kb_id) / size,
            ]
        )

        if size >= 100_000:
            default = approximate = snapshot.approximate
            if approximate is None:
                started = time.perf_counter()
                approximate = vector_index.build(snapshot.matrix)
                ann_build_s = time.perf_counter() - started
            else:
                ann_build_s = float("nan")
            recall = recall_at_10(snapshot, approximate, query_vectors)
            threshold = settings.SEARCH_ANN_MIN_CHUNKS
            for name, value in (("exact", None), ("approximate", approximate)):
                # Exact: past the threshold the cache would take the stored
                # index up again at the next search.
                settings.SEARCH_ANN_MIN_CHUNKS = threshold if value else size + 1
                served_with(kb_id, value)
                vector = median(latencies(user, queries, "vector"))
                hybrid = latencies(user, queries, "hybrid-v1")
                served = snapshot_cache.snapshots([kb_id])[0]
                if (served.approximate is None) != (value is None):
                    raise SystemExit(f"{name}: the searches used the other vector list")
                compare.append(
                    [
                        size,
                        name,
                        vector,
                        median(hybrid),
                        percentile(hybrid, 0.95),
                        recall if value else 1.0,
                        ann_build_s if value else "",
                    ]
                )
            served_with(kb_id, default)
            settings.SEARCH_ANN_MIN_CHUNKS = threshold

        kb = KnowledgeBase.objects.get(pk=kb_id)
        visible = [
            publish_to_visible_ms(kb, user, SENTENCES[:20], questions[2])
            for _ in range(3)
        ]
        builds[-1] += [median(visible), max(visible)]
        print(builds[-1], file=sys.stderr, flush=True)

    body = "\n\n".join(
        [
            markdown_table(["chunks", "profile", "p50 ms", "p95 ms"], rows),
            "Scale curve (p50 ms):\n\n"
            + markdown_table(
                ["chunks", *(f"{p}" for p in PROFILES), "chat (extractive)"], curve
            ),
            markdown_table(
                [
                    "chunks",
                    "vector list",
                    "cold build of the stored snapshot (and its index) s",
                    "first search of a new process s",
                    "snapshot bytes per chunk",
                    "stored bytes per chunk",
                    "next search after one more published document: median of 3 ms",
                    "max ms",
                ],
                builds,
            ),
            "While the approximate index is built in the background (searches "
            "score the vectors exactly; the build shares the two cores):\n\n"
            + markdown_table(
                [
                    "chunks",
                    "first query waits s",
                    "index ready after s",
                    "searches meanwhile",
                    "hybrid-v1 p50 ms meanwhile",
                    "hybrid-v1 p95 ms meanwhile",
                ],
                during,
            ),
            "Exact and approximate vector list side by side (same snapshot):\n\n"
            + markdown_table(
                [
                    "chunks",
                    "vector list",
                    "vector p50 ms",
                    "hybrid-v1 p50 ms",
                    "hybrid-v1 p95 ms",
                    "recall@10 against exact",
                    "index build s (when not part of the cold build)",
                ],
                compare,
            ),
        ]
    )
    print(body)
    if not args.no_write:
        write_section(
            "million-chunks",
            "A million chunks: scale curve and the approximate vector index",
            f"`python bench/million_chunks.py`: sizes {args.sizes}; "
            f"{len(queries)} CMRC 2018 questions per profile (30 for the chat), "
            "SQLite, snapshots shared through files as on a production host, "
            f"`SEARCH_ANN_MIN_CHUNKS` = {settings.SEARCH_ANN_MIN_CHUNKS:,}. "
            f"Chunks are five CMRC dev sentences each ({len(SENTENCES):,} "
            "sentences), all different. Recall@10 over "
            f"{len(query_vectors)} questions.",
            body,
        )


if __name__ == "__main__":
    main()
