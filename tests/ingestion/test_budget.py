"""A document's work budget: what its runs spent, kept across attempts, and the
stop once it is spent. With real worker processes: `test_budget_processes.py`."""

from __future__ import annotations

import pytest

from ingestion import claims
from ingestion.budget import WorkBudgetExceeded, WorkLimits, WorkMeter, WorkSpent
from ingestion.models import IngestionTask
from tests.ingestion.tasks import document, document_status, expire_lease, fresh

pytestmark = pytest.mark.django_db


class Clock:
    """A CPU clock the test moves by hand."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def __call__(self) -> float:
        return self.seconds


def meter_for(claim, limits, worker: Clock, parsers: Clock) -> WorkMeter:
    return WorkMeter(
        before=claims.ingestion_task_work_spent(claim),
        limits=limits,
        parser_cpu=parsers,
        own_cpu=worker,
    )


def charge(claim, meter: WorkMeter) -> None:
    spent = meter.unwritten()
    assert claims.ingestion_task_charge_work(claim, spent)
    meter.written(spent)


def claim_again(task):
    IngestionTask.objects.filter(pk=task.pk).update(available_at=fresh(task).created_at)
    claim = claims.ingestion_task_claim(task.pk, worker_id="w")
    assert claim is not None
    return claim


def test_work_accumulates_across_a_reclaim_and_a_release_until_the_budget_stops_it(
    knowledge_base, submit
):
    limits = WorkLimits(cpu_seconds=10.0, ocr_pages=5)
    task = submit(document(knowledge_base))
    worker, parsers = Clock(), Clock()

    # Attempt 1: 3 CPU seconds (1 in the worker, 2 in its parsers) and 2 OCR
    # pages, written with a progress report; then the worker dies.
    first = claims.ingestion_task_claim(task.pk, worker_id="w")
    meter = meter_for(first, limits, worker, parsers)
    worker.seconds, parsers.seconds = 1.0, 2.0
    meter.ocr_page()
    meter.ocr_page()
    claims.ingestion_task_report_progress(
        first, stage="parse", completed=2, total=4, work=meter.unwritten()
    )
    expire_lease(task)
    assert claims.ingestion_tasks_reclaim_expired() == 1
    assert (fresh(task).work_cpu_seconds, fresh(task).work_ocr_pages) == (3.0, 2)

    # Attempt 2 starts from there; what it spends adds up; a release keeps it.
    second = claim_again(task)
    meter = meter_for(second, limits, worker, parsers)
    assert meter.before == WorkSpent(3.0, 2)
    parsers.seconds += 4.0
    charge(second, meter)
    parsers.seconds += 0.5
    charge(second, meter)  # only what was not written yet
    assert claims.ingestion_task_release(second)
    row = fresh(task)
    assert (row.status, row.attempt) == ("queued", 1)
    assert (row.work_cpu_seconds, row.work_ocr_pages) == (7.5, 2)

    # Attempt 3: 2.5 CPU seconds more reach the budget of 10; OCR pages 3 to 5
    # are allowed, a sixth is refused before it is read.
    third = claim_again(task)
    meter = meter_for(third, limits, worker, parsers)
    meter.check()
    for _ in range(3):
        meter.ocr_page()
    with pytest.raises(WorkBudgetExceeded, match="OCR"):
        meter.ocr_page()
    worker.seconds += 2.5
    with pytest.raises(WorkBudgetExceeded, match=r"10 .*CPU_SECONDS"):
        meter.check()
    charge(third, meter)
    row = fresh(task)
    assert (row.work_cpu_seconds, row.work_ocr_pages) == (10.0, 5)


def test_a_lost_task_is_not_charged(knowledge_base, submit):
    task = submit(document(knowledge_base))
    claim = claims.ingestion_task_claim(task.pk, worker_id="w")
    expire_lease(task)
    claims.ingestion_tasks_reclaim_expired()
    assert not claims.ingestion_task_charge_work(claim, WorkSpent(5.0, 1))
    assert fresh(task).work_cpu_seconds == 0.0


def test_a_zero_budget_setting_means_no_budget(settings):
    settings.INGESTION_WORK_BUDGET_CPU_SECONDS = 0
    settings.INGESTION_WORK_BUDGET_OCR_PAGES = 0
    meter = WorkMeter(
        before=WorkSpent(1e6, 10_000),
        limits=WorkLimits.from_settings(),
        parser_cpu=lambda: 0.0,
    )
    meter.check()
    meter.ocr_page()


def test_a_document_that_spent_its_budget_fails_before_any_work(
    knowledge_base, submit, run_worker, settings
):
    settings.INGESTION_WORK_BUDGET_CPU_SECONDS = 60
    task = submit(document(knowledge_base))
    IngestionTask.objects.filter(pk=task.pk).update(work_cpu_seconds=60.5)

    run_worker(task.pk)

    row = fresh(task)
    assert (row.status, row.error_code, row.stage) == (
        "failed",
        "work_budget_exceeded",
        "download",
    )
    assert "60.5 CPU seconds" in row.error_detail
    assert document_status(task) == "failed"


def test_a_successful_run_is_charged(knowledge_base, submit, run_worker):
    task = submit(document(knowledge_base))

    run_worker(task.pk)

    row = fresh(task)
    assert row.status == "succeeded"
    assert 0 < row.work_cpu_seconds < 30
    assert row.work_ocr_pages == 0
