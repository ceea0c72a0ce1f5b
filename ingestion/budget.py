"""A document's work budget: CPU seconds and OCR pages, across all its runs.

Each run starts from what earlier runs spent (stored on the task) and meters its
own: the worker process's CPU time plus its parser processes' (read from /proc by
the sandbox, so the OCR threads count; without /proc, the worker's own only) and
the OCR pages the parsers start. The
pipeline checks it as the work goes, every tenth of a second while it waits for
the parsers, at every progress step, and before each OCR page, so a hostile file
stops within its budget rather than after; it writes what it spent with its
progress and once more when the run ends, so a crashed or reclaimed run is
charged too (up to the last write).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings


class WorkBudgetExceeded(Exception):
    """The document has spent its budget; `detail` says which and how much."""


@dataclass(frozen=True)
class WorkSpent:
    cpu_seconds: float = 0.0
    ocr_pages: int = 0

    def __bool__(self) -> bool:
        return bool(self.cpu_seconds or self.ocr_pages)


@dataclass(frozen=True)
class WorkLimits:
    """None: no limit on that measure."""

    cpu_seconds: float | None
    ocr_pages: int | None

    @classmethod
    def from_settings(cls) -> WorkLimits:
        return cls(
            cpu_seconds=settings.INGESTION_WORK_BUDGET_CPU_SECONDS or None,
            ocr_pages=settings.INGESTION_WORK_BUDGET_OCR_PAGES or None,
        )


class WorkMeter:
    """One run's spending on top of `before`; `check()` raises once it is over.

    `parser_cpu()` gives the parsers' CPU seconds ever (it only grows), so the
    run's share is the difference from its start.
    """

    def __init__(
        self,
        *,
        before: WorkSpent,
        limits: WorkLimits,
        parser_cpu: Callable[[], float],
        own_cpu: Callable[[], float] = time.process_time,
    ) -> None:
        self.before = before
        self.limits = limits
        self._parser_cpu = parser_cpu
        self._own_cpu = own_cpu
        self._start = own_cpu() + parser_cpu()
        self._ocr_pages = 0
        self._written = WorkSpent()

    def run_spent(self) -> WorkSpent:
        cpu = self._own_cpu() + self._parser_cpu() - self._start
        return WorkSpent(round(max(cpu, 0.0), 3), self._ocr_pages)

    def total(self) -> WorkSpent:
        run = self.run_spent()
        return WorkSpent(
            self.before.cpu_seconds + run.cpu_seconds,
            self.before.ocr_pages + run.ocr_pages,
        )

    def check(self) -> None:
        """WorkBudgetExceeded when the CPU seconds are spent."""
        limit = self.limits.cpu_seconds
        spent = self.total().cpu_seconds
        if limit is not None and spent >= limit:
            raise WorkBudgetExceeded(
                f"The document used {spent:.1f} CPU seconds, its budget is "
                f"{limit:g} (INGESTION_WORK_BUDGET_CPU_SECONDS)."
            )

    def ocr_page(self) -> None:
        """One more page is about to be read by OCR: refused past the budget, so
        no page beyond it is read."""
        limit = self.limits.ocr_pages
        if limit is not None and self.before.ocr_pages + self._ocr_pages >= limit:
            raise WorkBudgetExceeded(
                f"The document needs more than {limit} pages read by OCR, its "
                f"budget (INGESTION_WORK_BUDGET_OCR_PAGES)."
            )
        self._ocr_pages += 1
        self.check()

    def unwritten(self) -> WorkSpent:
        """What this run spent since the last `written()`."""
        run = self.run_spent()
        return WorkSpent(
            round(run.cpu_seconds - self._written.cpu_seconds, 3),
            run.ocr_pages - self._written.ocr_pages,
        )

    def written(self, amount: WorkSpent) -> None:
        self._written = WorkSpent(
            self._written.cpu_seconds + amount.cpu_seconds,
            self._written.ocr_pages + amount.ocr_pages,
        )
