"""What the semantic embedder (e5-small) costs beside the hashing one.

- Ingestion: Chinese documents (CMRC 2018 dev contexts, 10 to a `.txt`, about 500
  characters a chunk) and English ones (TAT-QA dev items, 10 to a `.md`: tables as
  Markdown rows, then paragraphs) through `run_ingestion_worker --loop` processes
  already running (bench/ingestion_throughput.py's warm form): chunks per second
  from the commit of the tasks to the log line of the last one. Per embedder; for
  e5-small also with EMBEDDING_THREADS=2, with two workers, and with the answerer's
  sentence vectors made at ingestion (CHAT_MEANING_PROVIDER=e5-small, its
  default; the other runs leave it empty, to measure the chunks' embedder alone).
- Memory, at the end of each ingestion run: resident (RSS), proportional (PSS:
  shared pages split among the processes mapping them, such as the model file)
  and peak resident memory of the worker and of its parser processes.
- Search: 10,000 published chunks (bench/query_latency.py's knowledge base; each
  distinct text embedded once), 100 CMRC questions, p50/p95 per profile in one
  process, the question embedded by the embedder as a question; then a new process
  as after a restart: its first search, and its memory after it.

Each measurement runs in a process of its own with its own SQLite database under
--scratch. Writes the "embedder-ingestion" and "embedder-search" sections of
docs/benchmarks.md.

    python bench/embedder_costs.py [--quick] [--scratch DIR] [--no-write]
        [--skip-ingestion] [--skip-search]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime
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

EMBEDDERS = ("hashing", "e5-small")
PER_DOCUMENT = 10  # passages per uploaded document


# --- runs, each in a process of its own ---------------------------------------------


def documents(language: str, count: int) -> list[tuple[str, bytes]]:
    """`count` documents of PER_DOCUMENT passages: (filename, content)."""
    from workbench.evaluation.datasets import load_dataset

    path = {
        "zh": CORPUS / "retrieval/cmrc2018/cmrc2018_dev.json",
        "en": CORPUS / "retrieval/tat-qa/tatqa_dataset_dev.json",
    }[language]
    passages = load_dataset(path).passages
    suffix = ".txt" if language == "zh" else ".md"
    return [
        (
            f"{language}-{n}{suffix}",
            "\n\n".join(
                passage.content
                for passage in passages[n * PER_DOCUMENT : (n + 1) * PER_DOCUMENT]
            ).encode(),
        )
        for n in range(count)
    ]


def queue(files: list[tuple[str, bytes]]) -> None:
    import uuid

    from django.core.files.base import ContentFile
    from django.core.files.storage import default_storage
    from django.db import transaction

    from documents.models import Document, KnowledgeBase
    from ingestion.models import IngestionTask

    kb, _ = KnowledgeBase.objects.get_or_create(id="bench-embed", name="bench")
    rows = []
    for filename, content in files:
        document_id = uuid.uuid4()
        key = default_storage.save(
            f"originals/bench/{document_id}-{filename}", ContentFile(content)
        )
        rows.append(
            Document(
                id=document_id,
                knowledge_base=kb,
                filename=filename,
                content_type="text/plain"
                if filename.endswith(".txt")
                else "text/markdown",
                size_bytes=len(content),
                sha256="0" * 64,
                storage_key=key,
                status="processing",
            )
        )
    with transaction.atomic():
        Document.objects.bulk_create(rows)
        IngestionTask.objects.bulk_create(
            IngestionTask(document_id=row.id) for row in rows
        )


def memory_of(pid: int) -> dict[str, float]:
    """RSS, PSS and peak RSS of a process, in MiB."""
    values = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(("VmRSS:", "VmHWM:")):
                values[line[:5]] = int(line.split()[1]) / 1024
    with open(f"/proc/{pid}/smaps_rollup") as rollup:
        for line in rollup:
            if line.startswith("Pss:"):
                values["Pss"] = int(line.split()[1]) / 1024
    return {"rss": values["VmRSS"], "pss": values["Pss"], "peak": values["VmHWM"]}


def descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    parent = int(stat.read().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
            children.setdefault(parent, []).append(int(entry))
    found, pending = [], [pid]
    while pending:
        for child in children.get(pending.pop(), []):
            found.append(child)
            pending.append(child)
    return found


def run_ingestion(language: str, count: int, workers: int) -> dict:
    """Seconds from the commit of the tasks to the last `task finished` line of
    `workers` running workers, the chunks made, and the processes' memory."""
    from django.db.models import Count

    from ingestion.models import IngestionTask
    from retrieval.models import Chunk

    files = documents(language, count)
    with contextlib.ExitStack() as stack:
        logs = [
            stack.enter_context(tempfile.TemporaryFile("w+", encoding="utf-8"))
            for _ in range(workers)
        ]
        started, memory = drain(files, logs)
        ends = []
        for log in logs:
            log.seek(0)
            for line in log:
                if line.startswith("{"):
                    entry = json.loads(line)
                    if entry["message"].startswith("task finished "):
                        ends.append(datetime.fromisoformat(entry["time"]).timestamp())
    outcomes = dict(IngestionTask.objects.values_list("status").annotate(n=Count("pk")))
    return {
        "seconds": max(ends) - started,
        "chunks": Chunk.objects.count(),
        "documents": len(files),
        "outcomes": outcomes,
        "memory": memory,
    }


