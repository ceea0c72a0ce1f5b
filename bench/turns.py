"""Small documents behind long scans, one worker: the queue wait before and after
yielding (issue 35), and the time to drain the mixed queue.

One `run_ingestion_worker --loop` runs as a separate process on a scratch database.
One editor submits `--scans` image-only PDFs of `--pages` A4 pages of `--lines`
lines each (every page read by OCR: about 0.2 s a line on one core); once the
worker has started the first, `--notes` other editors submit one small Markdown
file each, at once. Measured per Markdown file: the wait from submission to its
claim (`started_at - created_at`) and to its success (`finished_at -
created_at`); and the drain time, from the first submission to the last success.
Each run is repeated with `INGESTION_TURN_SECONDS=0` (no yielding: before) and
with each of `--turns` (after).

    python bench/turns.py [--scans 3] [--pages 30] [--lines 8] [--notes 20]
                          [--turns 20 ...]
                          [--database-url URL] [--no-write]
"""

from __future__ import annotations

import argparse
import io
import os
import signal
import subprocess
import sys
import threading
import time

from common import REPO, markdown_table, median, percentile, setup_django, write_section


def scanned_pdf(pages: int, lines: int) -> bytes:
    """An image-only PDF: A4 pages at 200 dpi with `lines` lines of print each."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.load_default(size=34)
    images = []
    for number in range(1, pages + 1):
        image = Image.new("L", (1654, 2339), 255)
        draw = ImageDraw.Draw(image)
        for line in range(lines):
            draw.text(
                (120, 150 + line * 80),
                f"Page {number} line {line}: the tenant pays the rent on the first",
                font=font,
                fill=0,
            )
        images.append(image)
    data = io.BytesIO()
    images[0].save(
        data, format="PDF", resolution=200, save_all=True, append_images=images[1:]
    )
    return data.getvalue()


def start_worker(turn: float) -> subprocess.Popen:
    env = {
        **os.environ,
        "PYTHONUNBUFFERED": "1",
        "INGESTION_TURN_SECONDS": str(turn),
    }
    worker = subprocess.Popen(
        [sys.executable, str(REPO / "manage.py"), "run_ingestion_worker", "--loop"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    for line in worker.stdout:
        if line.startswith("started worker="):
            threading.Thread(target=worker.stdout.read, daemon=True).start()
            return worker
    raise RuntimeError("the worker did not start")


def run(turn: float, options, knowledge_base, scanner, writers, scan: bytes) -> dict:
    from django.core.files.uploadedfile import SimpleUploadedFile

    from documents import services as documents
    from ingestion import services
    from ingestion.models import IngestionTask

    def upload(user, name: str, content: bytes):
        return documents.document_upload(
            user=user,
            knowledge_base_id=knowledge_base.pk,
            uploaded_file=SimpleUploadedFile(name, content),
        )

    scans = [upload(scanner, f"scan-{n}.pdf", scan) for n in range(options.scans)]
    notes = [
        upload(writer, f"note-{n}.md", f"# Note {n}\n\nAnswer {n}.\n".encode())
        for n, writer in enumerate(writers)
    ]
    worker = start_worker(turn)
    try:
        began = time.monotonic()
        scan_tasks = [
            services.document_submit(user=scanner, document_id=document.pk)
            for document in scans
        ]
        while IngestionTask.objects.get(pk=scan_tasks[0].pk).status != "running":
            time.sleep(0.05)
        note_tasks = [
            services.document_submit(user=writer, document_id=document.pk)
            for writer, document in zip(writers, notes, strict=True)
        ]
        ids = [task.pk for task in scan_tasks + note_tasks]
        while IngestionTask.objects.filter(pk__in=ids, status="succeeded").count() < (
            len(ids)
        ):
            # A failed or cancelled task never succeeds: say which, do not wait on.
            ended = IngestionTask.objects.filter(
                pk__in=ids, status__in=["failed", "cancelled"]
            ).values_list("document__filename", "error_code")
            if ended:
                raise SystemExit(f"tasks ended unsucceeded: {list(ended)}")
            time.sleep(0.1)
        drained = time.monotonic() - began
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=120)
    rows = IngestionTask.objects.filter(pk__in=[task.pk for task in note_tasks])
    claimed = [(r.started_at - r.created_at).total_seconds() for r in rows]
    done = [(r.finished_at - r.created_at).total_seconds() for r in rows]
    return {
        "turn": turn,
        "claim_p50": median(claimed),
        "claim_p95": percentile(claimed, 0.95),
        "done_p95": percentile(done, 0.95),
        "done_max": max(done),
        "drain": drained,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scans", type=int, default=3)
    parser.add_argument("--pages", type=int, default=30)
    parser.add_argument("--lines", type=int, default=8)
    parser.add_argument("--notes", type=int, default=20)
    parser.add_argument("--turns", type=float, nargs="+", default=[20.0])
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--no-write", action="store_true", help="print only")
    options = parser.parse_args()

    setup_django(options.database_url)
    from documents.models import KnowledgeBase, Membership
    from tests.factories import UserFactory

    knowledge_base = KnowledgeBase.objects.create(id="bench-turns", name="bench")
    scanner, *writers = [
        UserFactory(username=f"bench-turns-{n}") for n in range(options.notes + 1)
    ]
    for user in (scanner, *writers):
        Membership.objects.create(
            user=user, knowledge_base=knowledge_base, role="editor"
        )
    scan = scanned_pdf(options.pages, options.lines)
    results = [
        run(turn, options, knowledge_base, scanner, writers, scan)
        for turn in (0.0, *options.turns)
    ]
    table = markdown_table(
        [
            "INGESTION_TURN_SECONDS",
            "Markdown claimed p50 s",
            "claimed p95 s",
            "succeeded p95 s",
            "succeeded max s",
            "drain s",
        ],
        [
            [
                r["turn"],
                r["claim_p50"],
                r["claim_p95"],
                r["done_p95"],
                r["done_max"],
                r["drain"],
            ]
            for r in results
        ],
    )
    summary = "Drain time against no turns: " + ", ".join(
        f"{r['drain'] / results[0]['drain'] - 1:+.1%} with {r['turn']:g} s turns"
        for r in results[1:]
    )
    print(table)
    print(summary)
    if not options.no_write:
        turns = " ".join(f"{t:g}" for t in options.turns)
        command = (
            f"python bench/turns.py --scans {options.scans} --pages {options.pages}"
            f" --lines {options.lines} --notes {options.notes} --turns {turns}"
        )
        write_section(
            "turns",
            "Small documents behind long scans (turns)",
            f"""
    {command}

One `run_ingestion_worker --loop` (2 parser processes, hashing embedder), SQLite
unless `--database-url`. One editor submits the scans (image-only A4 pages, each
read by OCR); once the worker has started the first, {options.notes} other editors
submit one small Markdown file each. Waits are from each Markdown file's
submission; drain is from the first submission to the last success. Row 1: no
yielding (before issue 35), then turns. Each turn costs the scan a restart of its
parser processes, which load the OCR engine again (about a second each): the
price of short turns in the drain time.
""",
            f"{table}\n\n{summary}",
        )


if __name__ == "__main__":
    main()
