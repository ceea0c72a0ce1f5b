"""Submit-to-claim latency on PostgreSQL: how soon an idle worker starts a new task.

A `relay_outbox --loop` and one `run_ingestion_worker --loop --poll-interval 5`
run as separate processes on a scratch PostgreSQL database. Documents are
submitted one at a time (through `document_submit`, the service behind
`POST /api/documents/{id}/submit`), each after the previous task finished and a
random pause (up to 1 s; up to the 5 s poll interval for `poll`); the latency is
the task's `started_at` (stamped by the worker's claim) minus the moment the submit
transaction had committed. Wake-up
modes: `notify` (PostgreSQL LISTEN/NOTIFY, the default on PostgreSQL), `redis`
(BRPOP, when Redis answers on 127.0.0.1:6379) and `poll` (no wake-up: the 5 s
polling fallback, for comparison).

    python bench/submit_to_claim.py [--submissions N] [--modes notify redis poll]
                                    [--database-url URL] [--no-write]
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime

from common import REPO, markdown_table, median, percentile, setup_django, write_section

DATABASE_URL = "postgres://postgres@127.0.0.1:5432/curator_bench_claim"
REDIS_URL = "redis://127.0.0.1:6379/0"
POLL_INTERVAL = "5"


def start(*args: str, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(REPO / "manage.py"), *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def wait_for_line(process: subprocess.Popen, prefix: str) -> None:
    for line in process.stdout:
        if line.startswith(prefix):
            # Keep reading, so a full pipe never blocks the process.
            threading.Thread(target=process.stdout.read, daemon=True).start()
            return
    raise RuntimeError(f"{prefix!r} never came")


def redis_answers() -> bool:
    import redis

    try:
        return bool(redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1).ping())
    except redis.RedisError:
        return False


def measure(mode: str, submissions: int, editor, knowledge_base) -> list[float]:
    from django.core.files.uploadedfile import SimpleUploadedFile

    from documents import services as documents
    from ingestion import services
    from ingestion.models import IngestionTask

    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    if mode == "redis":
        env.update(OUTBOX_REDIS_URL=REDIS_URL, OUTBOX_REDIS_KEY="curator:bench:wake")
    relay = start("relay_outbox", "--loop", env=env)
    worker = start(
        "run_ingestion_worker",
        "--loop",
        "--poll-interval",
        POLL_INTERVAL,
        "--wake",
        mode,
        env=env,
    )
    latencies = []
    try:
        wait_for_line(relay, "relay started")
        wait_for_line(worker, "started worker=")
        time.sleep(1)  # let the worker settle into its first wait
        for n in range(submissions):
            document = documents.document_upload(
                user=editor,
                knowledge_base_id=knowledge_base.pk,
                uploaded_file=SimpleUploadedFile(
                    f"{mode}-{n}.md", f"# Note {n}\n\nAnswer {n}.\n".encode()
                ),
            )
            # A random moment in the worker's wait (a poll waits the whole interval).
            pause = float(POLL_INTERVAL) if mode == "poll" else 1.0
            time.sleep(random.uniform(0, pause))
            task = services.document_submit(user=editor, document_id=document.pk)
            committed = datetime.now(tz=UTC)
            while True:
                row = IngestionTask.objects.get(pk=task.pk)
                if row.status in ("succeeded", "failed"):
                    break
                time.sleep(0.02)
            latencies.append((row.started_at - committed).total_seconds() * 1000)
    finally:
        for process in (relay, worker):
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=60)
    return latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--submissions", type=int, default=30)
    parser.add_argument(
        "--modes", nargs="*", default=["notify", "redis", "poll"], help="wake modes"
    )
    parser.add_argument("--database-url", default=DATABASE_URL)
    parser.add_argument("--no-write", action="store_true", help="print only")
    options = parser.parse_args()

    setup_django(options.database_url)
    from documents.models import KnowledgeBase, Membership
    from tests.factories import UserFactory

    knowledge_base = KnowledgeBase.objects.create(id="bench-claim", name="bench")
    editor = UserFactory(username="bench-claim-editor")
    Membership.objects.create(user=editor, knowledge_base=knowledge_base, role="editor")

    rows = []
    for mode in options.modes:
        if mode == "redis" and not redis_answers():
            print("Redis does not answer on 127.0.0.1:6379: skipping redis")
            continue
        # The poll baseline is slow by design: fewer samples are enough.
        count = options.submissions if mode != "poll" else options.submissions // 3
        samples = measure(mode, count, editor, knowledge_base)
        rows.append(
            [
                mode,
                len(samples),
                median(samples),
                percentile(samples, 0.95),
                max(samples),
            ]
        )
    table = markdown_table(
        ["wake-up", "submissions", "p50 ms", "p95 ms", "max ms"], rows
    )
    print(table)
    if not options.no_write:
        write_section(
            "submit-to-claim",
            "Submit-to-claim latency",
            f"""
`python bench/submit_to_claim.py`: PostgreSQL 127.0.0.1, one `relay_outbox --loop`
(default interval, `OUTBOX_RELAY_INTERVAL`=0.1 s) and one
`run_ingestion_worker --loop --poll-interval {POLL_INTERVAL}` as separate processes.
Each document is submitted after the previous task finished and a random pause (up
to 1 s; up to the poll interval for `poll`, so submits land anywhere in its wait);
latency = the task's `started_at` (the worker's claim) minus the end of the submit
transaction. `poll` is the fallback without any wake-up, for comparison.
""",
            table,
        )


if __name__ == "__main__":
    main()
