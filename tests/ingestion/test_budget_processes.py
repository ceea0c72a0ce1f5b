"""The work budget with a real worker process and its parsers: a file built to
keep them busy ends `work_budget_exceeded` within its budget, not after."""

from __future__ import annotations

import time

import pytest

from ingestion.models import IngestionTask
from tests.factories import DocumentFactory
from tests.ingestion.hostile import slow_pdf
from tests.ingestion.processes import Process
from tests.ingestion.tasks import document_status
from tests.ingestion.test_ocr_ingestion import scanned_pdf

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

CPU_BUDGET = 1.5
# Reading /proc and stopping the parsers take a poll or two (0.1 s each); the
# worker's own start-up is not the task's.
CPU_SLACK = 1.0


def run_worker_process(process_env, task, **env: str) -> tuple[Process, float]:
    started = time.monotonic()
    worker = Process(process_env, "run_ingestion_worker", str(task.pk), **env)
    assert worker.stop(timeout=120) == 0, worker.stderr
    return worker, time.monotonic() - started


def test_a_pdf_that_would_parse_for_many_seconds_stops_at_its_cpu_budget(
    knowledge_base, submit, process_env
):
    # Alone, this page keeps a parser busy for about 13 s (hostile.slow_pdf).
    document = DocumentFactory(
        knowledge_base=knowledge_base,
        content=slow_pdf(200_000),
        filename="slow.pdf",
        content_type="application/pdf",
    )
    task = submit(document)

    worker, seconds = run_worker_process(
        process_env,
        task,
        INGESTION_WORK_BUDGET_CPU_SECONDS=str(CPU_BUDGET),
        INGESTION_PARSE_PROCESSES="1",
    )

    row = IngestionTask.objects.get(pk=task.pk)
    assert (row.status, row.error_code, row.stage) == (
        "failed",
        "work_budget_exceeded",
        "parse",
    ), worker.stdout
    assert CPU_BUDGET <= row.work_cpu_seconds <= CPU_BUDGET + CPU_SLACK
    assert "INGESTION_WORK_BUDGET_CPU_SECONDS" in row.error_detail
    assert document_status(task) == "failed"
    assert seconds < 12, worker.stdout  # start-up included, far below the parse


def test_a_scan_past_its_ocr_page_budget_stops_before_the_next_page(
    knowledge_base, submit, process_env
):
    document = DocumentFactory(
        knowledge_base=knowledge_base,
        content=scanned_pdf(*(f"Clause {n} of the lease" for n in range(1, 7))),
        filename="scan.pdf",
        content_type="application/pdf",
    )
    task = submit(document)

    worker, _ = run_worker_process(
        process_env, task, INGESTION_WORK_BUDGET_OCR_PAGES="2"
    )

    row = IngestionTask.objects.get(pk=task.pk)
    assert (row.status, row.error_code) == ("failed", "work_budget_exceeded"), (
        worker.stdout
    )
    assert row.work_ocr_pages == 2
    assert "INGESTION_WORK_BUDGET_OCR_PAGES" in row.error_detail