def drain(files: list[tuple[str, bytes]], logs: list) -> tuple[float, dict]:
    """Queue `files` for one running worker per log; when they are done, the time
    they were queued at and the first worker's memory and its parsers'."""
    from ingestion.models import IngestionTask

    env = {**os.environ, "LOG_LEVEL": "INFO", "LOG_FORMAT": "json"}
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                str(REPO / "manage.py"),
                "run_ingestion_worker",
                "--worker-id",
                f"bench-{n}",
                "--loop",
                "--poll-interval",
                "0.01",
            ],
            cwd=REPO,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
        for n, log in enumerate(logs)
    ]
    try:
        time.sleep(5)  # start-up and the parser processes, not measured
        queue(files)
        started = time.time()
        while IngestionTask.objects.exclude(
            status__in=["succeeded", "failed", "cancelled"]
        ).exists():
            time.sleep(0.05)
        worker = processes[0].pid
        # The parser server and the parsers it forked (the server is the first).
        parsers = descendants(worker)
        memory = {
            "worker": memory_of(worker),
            "parsers": [memory_of(pid) for pid in parsers[1:]],
        }
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=60)
    return started, memory


FIRST_SEARCH = """
import sys, time
sys.path.insert(0, "bench")
from common import setup_django
setup_django(sys.argv[1], fresh=False)
from django.contrib.auth import get_user_model
from retrieval.search import search
from embedder_costs import memory_of
import os
user = get_user_model().objects.get(username=sys.argv[2])
started = time.perf_counter()
search(user=user, question=sys.argv[3], profile="hybrid-v1")
print(time.perf_counter() - started, memory_of(os.getpid())["rss"],
      memory_of(os.getpid())["pss"], memory_of(os.getpid())["peak"])
"""


def run_search(size: int, query_count: int) -> dict:
    from query_latency import load_texts_and_questions, populate, timed

    from retrieval.search import PROFILES, search
    from retrieval.search_backends.snapshots import cache

    texts, questions = load_texts_and_questions()
    questions = questions[:query_count]
    started = time.perf_counter()
    _, user = populate(size, texts)
    populate_seconds = time.perf_counter() - started
    cache.snapshot_cache.clear()
    rows = {}
    for profile in PROFILES:
        search(user=user, question=questions[0], profile=profile)  # warm
        samples = []
        for question in questions:
            samples += timed(
                lambda q=question, p=profile: search(user=user, question=q, profile=p),
                1,
            )
        rows[profile] = [median(samples), percentile(samples, 0.95)]
    first = []
    for _ in range(3):
        out = subprocess.run(
            [
                sys.executable,
                "-c",
                FIRST_SEARCH,
                os.environ["DATABASE_URL"],
                user.username,
                questions[1],
            ],
            check=True,
            capture_output=True,
            text=True,
            cwd=REPO,
            env={**os.environ, "SEARCH_SNAPSHOT_DIR": ""},
        ).stdout
        first.append([float(value) for value in out.split()[-4:]])
    return {
        "profiles": rows,
        "populate_seconds": populate_seconds,
        "first_search": [median([run[i] for run in first]) for i in range(4)],
    }


def child(args: argparse.Namespace) -> None:
    os.environ["EMBEDDING_PROVIDER"] = args.embedder
    os.environ["EMBEDDING_THREADS"] = str(args.threads)
    os.environ["CHAT_MEANING_PROVIDER"] = args.meaning
    os.environ["SEARCH_SNAPSHOT_DIR"] = ""
    os.environ["MEDIA_ROOT"] = str(args.scratch / "media")
    database = args.scratch / "bench.sqlite3"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{database}{suffix}").unlink(missing_ok=True)
    setup_django(f"sqlite:///{database}")
    if args.run == "ingestion":
        result = run_ingestion(args.language, args.documents, args.workers)
    else:
        result = run_search(args.size, args.queries)
    print("RESULT " + json.dumps(result), flush=True)


# --- the whole benchmark ----------------------------------------------------------


def measure(scratch: Path, *options: str) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--scratch", str(scratch), *options],
        check=True,
        capture_output=True,
        text=True,
        cwd=REPO,
    ).stdout
    result = json.loads(out.split("RESULT ", 1)[1])
    print(options, json.dumps(result)[:300], flush=True)
    return result


# (embedder, EMBEDDING_THREADS, workers, CHAT_MEANING_PROVIDER)
CONFIGURATIONS = (
    ("hashing", 1, 1, ""),
    ("e5-small", 1, 1, ""),
    ("e5-small", 2, 1, ""),
    ("e5-small", 1, 2, ""),
    ("e5-small", 1, 1, "e5-small"),
)


