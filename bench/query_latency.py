"""Query latency and snapshot memory at 1k, 10k and 100k published chunks.

Chunks are real Chinese text (CMRC 2018 contexts, cut into ~250-character pieces)
written straight into the chunk table with vectors from the real embedder; the
questions are CMRC questions. Per size and profile: search p50/p95 over the same
questions, the cold snapshot build, and snapshot memory per chunk. At 10k chunks a
naive baseline rebuilds the index from the database on every query, side by side.

    python bench/query_latency.py [--quick] [--sizes 1000 10000 100000]
"""

from __future__ import annotations

import argparse
import json
import time
import uuid

from common import (
    CORPUS,
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

    kb = KnowledgeBase.objects.create(id=f"bench-{size}", name=f"bench {size}")
    user = get_user_model().objects.create(username=f"bench-{size}")
    Membership.objects.create(user=user, knowledge_base=kb, role="viewer")
    embedder = get_embedder()
    per_document = 20
    for start in range(0, size, 2000):
        batch = [
            texts[(start + i) % len(texts)] for i in range(min(2000, size - start))
        ]
        vectors = embedder.embed(batch)
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
                )
            )
        Document.objects.bulk_create(documents)
        Chunk.objects.bulk_create(chunks, batch_size=1000)
    KnowledgeBase.objects.filter(pk=kb.pk).update(index_version=1)
    return kb, user


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

    setup_django()
    from retrieval import index
    from retrieval.search import PROFILES, search

    texts, questions = load_texts_and_questions()
    questions = questions[:query_count]
    rows, scale, memory = [], [], []
    naive_ratio = None
    for size in sizes:
        kb, user = populate(size, texts)
        index.snapshot_cache.clear()
        started = time.perf_counter()
        snapshot = index.snapshot_cache.snapshots([kb.pk])[0]
        build_seconds = time.perf_counter() - started
        memory.append(
            [size, build_seconds, snapshot.nbytes() / size, snapshot.matrix.shape[1]]
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

        if size == 10_000:

            def naive(question=questions[1], u=user):
                index.snapshot_cache.clear()
                search(user=u, question=question, profile="hybrid-v1")

            # About 10 s a query: one in the quick run (the ratio is in the 1000s).
            naive_samples = timed(naive, 1 if args.quick else 5)
            naive_ratio = (median(naive_samples), p50s["hybrid-v1"])
            index.snapshot_cache.clear()

    table = markdown_table(["chunks", "profile", "p50 ms", "p95 ms"], rows)
    memory_table = markdown_table(
        ["chunks", "cold snapshot build s", "snapshot bytes per chunk", "vector dims"],
        memory,
    )
    scale_table = markdown_table(["chunks", *(f"{p} p50 ms" for p in PROFILES)], scale)
    body = f"{table}\n\n{memory_table}\n\nScale curve (search p50):\n\n{scale_table}\n"
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
