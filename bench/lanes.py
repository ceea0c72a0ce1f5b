"""Small documents behind heavy ones: queue waits and drain time, with and without a
worker kept for light work (`run_ingestion_worker --lanes light`).

A mixed queue on a scratch database: `--scans` scanned PDFs of `--pages` image-only
pages each (read by OCR) are submitted first, then `--smalls` Markdown notes, one
every `--gap` seconds. Each configuration runs its workers as separate
`run_ingestion_worker --loop` processes (one parser process each, polling every
0.2 s) until the queue is drained. Reported per configuration: the queue wait of
the small documents (their claim minus their submit: p50, p95, max), when the last
small one was done, and the drain time of the whole queue (first submit to last
finish). The scans are PDFs, so they start light: their first run finds them heavy
(a light-only worker gives them back at once).

    python bench/lanes.py [--scans 3] [--pages 6] [--smalls 20] [--gap 0.5]
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

# (name, lanes of each worker)
CONFIGURATIONS = (
    ("2 workers, both lanes", ("light,heavy", "light,heavy")),
    ("2 workers, both lanes + 1 light-only", ("light,heavy", "light,heavy", "light")),
    ("1 worker both lanes + 1 light-only", ("light,heavy", "light")),
)


def scanned_pdf(pages: int, seed: int) -> bytes:
    """Image-only pages of a few lines of text each, as a scanner makes them."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.load_default(size=36)
    images = []
    for page in range(pages):
        image = Image.new("L", (1240, 1754), 255)
        draw = ImageDraw.Draw(image)
        for line in range(14):
            draw.text(
                (100, 120 + line * 110),
                f"Clause {seed}.{page}.{line}: the tenant pays rent on the first day.",
                font=font,
                fill=0,
            )
        images.append(image)
    data = io.BytesIO()
    images[0].save(
        data, format="PDF", resolution=150, save_all=True, append_images=images[1:]
    )
    return data.getvalue()


def start_worker(name: str, lanes: str, env: dict[str, str]) -> subprocess.Popen:
    process = subprocess.Popen(
        [
            sys.executable,
            str(REPO / "manage.py"),
            "run_ingestion_worker",
            "--loop",
            "--wake",
            "poll",
            "--poll-interval",
            "0.2",
            "--lanes",
            lanes,
            "--worker-id",
            name,
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    for line in process.stdout:
        if line.startswith("started worker="):
            threading.Thread(target=process.stdout.read, daemon=True).start()
            return process
    raise RuntimeError(f"worker {name} did not start")


def run(configuration, options, editor, knowledge_base, scans: list[bytes]) -> dict:
    from django.core.files.uploadedfile import SimpleUploadedFile

    from documents import services as documents
    from ingestion import services
    from ingestion.models import IngestionTask

    name, worker_lanes = configuration
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "INGESTION_PARSE_PROCESSES": "1"}
    workers = [
        start_worker(f"w{n}-{lanes}", lanes, env)
        for n, lanes in enumerate(worker_lanes)
    ]

    def submit(filename: str, content: bytes):
        document = documents.document_upload(
            user=editor,
            knowledge_base_id=knowledge_base.pk,
            uploaded_file=SimpleUploadedFile(filename, content),
        )
        return services.document_submit(user=editor, document_id=document.pk)

    try:
        time.sleep(1)  # the workers' parsers warm
        heavy = [submit(f"scan-{n}.pdf", data) for n, data in enumerate(scans)]
        smalls = []
        for n in range(options.smalls):
            time.sleep(options.gap)
            smalls.append(submit(f"note-{n}.md", f"# Note {n}\n\nRent {n}.\n".encode()))
        ids = [task.pk for task in heavy + smalls]
        while IngestionTask.objects.filter(
            pk__in=ids, status__in=("queued", "running", "retry_wait")
        ).exists():
            time.sleep(0.2)
    finally:
        for worker in workers:
            worker.send_signal(signal.SIGTERM)
        for worker in workers:
            worker.wait(timeout=120)
    rows = {task.pk: task for task in IngestionTask.objects.filter(pk__in=ids)}
    assert {row.status for row in rows.values()} == {"succeeded"}, {
        (row.status, row.error_code) for row in rows.values()
    }
    start = min(row.created_at for row in rows.values())
    waits = [
        (rows[task.pk].started_at - rows[task.pk].created_at).total_seconds()
        for task in smalls
    ]
    return {
        "name": name,
        "waits": waits,
        "smalls_done": max(
            (rows[task.pk].finished_at - start).total_seconds() for task in smalls
        ),
        "drain": max(
            (row.finished_at - start).total_seconds() for row in rows.values()
        ),
        "heavy_lane": sum(rows[task.pk].lane == "heavy" for task in heavy),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scans", type=int, default=3)
    parser.add_argument("--pages", type=int, default=6)
    parser.add_argument("--smalls", type=int, default=20)
    parser.add_argument("--gap", type=float, default=0.5)
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--no-write", action="store_true", help="print only")
    options = parser.parse_args()

    setup_django(options.database_url)
    from documents.models import KnowledgeBase, Membership
    from tests.factories import UserFactory

    knowledge_base = KnowledgeBase.objects.create(id="bench-lanes", name="bench")
    editor = UserFactory(username="bench-lanes-editor")
    Membership.objects.create(user=editor, knowledge_base=knowledge_base, role="editor")
    scans = [scanned_pdf(options.pages, n) for n in range(options.scans)]

    results = [
        run(configuration, options, editor, knowledge_base, scans)
        for configuration in CONFIGURATIONS
    ]
    table = markdown_table(
        [
            "workers",
            "small wait p50 s",
            "p95 s",
            "max s",
            "last small done s",
            "drain s",
        ],
        [
            [
                result["name"],
                median(result["waits"]),
                percentile(result["waits"], 0.95),
                max(result["waits"]),
                result["smalls_done"],
                result["drain"],
            ]
            for result in results
        ],
    )
    print(table)
    if not options.no_write:
        write_section(
            "lanes",
            "Lanes: small documents behind scans",
            f"""
`python bench/lanes.py`: {options.scans} scanned PDFs of {options.pages} image-only
pages each (A4 at 150 dpi, 14 lines a page, read by OCR) submitted first, then
{options.smalls} Markdown notes, one every {options.gap:g} s, by one editor on
SQLite. Workers are `run_ingestion_worker --loop --lanes …` processes with one
parser process each (`INGESTION_PARSE_PROCESSES=1`), polling every 0.2 s. Wait =
a note's claim minus its submit; drain = first submit to last finish. The scans
start light (PDFs) and their first run finds them heavy; a light-only worker that
claims one gives it back before its first OCR page.
""",
            table,
        )


if __name__ == "__main__":
    main()
