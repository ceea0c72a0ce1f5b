"""Ingestion throughput: the corpus through the real worker, against the bare parse.

For the PDFs and the DOCX files of ../shared/corpus, side by side in one run:
- bare: pdfminer.six's default `extract_text` per PDF, python-docx reading every
  paragraph and table cell of each DOCX (one process, like a naive pipeline);
- cold: `manage.py run_ingestion_worker` processes (the cron form, start-up
  included) draining one task per file: download, parse, chunk, embed, write
  chunks, finish;
- warm: one `run_ingestion_worker --loop` already running (the long-lived form),
  from the commit of the tasks to the commit of the last one.
Bare and worker runs are interleaved, repetition by repetition. Also Markdown
documents per second and the start-up time of an idle worker.

    python bench/ingestion_throughput.py [--quick] [--workers 1 2]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from common import CORPUS, REPO, markdown_table, median, setup_django, write_section


def corpus_files(suffix: str) -> list[Path]:
    folder = CORPUS / {".md": "markdown"}.get(suffix, suffix.lstrip("."))
    return sorted(p for p in folder.rglob(f"*{suffix}") if p.is_file())


def bare_pdf(paths: list[Path]) -> float:
    from pdfminer.high_level import extract_text

    started = time.perf_counter()
    for path in paths:
        try:
            extract_text(io.BytesIO(path.read_bytes()))
        except Exception:  # noqa: S112 - damaged and encrypted files are part of it
            continue
    return time.perf_counter() - started


def bare_docx(paths: list[Path]) -> float:
    import docx

    started = time.perf_counter()
    for path in paths:
        try:
            document = docx.Document(io.BytesIO(path.read_bytes()))
            parts = [p.text for p in document.paragraphs]
            for table in document.tables:
                for row in table.rows:
                    parts.extend(cell.text for cell in row.cells)
        except Exception:  # noqa: S112
            continue
    return time.perf_counter() - started


def queue(paths: list[Path], content_type: str) -> None:
    """One task per file, all made visible to workers by one commit."""
    import uuid

    from django.core.files.base import ContentFile
    from django.core.files.storage import default_storage
    from django.db import transaction

    from documents.models import Document, KnowledgeBase
    from ingestion.models import IngestionTask

    kb, _ = KnowledgeBase.objects.get_or_create(id="bench-ingest", name="bench")
    documents = []
    for path in paths:
        document_id = uuid.uuid4()
        key = default_storage.save(
            f"originals/bench/{document_id}{path.suffix}",
            ContentFile(path.read_bytes()),
        )
        documents.append(
            Document(
                id=document_id,
                knowledge_base=kb,
                filename=path.name,
                content_type=content_type,
                size_bytes=path.stat().st_size,
                sha256="0" * 64,
                storage_key=key,
                status="processing",
            )
        )
    with transaction.atomic():
        Document.objects.bulk_create(documents)
        IngestionTask.objects.bulk_create(
            IngestionTask(document_id=document.id) for document in documents
        )


def worker_command(name: str, *options: str) -> list[str]:
    return [
        sys.executable,
        str(REPO / "manage.py"),
        "run_ingestion_worker",
        "--worker-id",
        name,
        *options,
    ]


def drained() -> bool:
    from ingestion.models import IngestionTask

    return not IngestionTask.objects.exclude(
        status__in=["succeeded", "failed", "cancelled"]
    ).exists()


def run_warm_worker(paths: list[Path], content_type: str) -> float:
    """Seconds from the commit of the tasks to the commit of the last one, for a
    worker already running (`--loop`, polling every 10 ms): the pipeline without
    start-up.

    The end is the time of the worker's last `task finished` log line (JSON logs at
    INFO, as in production), which it writes after the task's transaction has
    committed; `finished_at` is stamped when that transaction begins, before the
    chunks are written. This process looks at the database only every 50 ms, so
    that it takes no CPU from the worker and its parsers.
    """
    env = {**os.environ, "LOG_LEVEL": "INFO", "LOG_FORMAT": "json"}
    with tempfile.TemporaryFile("w+", encoding="utf-8") as log:
        worker = subprocess.Popen(
            worker_command("bench-warm", "--loop", "--poll-interval", "0.01"),
            cwd=REPO,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
        try:
            time.sleep(3)  # start-up and the parser processes, not measured
            reset_queue()
            queue(paths, content_type)
            started = time.time()
            while not drained():
                time.sleep(0.05)
        finally:
            worker.terminate()
            worker.wait(timeout=60)
        log.seek(0)
        # The parser processes share its stderr, without Django's log format.
        entries = [json.loads(line) for line in log if line.startswith("{")]
        ends = [
            datetime.fromisoformat(entry["time"]).timestamp()
            for entry in entries
            if entry["message"].startswith("task finished ")
            # A turn given up is not the end of its task (issue 35).
            and "outcome=yielded" not in entry["message"]
        ]
    if len(ends) != len(paths):
        raise RuntimeError(f"{len(ends)} tasks logged as finished, not {len(paths)}")
    return max(ends) - started


def run_workers(count: int) -> float:
    env = {**os.environ, "LOG_LEVEL": "WARNING"}
    started = time.perf_counter()
    processes = [
        subprocess.Popen(
            worker_command(f"bench-{n}"),
            cwd=REPO,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for n in range(count)
    ]
    for process in processes:
        _, stderr = process.communicate(timeout=1800)
        if process.returncode:
            raise RuntimeError(stderr.decode()[-2000:])
    return time.perf_counter() - started


def outcomes() -> str:
    from django.db.models import Count

    from ingestion.models import IngestionTask

    counts = IngestionTask.objects.values("status", "error_code").annotate(
        n=Count("pk")
    )
    return ", ".join(
        f"{row['n']} {row['error_code'] or row['status']}"
        for row in counts.order_by("-n")
    )


def reset_queue() -> None:
    from documents.models import Document
    from ingestion.models import IngestionTask

    IngestionTask.objects.all().delete()
    Document.objects.all().delete()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="one repetition")
    parser.add_argument("--workers", type=int, nargs="*", default=[1, 2])
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    # DOCX runs take seconds, and its bare parse varies by a quarter between runs
    # here: more of them steady its median.
    repeats = {"PDF": 1, "DOCX": 1} if args.quick else {"PDF": 3, "DOCX": 5}

    setup_django()
    pdfs = corpus_files(".pdf")
    docxs = corpus_files(".docx")
    markdowns = corpus_files(".md")
    if not pdfs:
        print("../shared/corpus is not present; nothing to measure")
        return

    rows = []
    for label, paths, bare, content_type in (
        ("PDF", pdfs, bare_pdf, "application/pdf"),
        (
            "DOCX",
            docxs,
            bare_docx,
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        ),
    ):
        runs = [(f"cold, {n} process(es)", n) for n in args.workers] + [
            ("warm, 1 process", 0)
        ]
        # Interleaved, so that the machine's drift hits bare and worker alike.
        bare_samples: list[float] = []
        samples: dict[str, list[float]] = {mode: [] for mode, _ in runs}
        for _ in range(repeats[label]):
            bare_samples.append(bare(paths))
            for mode, workers in runs:
                if workers:
                    reset_queue()
                    queue(paths, content_type)
                    samples[mode].append(run_workers(workers))
                else:
                    samples[mode].append(run_warm_worker(paths, content_type))
        bare_seconds = median(bare_samples)
        for mode, _ in runs:
            worker_seconds = median(samples[mode])
            rows.append(
                [
                    label,
                    len(paths),
                    mode,
                    bare_seconds,
                    worker_seconds,
                    worker_seconds / bare_seconds,
                    ", ".join(
                        f"{worker_run / bare_run:.2f}"
                        for worker_run, bare_run in zip(
                            samples[mode], bare_samples, strict=True
                        )
                    ),
                    outcomes(),
                ]
            )
            print(rows[-1], flush=True)

    markdown_docs = (markdowns * 20)[:200]
    reset_queue()
    queue(markdown_docs, "text/markdown")
    markdown_seconds = run_workers(1)
    startup = median([run_workers(1) for _ in range(5)])  # empty queue: start-up only

    table = markdown_table(
        [
            "files",
            "count",
            "worker",
            "bare parse s",
            "worker run s",
            "worker / bare",
            "each run's worker / its bare",
            "outcomes",
        ],
        rows,
    )
    extra = markdown_table(
        ["measure", "value"],
        [
            [
                "Markdown documents per second (1 worker, 200 documents)",
                len(markdown_docs) / markdown_seconds,
            ],
            ["idle worker start-up to exit, s (median of 5)", startup],
        ],
    )
    body = f"{table}\n\n{extra}\n"
    print(body)
    if not args.no_write:
        write_section(
            "ingestion-throughput",
            "Ingestion throughput",
            f"`python bench/ingestion_throughput.py{' --quick' if args.quick else ''}`:"
            " every PDF and DOCX of `../shared/corpus` (damaged, encrypted and "
            "image-only files included), bare parse against the whole worker run "
            "into SQLite: `cold` = `run_ingestion_worker` processes started after "
            "the tasks were queued (the cron form, start-up included), `warm` = one "
            "`run_ingestion_worker --loop` already running, logging at INFO (from "
            "the commit of the tasks to its log line for the last task committed). "
            "Bare and worker runs interleaved; "
            f"median of {repeats['PDF']} (PDF) and {repeats['DOCX']} (DOCX). "
            "Bare PDF = pdfminer.six "
            "`extract_text` with its default layout analysis; bare DOCX = "
            "python-docx reading every paragraph and table cell. Targets: PDF worker "
            "/ bare ≤ 0.5; DOCX overhead above the parse ≤ 30 %.",
            body,
        )


if __name__ == "__main__":
    main()
