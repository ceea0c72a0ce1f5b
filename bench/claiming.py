"""Claim-and-complete throughput of N worker processes with a no-op pipeline.

Each process runs the real claim path (`Worker.claim_next`: expired-lease reclaim,
candidate read, conditional UPDATE with a fresh claim token) and completes each task
with the real guarded success transition, until the queue is empty. Side by side on
PostgreSQL, a reference claimer takes the next task with
`select_for_update(skip_locked=True)` (the mechanism of the best database queues)
and completes it the same way.

    python bench/claiming.py [--quick] [--tasks 5000] [--workers 1 2 4 8]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import time

from common import POSTGRES_URL, markdown_table, median, setup_django, write_section


def fill_queue(count: int) -> None:
    import uuid

    from django.db import connection

    from documents.models import Document, KnowledgeBase
    from ingestion.models import IngestionTask

    IngestionTask.objects.all().delete()
    Document.objects.all().delete()
    kb, _ = KnowledgeBase.objects.get_or_create(id="bench-claim", name="bench")
    documents = [
        Document(
            id=uuid.uuid4(),
            knowledge_base=kb,
            filename=f"n{n}.md",
            content_type="text/markdown",
            size_bytes=1,
            sha256="0" * 64,
            storage_key="bench",
            status="processing",
        )
        for n in range(count)
    ]
    Document.objects.bulk_create(documents, batch_size=1000)
    IngestionTask.objects.bulk_create(
        [IngestionTask(document_id=document.pk) for document in documents],
        batch_size=1000,
    )
    if connection.vendor == "postgresql":
        # Every run starts from the same tables: no dead rows of the run before,
        # fresh statistics, whatever autovacuum happened to do meanwhile.
        with connection.cursor() as cursor:
            for model in (Document, IngestionTask):
                cursor.execute(f"VACUUM ANALYZE {model._meta.db_table}")


def drain(database_url: str, mechanism: str, name: str, ready, start, results) -> None:
    setup_django(database_url, fresh=False)
    from django.db import connection, transaction
    from django.db.models import F
    from django.utils import timezone

    from ingestion import claims
    from ingestion.models import IngestionTask
    from ingestion.worker import Worker

    worker = Worker(worker_id=name, write=lambda line: None)
    done = 0
    connection.ensure_connection()
    ready.put(name)
    start.wait()
    while True:
        if mechanism == "conditional-update":
            claim = worker.claim_next()
        else:
            now = timezone.now()
            with transaction.atomic():
                task = (
                    IngestionTask.objects.select_for_update(skip_locked=True)
                    .claimable(now)
                    .order_by("available_at", "created_at")
                    .values("pk", "document_id")
                    .first()
                )
                if task is not None:
                    token = __import__("uuid").uuid4()
                    IngestionTask.objects.filter(pk=task["pk"]).update(
                        status="running",
                        worker_id=name,
                        claim_token=token,
                        attempt=F("attempt") + 1,
                        started_at=now,
                        updated_at=now,
                    )
            claim = (
                None
                if task is None
                else claims.TaskClaim(
                    task_id=task["pk"],
                    document_id=task["document_id"],
                    worker_id=name,
                    claim_token=token,
                    attempt=1,
                )
            )
        if claim is None:
            break
        claims.ingestion_task_succeed(claim, chunks=[])
        done += 1
    connection.close()
    results.put((name, done, worker.stats.missed))


def run(database_url: str, mechanism: str, workers: int, tasks: int) -> dict:
    fill_queue(tasks)
    context = multiprocessing.get_context("spawn")
    ready = context.Queue()
    start = context.Event()
    results = context.Queue()
    processes = [
        context.Process(
            target=drain,
            args=(database_url, mechanism, f"w{n}", ready, start, results),
        )
        for n in range(workers)
    ]
    for process in processes:
        process.start()
    for _ in processes:  # every process has imported Django and connected
        ready.get(timeout=120)
    started = time.perf_counter()
    start.set()
    outcomes = [results.get(timeout=600) for _ in processes]
    elapsed = time.perf_counter() - started
    for process in processes:
        process.join()

    from ingestion.models import IngestionTask

    succeeded_once = IngestionTask.objects.filter(status="succeeded", attempt=1).count()
    completed = sum(done for _, done, _ in outcomes)
    missed = sum(missed for _, _, missed in outcomes)
    return {
        "per_second": tasks / elapsed,
        "wasted": missed / max(completed, 1),
        "exactly_once": succeeded_once == tasks == completed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="500 tasks, one run")
    parser.add_argument("--tasks", type=int, default=None)
    parser.add_argument("--workers", type=int, nargs="*", default=[1, 2, 4, 8])
    parser.add_argument("--repeat", type=int, default=None)
    parser.add_argument(
        "--database",
        choices=["sqlite", "postgresql"],
        default="sqlite",
        help="one database per run (Django is configured once per process)",
    )
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    tasks = args.tasks or (500 if args.quick else 5_000)
    repeat = args.repeat or (1 if args.quick else 3)

    databases = (
        [("PostgreSQL", POSTGRES_URL)]
        if args.database == "postgresql"
        else [("SQLite", None)]
    )
    rows = []
    for engine, url in databases:
        database_url = setup_django(url)
        os.environ["DATABASE_URL"] = database_url
        mechanisms = ["conditional-update"]
        if engine == "PostgreSQL":
            mechanisms.append("skip-locked reference")
        by_workers = {}
        for workers in args.workers:
            # The claimers take turns, run by run, each going first in every other
            # round: a drifting machine weighs on both alike.
            runs = {mechanism: [] for mechanism in mechanisms}
            for round_number in range(repeat):
                order = mechanisms if round_number % 2 == 0 else mechanisms[::-1]
                for mechanism in order:
                    runs[mechanism].append(run(database_url, mechanism, workers, tasks))
            for mechanism in mechanisms:
                result = {
                    "per_second": median([r["per_second"] for r in runs[mechanism]]),
                    "wasted": median([r["wasted"] for r in runs[mechanism]]),
                    "exactly_once": all(r["exactly_once"] for r in runs[mechanism]),
                }
                by_workers[(workers, mechanism)] = result
                reference = by_workers.get((workers, "skip-locked reference"))
                ours = by_workers.get((workers, "conditional-update"))
                ratio = (
                    f"{ours['per_second'] / reference['per_second']:.2f}"
                    if reference and ours and mechanism != "conditional-update"
                    else ""
                )
                per_run = (
                    ", ".join(
                        f"{o['per_second'] / r['per_second']:.2f}"
                        for o, r in zip(
                            runs["conditional-update"],
                            runs["skip-locked reference"],
                            strict=True,
                        )
                    )
                    if ratio
                    else ""
                )
                rows.append(
                    [
                        engine,
                        workers,
                        mechanism,
                        result["per_second"],
                        result["wasted"]
                        if mechanism == "conditional-update"
                        else "n/a",
                        "yes" if result["exactly_once"] else "NO",
                        ratio,
                        per_run,
                    ]
                )
                print(rows[-1], flush=True)
    table = markdown_table(
        [
            "database",
            "workers",
            "claimer",
            "cycles/s (median)",
            "wasted claims per success",
            "every task exactly once",
            "ours / reference",
            "each run's ratio",
        ],
        rows,
    )
    print(table)
    if not args.no_write:
        engine = databases[0][0]
        write_section(
            f"claiming-{engine.lower()}",
            f"Claiming on {engine}: conditional update against skip-locked",
            f"`python bench/claiming.py --database {args.database}"
            f"{' --quick' if args.quick else ''}`: "
            f"{tasks} queued tasks drained by 1, 2, 4 and 8 worker processes with a "
            "no-op pipeline (claim, then the guarded success transition of task and "
            f"document); median of {repeat} run(s) each. `ours / reference` is the "
            "ratio of our conditional-update claim to `select_for_update(skip_locked="
            "True)` at the same worker count, measured side by side in the same run "
            "(PostgreSQL only: SQLite has no row locks), the claimers taking turns "
            "run by run (each first in every other round), each run on freshly "
            "vacuumed tables. Wasted claims are "
            "conditional UPDATEs that matched no row. The success writes no chunks "
            "(there are none), so it costs the task and document updates and the "
            "chunk delete.",
            table,
        )


if __name__ == "__main__":
    main()
