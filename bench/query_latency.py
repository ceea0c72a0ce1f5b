"""Query latency and snapshot memory at 1k, 10k and 100k published chunks.

Chunks are real Chinese text (CMRC 2018 contexts, cut into ~250-character pieces)
written straight into the chunk table with what ingestion stores with them (the
vector from the real embedder, the search terms of `retrieval.terms`); the
questions are CMRC questions. Per size and profile: search p50/p95 over the same
questions, the cold snapshot build, the first search of a process just started
(a server restart: Django set up, then one `hybrid-v1` search, timed), how long
one more published document takes to show in the next query, and snapshot memory
per chunk. At 10k chunks a naive baseline rebuilds the index from the database on
every query, side by side.

    python bench/query_latency.py [--quick] [--sizes 1000 10000 100000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import uuid

from common import (
    CORPUS,
    REPO,
    markdown_table,
    median,
    percentile,
    setup_django,
    write_section,
)

PIECE = 250


def load_texts_and_questions() -> tuple[list[str], list[str]]:
    data = json.loads((CORPUS / "retrieval/cmrc2018/cmrc2018_dev.json").read_text())
    texts, questions = [], []
    for article in data["data"]:
        for paragraph in article["paragraphs"]:
            context = paragraph["context"]
            texts.extend(context[i : i + PIECE] for i in range(0, len(context), PIECE))
            questions.extend(qa["question"] for qa in paragraph["qas"])
    return texts, questions


def populate(size: int, texts: list[str]):
    """A published knowledge base holding `size` chunks."""
    from django.contrib.auth import get_user_model

    from documents.models import Document, KnowledgeBase, Membership
    from retrieval.embeddings import get_embedder, to_bytes
    from retrieval.models import Chunk
    from retrieval.terms import TOKENIZER, chunk_terms

    kb = KnowledgeBase.objects.create(id=f"bench-{size}", name=f"bench {size}")
    user = get_user_model().objects.create(username=f"bench-{size}")
    Membership.objects.create(user=user, knowledge_base=kb, role="viewer")
    embedder = get_embedder()
    per_document = 20
    # The texts repeat past the corpus' size: their terms and vectors are made once
    # (a semantic embedder takes about a second a text).
    made: dict[str, object] = {}
    vectors_of: dict[str, object] = {}
    for start in range(0, size, 2000):
        batch = [
            texts[(start + i) % len(texts)] for i in range(min(2000, size - start))
        ]
        new = [text for text in dict.fromkeys(batch) if text not in vectors_of]
        if new:
            vectors_of.update(zip(new, embedder.embed(new), strict=True))
        vectors = [vectors_of[text] for text in batch]
        documents = []
        chunks = []
        for offset, (text, vector) in enumerate(zip(batch, vectors, strict=True)):
            index = start + offset
            if index % per_document == 0:
                documents.append(
                    Document(
                        id=uuid.uuid4(),
                        knowledge_base=kb,
                        filename=f"doc-{index // per_document}.md",
                        content_type="text/markdown",
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
                    ordinal=index % per_document,
                    text=text,
                    heading_path=[],
                    char_start=0,
                    char_end=len(text),
                    embedding=to_bytes(vector),
                    embedding_model=embedder.name,
                    **_stored_terms(made, text, chunk_terms),
                    tokenizer=TOKENIZER,
                )
            )
        Document.objects.bulk_create(documents)
        Chunk.objects.bulk_create(chunks, batch_size=1000)
    KnowledgeBase.objects.filter(pk=kb.pk).update(index_version=1)
    return kb, user


def _stored_terms(made: dict, text: str, chunk_terms) -> dict:
    if text not in made:
        made[text] = chunk_terms(text)
    terms = made[text]
    return {"terms": terms.terms, "term_count": terms.length, "folds": terms.folds}


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
    """The first search of a new process, as after a server restart."""
    out = subprocess.run(
        [sys.executable, "-c", FIRST_SEARCH, database_url, username, question],
        check=True,
        capture_output=True,
        text=True,
        cwd=REPO,
    ).stdout
    return float(out.strip().splitlines()[-1])


def publish_to_visible_ms(kb, user, texts: list[str], question: str) -> float:
    """One more published document of 20 chunks: the time of the next search,
    which brings the snapshot up to date."""
    from retrieval.search import search

    publish_one(kb, texts)
    started = time.perf_counter()
    search(user=user, question=question, profile="hybrid-v1")
    return (time.perf_counter() - started) * 1000


def publish_one(kb, texts: list[str]) -> None:
    """One more published document of 20 chunks, its rows written as ingestion
    writes them, and the knowledge base's index version moved."""
    from django.db.models import F

    from documents.models import Document, KnowledgeBase
    from retrieval.embeddings import get_embedder, to_bytes
    from retrieval.models import Chunk
    from retrieval.terms import TOKENIZER, chunk_terms

    embedder = get_embedder()
    document = Document.objects.create(
        knowledge_base=kb,
        filename=f"late-{uuid.uuid4().hex}.md",
        content_type="text/markdown",
        size_bytes=1,
        sha256="0" * 64,
        storage_key="bench",
        status="published",
    )
    batch = texts[:20]
    Chunk.objects.bulk_create(
        Chunk(
            document=document,
            knowledge_base=kb,
            ordinal=ordinal,
            text=text,
            heading_path=[],
            char_start=0,
            char_end=len(text),
            embedding=to_bytes(vector),
            embedding_model=embedder.name,
            **_stored_terms({}, text, chunk_terms),
            tokenizer=TOKENIZER,
        )
        for ordinal, (text, vector) in enumerate(
            zip(batch, embedder.embed(batch), strict=True)
        )
    )
    KnowledgeBase.objects.filter(pk=kb.pk).update(index_version=F("index_version") + 1)


