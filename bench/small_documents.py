"""Small documents: the worker's fixed cost per document of a few hundred bytes.

N small Markdown and text files are uploaded into one knowledge base and submitted
through the services people use (`document_upload`, `document_submit`); then a
real in-process `Worker` (one-shot, the parser processes already warm) drains the
queue, timed from its start to its return. Each round does this once per variant;
the variants' order alternates round by round and the figures are medians. A
variant is a value of INGESTION_SMALL_BATCH (1: a claim, a pipeline run and a
success per task, as before issue 38; more: small tasks of one knowledge base and
lane claimed and finished together).

    python bench/small_documents.py [--documents 200] [--rounds 5] [--batches 1 16]
        [--database-url postgres://...] [--profile FILE] [--json FILE|-]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import sys
import time

from common import REPO, markdown_table, median, setup_django, write_section

DATABASE = REPO / "var" / "bench" / "small_documents.sqlite3"
KNOWLEDGE_BASE = "bench-small"


def small_files(count: int) -> list[tuple[str, bytes]]:
    """`count` files of 200 to 600 bytes: Markdown with a heading and two
    paragraphs (English and Chinese), every fourth one plain text."""
    files = []
    for n in range(count):
        words = " ".join(f"rule{n}-{k}" for k in range(n % 7 + 3))
        if n % 4 == 3:
            body = (
                f"Notice {n}\n\nStaff member {n} keeps {words} for the record. "
                f"出差第{n}天的餐饮补助按实际天数计算。\n"
            )
            files.append((f"notice-{n}.txt", body.encode()))
            continue
        body = (
            f"# Policy {n}\n\n## Leave\n\nEvery employee in team {n} receives "
            f"{20 + n % 10} days of annual leave; see {words}.\n\n## 报销\n\n"
            f"出差期间每天发放餐饮补助{100 + n}元，按实际出差天数计算。\n"
        )
        files.append((f"policy-{n}.md", body.encode()))
    return files


def prepare(files: list[tuple[str, bytes]]) -> None:
    """Upload and submit every file as one editor; nothing of it is timed."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    from documents.models import KnowledgeBase, Membership, Role
    from documents.services import document_upload
    from ingestion.services import document_submit

    user = _editor()
    kb, _ = KnowledgeBase.objects.get_or_create(id=KNOWLEDGE_BASE, name="bench")
    Membership.objects.get_or_create(
        user=user, knowledge_base=kb, defaults={"role": Role.EDITOR}
    )
    for name, data in files:
        document = document_upload(
            user=user,
            knowledge_base_id=kb.pk,
            uploaded_file=SimpleUploadedFile(name, data),
        )
        document_submit(user=user, document_id=document.pk)


def _editor():
    from django.contrib.auth import get_user_model

    user, _ = get_user_model().objects.get_or_create(username="bench-editor")
    return user


def reset() -> None:
    """No documents, tasks, chunks, sentence vectors or originals of an earlier
    round (the files repeat from round to round: stored sentence vectors would
    spare a round the model of meaning's work)."""
    from django.core.files.storage import default_storage

    from documents.models import Document
    from ingestion.models import IngestionTask, OutboxEvent
    from retrieval.models import Chunk, SentenceVector

    for key in Document.objects.values_list("storage_key", flat=True):
        default_storage.delete(key)
    Chunk.objects.all().delete()
    SentenceVector.objects.all().delete()
    IngestionTask.objects.all().delete()
    OutboxEvent.objects.all().delete()
    Document.objects.all().delete()


def drain(
    batch: int, meaning: bool = False, *, profile: cProfile.Profile | None = None
) -> float:
    """Seconds for one one-shot worker to drain the queue; with `meaning`, the
    answerer's model of meaning (E5) embeds every sentence too."""
    from django.conf import settings
    from django.test import override_settings

    from ingestion.models import IngestionTask
    from ingestion.worker import Worker
    from retrieval.meaning import get_meaning

    worker = Worker(worker_id=f"bench-small-{batch}", write=lambda line: None)
    model = settings.CHAT_MEANING_PROVIDER if meaning else ""
    # The model of meaning is kept for the life of the process: forgotten here so
    # that the setting counts.
    get_meaning.cache_clear()
    with override_settings(INGESTION_SMALL_BATCH=batch, CHAT_MEANING_PROVIDER=model):
        started = time.perf_counter()
        if profile is not None:
            profile.enable()
        worker.run()
        if profile is not None:
            profile.disable()
        took = time.perf_counter() - started
    get_meaning.cache_clear()
    left = IngestionTask.objects.exclude(status="succeeded").count()
    if left:
        raise RuntimeError(f"{left} tasks did not succeed")
    return took