def ingestion_rows(scratch: Path, repeats: int, count: int) -> tuple[list, list]:
    rows, memory = [], []
    for embedder, threads, workers, meaning in CONFIGURATIONS:
        for language in ("zh", "en"):
            runs = [
                measure(
                    scratch,
                    "--run",
                    "ingestion",
                    "--embedder",
                    embedder,
                    "--threads",
                    str(threads),
                    "--workers",
                    str(workers),
                    "--meaning",
                    meaning,
                    "--language",
                    language,
                    "--documents",
                    str(count),
                )
                for _ in range(repeats)
            ]
            rates = [run["chunks"] / run["seconds"] for run in runs]
            setting = (embedder, threads, workers, meaning or "(none)")
            rows.append(
                [
                    *setting,
                    {"zh": "Chinese (.txt)", "en": "English (.md)"}[language],
                    runs[0]["chunks"],
                    median(rates),
                    ", ".join(f"{rate:.3g}" for rate in rates),
                ]
            )
            last = runs[-1]["memory"]
            parsers = last["parsers"]
            memory.append(
                [
                    *setting,
                    language,
                    last["worker"]["rss"],
                    last["worker"]["pss"],
                    last["worker"]["peak"],
                    " / ".join(f"{p['rss']:.0f}" for p in parsers),
                    " / ".join(f"{p['pss']:.0f}" for p in parsers),
                    " / ".join(f"{p['peak']:.0f}" for p in parsers),
                ]
            )
    return rows, memory


def ingestion_section(args: argparse.Namespace, repeats: int, count: int) -> str:
    rows, memory = ingestion_rows(args.scratch, repeats, count)
    setting = ["embedder", "threads", "workers", "meaning"]
    return (
        markdown_table(
            [*setting, "documents", "chunks", "chunks/s (median)", "each run"], rows
        )
        + "\n\nMemory at the end of the last run, MiB (the first worker, and its "
        "two parser processes: the first parsed and embedded every document, the "
        "second waits for PDFs and large DOCX files):\n\n"
        + markdown_table(
            [
                *setting,
                "documents",
                "worker RSS",
                "worker PSS",
                "worker peak",
                "parsers RSS",
                "parsers PSS",
                "parsers peak",
            ],
            memory,
        )
    )


def search_section(args: argparse.Namespace) -> str:
    search_rows, restart_rows = [], []
    for embedder in EMBEDDERS:
        result = measure(
            args.scratch,
            "--run",
            "search",
            "--embedder",
            embedder,
            "--queries",
            "30" if args.quick else "100",
        )
        for profile, (p50, p95) in result["profiles"].items():
            search_rows.append([embedder, profile, p50, p95])
        first, rss, pss, peak = result["first_search"]
        restart_rows.append(
            [embedder, first * 1000, rss, pss, peak, result["populate_seconds"]]
        )
    return (
        "Search at 10,000 chunks, ms:\n\n"
        + markdown_table(["embedder", "profile", "p50", "p95"], search_rows)
        + "\n\nA new web process after its first `hybrid-v1` search (median of 3; "
        "MiB):\n\n"
        + markdown_table(
            [
                "embedder",
                "first search ms",
                "RSS",
                "PSS",
                "peak RSS",
                "making the 10,000 chunks (2,170 distinct texts embedded), s",
            ],
            restart_rows,
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one run, fewer files")
    parser.add_argument(
        "--scratch",
        type=Path,
        default=Path(tempfile.gettempdir()) / "curator-embedder-costs",
        help="where each run's database and files go (emptied first)",
    )
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument("--skip-ingestion", action="store_true")
    parser.add_argument("--skip-search", action="store_true")
    # One measurement (the runs above start this script with these).
    parser.add_argument("--run", choices=("ingestion", "search"), default=None)
    parser.add_argument("--embedder", choices=EMBEDDERS, default="hashing")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--meaning", default="", help="CHAT_MEANING_PROVIDER")
    parser.add_argument("--language", choices=("zh", "en"), default="zh")
    parser.add_argument("--documents", type=int, default=6)
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args()
    if args.run:
        child(args)
        return

    shutil.rmtree(args.scratch, ignore_errors=True)
    args.scratch.mkdir(parents=True)
    repeats, count = (1, 2) if args.quick else (3, 4)
    command = f"`python bench/embedder_costs.py{' --quick' if args.quick else ''}`"
    method = __doc__.split("\n\n", 1)[1].split("\n\n    ")[0]
    if not args.skip_ingestion:
        body = ingestion_section(args, repeats, count)
        print(body)
        if not args.no_write:
            write_section(
                "embedder-ingestion",
                "A semantic embedder: ingestion and memory",
                f"{command} (median of {repeats} runs; {count} documents of "
                f"{PER_DOCUMENT} passages a run; meaning: CHAT_MEANING_PROVIDER, "
                f"whose sentence vectors the worker makes beside the chunks').\n\n"
                + method.split("\n- Search")[0],
                body,
            )
    if not args.skip_search:
        body = search_section(args)
        print(body)
        if not args.no_write:
            write_section(
                "embedder-search",
                "A semantic embedder: search latency and a web process's memory",
                f"{command}: {method.split(chr(10) + '- Search: ')[1]}",
                body,
            )


if __name__ == "__main__":
    main()