def timed(call, repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--quick",
        action="store_true",
        help="1k and 10k only, fewer queries, one naive rebuild",
    )
    parser.add_argument("--sizes", type=int, nargs="*", default=None)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    sizes = args.sizes or ([1_000, 10_000] if args.quick else [1_000, 10_000, 100_000])
    query_count = 30 if args.quick else 100

    # Each process keeps its own snapshot here (bench/snapshot_sharing.py measures
    # the shared ones).
    os.environ["SEARCH_SNAPSHOT_DIR"] = ""
    database_url = setup_django()
    from retrieval.search import PROFILES, search
    from retrieval.search_backends.snapshots import cache

    texts, questions = load_texts_and_questions()
    questions = questions[:query_count]
    rows, scale, memory, visible = [], [], [], []
    naive_ratio = None
    for size in sizes:
        kb, user = populate(size, texts)
        cache.snapshot_cache.clear()
        started = time.perf_counter()
        snapshot = cache.snapshot_cache.snapshots([kb.pk])[0]
        build_seconds = time.perf_counter() - started
        first = median(
            [
                first_search_seconds(database_url, user.username, questions[0])
                for _ in range(3)
            ]
        )
        memory.append(
            [
                size,
                build_seconds,
                first,
                snapshot.nbytes() / size,
                snapshot.matrix.shape[1],
            ]
        )
        p50s = {}
        for profile in PROFILES:
            search(user=user, question=questions[0], profile=profile)  # warm
            samples = []
            for question in questions:
                samples += timed(
                    lambda q=question, p=profile, u=user: search(
                        user=u, question=q, profile=p
                    ),
                    1,
                )
            p50s[profile] = median(samples)
            rows.append([size, profile, median(samples), percentile(samples, 0.95)])
        scale.append([size, *(p50s[p] for p in PROFILES)])
        try:
            from retrieval.answers.chat import chat_answer

            samples = []
            for question in questions[:30]:
                samples += timed(
                    lambda q=question, u=user: chat_answer(user=u, question=q), 1
                )
            rows.append(
                [size, "chat (extractive)", median(samples), percentile(samples, 0.95)]
            )
        except ImportError:
            pass

        visible.append([size, publish_to_visible_ms(kb, user, texts, questions[2])])

        if size == 10_000:

            def naive(question=questions[1], u=user):
                cache.snapshot_cache.clear()
                search(user=u, question=question, profile="hybrid-v1")

            # About 10 s a query: one in the quick run (the ratio is in the 1000s).
            naive_samples = timed(naive, 1 if args.quick else 5)
            naive_ratio = (median(naive_samples), p50s["hybrid-v1"])
            cache.snapshot_cache.clear()

    table = markdown_table(["chunks", "profile", "p50 ms", "p95 ms"], rows)
    memory_table = markdown_table(
        [
            "chunks",
            "cold snapshot build s",
            "first search of a new process s",
            "snapshot bytes per chunk",
            "vector dims",
        ],
        memory,
    )
    visible_table = markdown_table(
        ["chunks", "next search after one more published document ms"], visible
    )
    scale_table = markdown_table(["chunks", *(f"{p} p50 ms" for p in PROFILES)], scale)
    body = (
        f"{table}\n\n{memory_table}\n\n{visible_table}\n\n"
        f"Scale curve (search p50):\n\n{scale_table}\n"
    )
    if naive_ratio:
        body += (
            f"\nNaive baseline at 10,000 chunks (rebuild the index from the database "
            f"on every query): p50 {naive_ratio[0]:.0f} ms against "
            f"{naive_ratio[1]:.1f} ms for `hybrid-v1` on the snapshot, "
            f"**{naive_ratio[0] / naive_ratio[1]:.0f}x** faster.\n"
        )
    print(body)
    if not args.no_write:
        write_section(
            "query-latency",
            "Query latency and snapshot memory",
            f"`python bench/query_latency.py{' --quick' if args.quick else ''}`: "
            f"{len(questions)} CMRC 2018 questions per size and profile against one "
            "knowledge base of published chunks (CMRC contexts cut into "
            f"{PIECE}-character pieces), SQLite, one process; p50/p95 of single "
            "queries in milliseconds, measured through `retrieval.search.search` "
            "(visibility, index-version check, scoring, rerank, passage assembly).",
            body,
        )


if __name__ == "__main__":
    main()