def run(documents: int, rounds: int, batches: list[int], meaning: bool) -> dict:
    from ingestion.parsers import warm_parser

    files = small_files(documents)
    variants = [(batch, False) for batch in batches]
    if meaning:
        variants += [(batch, True) for batch in batches]
    warm_parser()
    # A first drain, not counted: imports, the parsers' first parse, caches.
    reset()
    prepare(files[: min(20, documents)])
    drain(batches[-1], meaning)
    times: dict[tuple[int, bool], list[float]] = {v: [] for v in variants}
    for round_number in range(rounds):
        order = variants if round_number % 2 == 0 else variants[::-1]
        for batch, with_meaning in order:
            reset()
            prepare(files)
            took = drain(batch, with_meaning)
            times[batch, with_meaning].append(took * 1000 / documents)
    ms = {variant: median(values) for variant, values in times.items()}

    def figures(with_meaning: bool) -> dict:
        first = ms[batches[0], with_meaning]
        return {
            str(batch): {
                "ms_per_document": ms[batch, with_meaning],
                "rounds_ms": [round(v, 2) for v in times[batch, with_meaning]],
                "ratio_to_first": ms[batch, with_meaning] / first,
            }
            for batch in batches
        }

    result = {
        "documents": documents,
        "rounds": rounds,
        "bytes_per_document": round(sum(len(d) for _, d in files) / documents),
        "worker_ms_per_document": ms[batches[-1], False],
        "by_batch": figures(False),
    }
    if meaning:
        result["with_sentence_vectors_ms_per_document"] = ms[batches[-1], True]
        result["by_batch_with_sentence_vectors"] = figures(True)
    return result


def profiled(documents: int, batch: int, path: str) -> str:
    files = small_files(documents)
    reset()
    prepare(files)
    profile = cProfile.Profile()
    drain(batch, profile=profile)
    profile.dump_stats(path)
    out = io.StringIO()
    pstats.Stats(profile, stream=out).sort_stats("cumulative").print_stats(45)
    return out.getvalue()


def table(result: dict, database: str) -> str:
    def rows(key: str, meaning: str) -> list[list]:
        return [
            [
                batch,
                meaning,
                figures["ms_per_document"],
                figures["ratio_to_first"],
                ", ".join(f"{v:.1f}" for v in figures["rounds_ms"]),
            ]
            for batch, figures in result.get(key, {}).items()
        ]

    return (
        f"{result['documents']} documents of about {result['bytes_per_document']} "
        f"bytes, {database}, median of {result['rounds']} rounds:\n\n"
        + markdown_table(
            [
                "INGESTION_SMALL_BATCH",
                "sentence vectors (E5)",
                "ms per document",
                "ratio to the first",
                "rounds (ms)",
            ],
            rows("by_batch", "no") + rows("by_batch_with_sentence_vectors", "yes"),
        )
    )


METHOD = """
`python bench/small_documents.py --write-docs` (`--meaning` adds the rows with
sentence vectors, `--database-url` runs on PostgreSQL). 200 files of about 215
bytes (Markdown with a heading and two short paragraphs in English and Chinese,
every fourth one plain text) are uploaded into
one knowledge base and submitted through `document_upload` and `document_submit`
(not timed); a real in-process `Worker` (one-shot, the parser processes already
warm, the hashing embedder for chunks as in every figure here) drains them, timed
from `run()` to its return; each round runs every variant once, the order
alternating round by round; medians over the rounds. The fixed cost is the run
without the answerer's model of meaning (`CHAT_MEANING_PROVIDER` empty): claim,
transactions, the parser round trip, chunk rows, terms, chunk vector. With it
(`yes`), E5 also embeds every sentence (4 to 5 per file), the documents' own work.
`INGESTION_SMALL_BATCH=1` is the worker before batches: a claim, a heartbeat
thread, a pipeline and a success per task.
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=200, help="files per round")
    parser.add_argument("--rounds", type=int, default=5, help="rounds (median)")
    parser.add_argument(
        "--batches",
        type=int,
        nargs="+",
        default=[1, 16],
        help="INGESTION_SMALL_BATCH values to interleave; the last is reported",
    )
    parser.add_argument(
        "--meaning",
        action="store_true",
        help="also the same variants with the model of meaning embedding sentences",
    )
    parser.add_argument("--database-url", help="default: SQLite under var/bench")
    parser.add_argument("--profile", help="write a cProfile of one drain here")
    parser.add_argument("--json", help="write the result as JSON here (- for stdout)")
    parser.add_argument(
        "--write-docs", action="store_true", help="rewrite the benchmarks.md section"
    )
    args = parser.parse_args()
    if args.database_url is None:
        for suffix in ("", "-wal", "-shm"):
            DATABASE.with_name(DATABASE.name + suffix).unlink(missing_ok=True)
    database = setup_django(args.database_url or f"sqlite:///{DATABASE}")
    engine = "PostgreSQL" if database.startswith("postgres") else "SQLite"
    log = sys.stderr if args.json == "-" else sys.stdout
    if args.profile:
        print(profiled(args.documents, args.batches[-1], args.profile), file=log)
        return
    result = run(args.documents, args.rounds, args.batches, args.meaning)
    result["database"] = engine
    print(table(result, engine), file=log)
    if args.json == "-":
        print(json.dumps(result, indent=2))
    elif args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(result, out, indent=2)
    if args.write_docs:
        write_section(
            f"small-documents-{engine.lower()}",
            "Small documents (issue 38, point 3)"
            if engine == "SQLite"
            else f"Small documents on {engine} (issue 38, point 3)",
            METHOD,
            table(result, engine),
        )


if __name__ == "__main__":
    main()
