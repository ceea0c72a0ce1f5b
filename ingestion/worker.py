"""The ingestion worker loop, drivable from tests without a subprocess.

    while not stopping:
        claim = claim the given task, or the next claimable one
        nothing to claim -> exit (one-shot, the cron form) or sleep (--loop)
        run the pipeline under that claim; record success or a stable error code

Claiming is a conditional UPDATE whose row count decides who won. To keep eight
workers from all aiming at the head of the queue, a worker that has just missed a
claim spreads its next attempts over the oldest `INGESTION_CLAIM_WINDOW` tasks;
a worker without competition always takes the oldest task.
"""

from __future__ import annotations

import logging
import random
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from django.conf import settings
from django.db import close_old_connections, connection

from . import services
from .models import ErrorCode
from .pipeline import IngestionFailure, IngestionPipeline
from .services import TaskClaim, TaskLost

logger = logging.getLogger(__name__)

SPREAD_CLAIMS_AFTER_MISS = 25


@dataclass
class WorkerStats:
    claimed: int = 0
    missed: int = 0
    succeeded: int = 0
    failed: int = 0
    lost: int = 0
    outcomes: dict[str, str] = field(default_factory=dict)


class Worker:
    def __init__(
        self,
        *,
        worker_id: str,
        loop: bool = False,
        max_tasks: int | None = None,
        poll_interval: float = 1.0,
        write: Callable[[str], None] = print,
    ) -> None:
        self.worker_id = worker_id
        self.loop = loop
        self.max_tasks = max_tasks
        self.poll_interval = poll_interval
        self.write = write
        self.stats = WorkerStats()
        self.stopping = threading.Event()
        self._spread_remaining = 0
        self._rng = random.Random()  # noqa: S311 - load spreading, not security

    # --- lifecycle -------------------------------------------------------------

    def install_signal_handlers(self) -> None:
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, self._on_signal)

    def _on_signal(self, signum, frame) -> None:
        self.write(
            f"stopping worker={self.worker_id} signal={signal.Signals(signum).name}"
        )
        self.stopping.set()

    def run(self, task_id=None) -> WorkerStats:
        if task_id is not None:
            claim = services.ingestion_task_claim(task_id, worker_id=self.worker_id)
            if claim is None:
                self.stats.missed += 1
                self.write(f"claim missed task={task_id} worker={self.worker_id}")
            else:
                self.execute(claim)
            return self.stats

        while not self.stopping.is_set() and not self._reached_max():
            self._refresh_connections()
            claim = self.claim_next()
            if claim is None:
                if not self.loop:
                    break
                self.stopping.wait(self.poll_interval)
                continue
            self.execute(claim)
        self._refresh_connections()
        return self.stats

    @staticmethod
    def _refresh_connections() -> None:
        # Drop broken or expired connections between tasks (not inside a
        # caller's transaction, as when tests drive the worker).
        if not connection.in_atomic_block:
            close_old_connections()

    def _reached_max(self) -> bool:
        return self.max_tasks is not None and self.stats.claimed >= self.max_tasks

    # --- claiming --------------------------------------------------------------

    def claim_next(self) -> TaskClaim | None:
        while True:
            candidates = services.claimable_task_ids(settings.INGESTION_CLAIM_WINDOW)
            if not candidates:
                return None
            if self._spread_remaining > 0:
                self._spread_remaining -= 1
                start = self._rng.randrange(len(candidates))
                candidates = candidates[start:] + candidates[:start]
            for task_id in candidates:
                claim = services.ingestion_task_claim(task_id, worker_id=self.worker_id)
                if claim is not None:
                    return claim
                self.stats.missed += 1
                self._spread_remaining = SPREAD_CLAIMS_AFTER_MISS
            # Every candidate went to someone else: read the queue again.

    # --- executing -------------------------------------------------------------

    def execute(self, claim: TaskClaim) -> str:
        self.stats.claimed += 1
        self.write(
            f"claimed task={claim.task_id} worker={self.worker_id} "
            f"status=running attempt={claim.attempt}"
        )
        started = time.monotonic()
        outcome = self._run_pipeline(claim)
        self.stats.outcomes[str(claim.task_id)] = outcome
        logger.info(
            "task finished task=%s worker=%s outcome=%s seconds=%.3f",
            claim.task_id,
            self.worker_id,
            outcome,
            time.monotonic() - started,
        )
        return outcome

    def _run_pipeline(self, claim: TaskClaim) -> str:
        pipeline = IngestionPipeline(claim, on_progress=self._print_progress)
        try:
            chunk_count = pipeline.run()
        except TaskLost:
            self.stats.lost += 1
            self.write(
                f"lost task={claim.task_id} worker={self.worker_id} "
                "(cancelled or taken over; nothing written)"
            )
            return "lost"
        except IngestionFailure as failure:
            return self._fail(claim, failure.error_code, failure.detail)
        except Exception as error:
            logger.exception("ingestion crashed task=%s", claim.task_id)
            return self._fail(
                claim,
                ErrorCode.INTERNAL_ERROR,
                f"Unexpected error in the worker ({type(error).__name__}).",
            )
        self.stats.succeeded += 1
        self.write(
            f"succeeded task={claim.task_id} worker={self.worker_id} "
            f"chunks={chunk_count}"
        )
        return "succeeded"

    def _fail(self, claim: TaskClaim, error_code: str, detail: str) -> str:
        if not services.ingestion_task_fail(
            claim, error_code=error_code, detail=detail
        ):
            self.stats.lost += 1
            self.write(f"lost task={claim.task_id} worker={self.worker_id}")
            return "lost"
        self.stats.failed += 1
        self.write(
            f"failed task={claim.task_id} worker={self.worker_id} "
            f"error_code={error_code}"
        )
        return "failed"

    def _print_progress(self, stage: str, completed: int, total: int) -> None:
        self.write(f"stage={stage} {completed}/{total}")
