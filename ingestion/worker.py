"""The ingestion worker loop, drivable from tests without a subprocess.

    while not stopping:
        reclaim tasks whose lease expired (any worker does it, before claiming)
        claim the given task, or the next claimable one
        nothing to claim -> exit (one-shot, the cron form) or wait for a wake-up
                            or the poll interval (--loop)
        a small first run with small ones waiting behind it -> claim those too
                            and run them as one batch (`batches.py`), each task
                            ending on its own
        run the pipeline under that claim, a heartbeat thread renewing the lease;
        record success, a retry with backoff (transient) or a stable error code
    the database went away (--loop) -> log, back off, reconnect, go on

Turns: a task that has run for INGESTION_TURN_SECONDS while other tasks wait is
given back at its next kept page (`yield_turn`, `claims.ingestion_task_yield`),
and the worker claims the next in fair order; the task resumes later from its
checkpoints.

Stopping: the first SIGTERM/SIGINT stops claiming; the current task may finish
within the grace period, after which (or at a second signal) it is released back
to `queued` at the pipeline's next checkpoint, uncharged.

Claiming is a conditional UPDATE whose row count decides who won (`claims.py`);
which task a worker aims at is `spreading.py`'s policy, and the lease is kept alive
by `heartbeat.py`.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from functools import partial

from django.conf import settings
from django.db import DatabaseError, connection

from . import claims, counters
from .batches import SmallBatch, small_content_types
from .claims import TaskClaim, TaskLost
from .heartbeat import heartbeat_for
from .lanes import ALL_LANES, turn_is_over
from .models import ErrorCode, TaskLane, TaskStatus
from .outage import (
    CONNECTION_ERRORS,
    DatabaseOutage,
    close_connection,
    refresh_connections,
)
from .parsers import start_parsers, warm_parser
from .pipeline import HeavyTask, IngestionFailure, IngestionPipeline
from .sandbox import StopAfterPage
from .spreading import CandidatePicker
from .wakeups import PollWaiter, Waiter

logger = logging.getLogger(__name__)

COUNTER_FLUSH_SECONDS = 5.0


class ReleaseRequested(Exception):
    """Shutdown: give the current task back instead of finishing it."""


class YieldRequested(StopAfterPage):
    """The task's turn is over and others wait: give it back at this checkpoint
    (the parsers finish their page first and stay warm)."""


# How often a task past its turn asks whether others wait (one small query).
WAITING_CHECK_SECONDS = 1.0


class Outcome(StrEnum):
    """How one claimed task ended for this worker (logged as `outcome=`)."""

    SUCCEEDED = "succeeded"
    RETRY_WAIT = "retry_wait"
    """A transient failure: the task waits for its next attempt."""
    FAILED = "failed"
    RELEASED = "released"
    """Shutdown: back in the queue, no attempt charged."""
    YIELDED = "yielded"
    """Its turn was over: back in the queue at its stage, no attempt charged."""
    REROUTED = "rerouted"
    """Found heavy by a worker that takes no heavy work: back in the queue in the
    heavy lane, no attempt charged."""
    LOST = "lost"
    """Cancelled or taken over; nothing of this run kept."""


# The worker's stats added to the shared counters: counter -> WorkerStats field.
FLUSHED_STATS = {
    counters.CLAIMS: "claimed",
    counters.MISSED_CLAIMS: "missed",
    counters.TURNS_YIELDED: "yielded",
}


@dataclass
class WorkerStats:
    claimed: int = 0
    missed: int = 0
    succeeded: int = 0
    failed: int = 0
    retried: int = 0
    released: int = 0
    yielded: int = 0
    rerouted: int = 0
    lost: int = 0
    outcomes: dict[str, Outcome] = field(default_factory=dict)


class Worker:
    def __init__(
        self,
        *,
        worker_id: str,
        loop: bool = False,
        max_tasks: int | None = None,
        poll_interval: float = 1.0,
        waiter: Waiter | None = None,
        grace_seconds: float | None = None,
        turn_seconds: float | None = None,
        reconnect_delays: tuple[float, float] = (1.0, 30.0),
        write: Callable[[str], None] = print,
        lanes: frozenset[str] = ALL_LANES,
    ) -> None:
        self.worker_id = worker_id
        self.lanes = lanes
        self.loop = loop
        self.max_tasks = max_tasks
        self.poll_interval = poll_interval
        self.waiter = waiter or PollWaiter()
        self.grace_seconds = (
            settings.INGESTION_SHUTDOWN_GRACE_SECONDS
            if grace_seconds is None
            else grace_seconds
        )
        self.turn_seconds = (
            settings.INGESTION_TURN_SECONDS if turn_seconds is None else turn_seconds
        )
        self.light_wait = settings.INGESTION_LIGHT_WAIT_SECONDS
        self.write = write
        self.outage = DatabaseOutage(
            name=f"worker={worker_id}", delays=reconnect_delays, write=write
        )
        self.stats = WorkerStats()
        self.stopping = threading.Event()
        self._release_at: float | None = None
        self.picker = CandidatePicker(lanes=lanes)
        self._reclaim_due = 0.0
        self._counters_due = 0.0
        self._flushed = dict.fromkeys(FLUSHED_STATS, 0)
        self._parsers_failing = False

    # --- lifecycle -------------------------------------------------------------

    def install_signal_handlers(self) -> None:
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, self._on_signal)

    def _on_signal(self, signum, frame) -> None:
        # State first, output after: a second signal may interrupt this handler.
        name = signal.Signals(signum).name
        if self.stopping.is_set():
            self._release_at = time.monotonic()
            self.write(f"releasing now worker={self.worker_id} signal={name}")
            return
        self._release_at = time.monotonic() + self.grace_seconds
        self.stopping.set()
        self.write(
            f"stopping worker={self.worker_id} signal={name} "
            f"grace={self.grace_seconds:g}s"
        )

    def run(self, task_id=None) -> WorkerStats:
        try:
            if task_id is not None:
                self._run_one(task_id)
            else:
                self._run_queue()
        finally:
            self.waiter.close()
            self._flush_counters(force=True)
            refresh_connections()
        return self.stats

    def _flush_counters(self, *, force: bool = False) -> None:
        """Add this worker's claims, missed claims and yields to the shared
        counters.

        Batched (every COUNTER_FLUSH_SECONDS and at exit) so that counting never
        adds a write to every claim.
        """
        now = time.monotonic()
        if not force and now < self._counters_due:
            return
        self._counters_due = now + COUNTER_FLUSH_SECONDS
        try:
            for name, stat in FLUSHED_STATS.items():
                amount = getattr(self.stats, stat) - self._flushed[name]
                counters.worker_counter_add(
                    name, worker_id=self.worker_id, amount=amount
                )
                self._flushed[name] += amount
        except DatabaseError:
            logger.warning("could not record claim counters worker=%s", self.worker_id)

    def _run_one(self, task_id) -> None:
        claims.ingestion_tasks_reclaim_expired()
        claim = claims.ingestion_task_claim(task_id, worker_id=self.worker_id)
        if claim is None:
            self.stats.missed += 1
            self.write(f"claim missed task={task_id} worker={self.worker_id}")
        else:
            self.execute(claim, alone=True)

    def _run_queue(self) -> None:
        # Parsers get ready beside the first claim; a one-shot worker with an empty
        # queue (cron, most runs) does not start them at all.
        if self.loop or claims.claimable_tasks(1, lanes=self.lanes):
            warm_parser()
        if self.loop:
            self.waiter.ready()
        while not self.stopping.is_set() and not self._reached_max():
            try:
                refresh_connections()
                claim = self.claim_next()
            except CONNECTION_ERRORS as error:
                if not self.loop:
                    raise
                self.outage.wait_after(error, self.stopping)
                continue
            self.outage.recovered()
            if claim is None:
                if not self.loop:
                    break
                self._start_parsers()
                self.waiter.wait(self.poll_interval, self.stopping)
                continue
            self.execute(claim)

    def _start_parsers(self) -> None:
        """Idle: have the parsers running, so that the next task waits for no fork.

        A failure to start one (no memory or no processes left: the fork server
        then exits, and this side sees EOFError) is logged once per streak and left
        to the next task to report; an idle worker never stops over it.
        """
        try:
            start_parsers()
        except Exception as error:
            if not self._parsers_failing:
                logger.warning(
                    "parser processes could not start worker=%s (%s)",
                    self.worker_id,
                    type(error).__name__,
                )
            self._parsers_failing = True
        else:
            self._parsers_failing = False

    def _reached_max(self) -> bool:
        return self.max_tasks is not None and self.stats.claimed >= self.max_tasks

    # --- claiming --------------------------------------------------------------

    def claim_next(self) -> TaskClaim | None:
        self._reclaim_expired_if_due()
        while (candidate := self.picker.next_candidate()) is not None:
            claim = claims.ingestion_task_claim_candidate(
                candidate, worker_id=self.worker_id, lanes=self.lanes
            )
            if claim is not None:
                return claim
            self.stats.missed += 1
            self.picker.missed()
        return None

    def _reclaim_expired_if_due(self) -> None:
        # Before claiming; a busy worker does it once per poll interval, not before
        # every claim (it would double the claim's cost).
        now = time.monotonic()
        if now >= self._reclaim_due:
            claims.ingestion_tasks_reclaim_expired()
            self._reclaim_due = now + self.poll_interval

    # --- executing -------------------------------------------------------------

    def execute(self, claim: TaskClaim, *, alone: bool = False) -> Outcome:
        """Run `claim`'s task, with small companions unless `alone`."""
        companions = None if alone else self._small_companions(claim)
        if companions is not None:
            return self.execute_small([claim, *companions])[claim.task_id]
        self.stats.claimed += 1
        self.write(
            f"claimed task={claim.task_id} worker={self.worker_id} "
            f"status=running attempt={claim.attempt}"
        )
        started = time.monotonic()
        with heartbeat_for(claim) as heartbeat:
            outcome = self._run_pipeline(claim, heartbeat.lost)
        self.stats.outcomes[str(claim.task_id)] = outcome
        self._flush_counters()
        logger.info(
            "task finished task=%s worker=%s outcome=%s seconds=%.3f",
            claim.task_id,
            self.worker_id,
            outcome,
            time.monotonic() - started,
        )
        return outcome

    def _small_companions(self, claim: TaskClaim) -> list[TaskClaim] | None:
        """Small tasks claimed to run with `claim` (`batches.py`), or None when
        it is not small itself, batching is off or no other small task waits
        (a lone task runs the pipeline: its progress shown stage by stage)."""
        limit = settings.INGESTION_SMALL_BATCH
        if limit <= 1 or claim.attempt != 1:
            return None
        if self.max_tasks is not None:
            limit = min(limit, self.max_tasks - self.stats.claimed)
        companions = claims.ingestion_tasks_claim_small(
            claim,
            limit=limit - 1,
            max_bytes=settings.INGESTION_SMALL_BATCH_MAX_BYTES,
            content_types=small_content_types(),
        )
        return companions or None

    def execute_small(self, batch: list[TaskClaim]) -> dict[object, Outcome]:
        """Run small tasks together; each ends with its own outcome, lines and
        log, as if run alone."""
        started = time.monotonic()
        for claim in batch:
            self.stats.claimed += 1
            self.write(
                f"claimed task={claim.task_id} worker={self.worker_id} "
                f"status=running attempt={claim.attempt}"
            )
        outcomes: dict[object, Outcome] = {}
        with heartbeat_for(
            batch[0], renew=claims.ingestion_tasks_renew_leases
        ) as heartbeat:
            try:
                result = SmallBatch(
                    batch, interrupt=lambda: self._checkpoint(batch[0], heartbeat.lost)
                ).run()
            except TaskLost:
                result = None
                why = "(cancelled or taken over; nothing of it kept)"
                outcomes = {c.task_id: self._lost(c, why) for c in batch}
            except ReleaseRequested:
                result = None
                outcomes = {c.task_id: self._release(c) for c in batch}
            except Exception as error:
                result = None
                failure = self._unexpected(batch[0], error)
                outcomes = {
                    c.task_id: self._fail(c, failure.error_code, failure.detail)
                    for c in batch
                }
        if result is not None:
            for claim, chunk_count in result.succeeded:
                self.stats.succeeded += 1
                self.write(
                    f"succeeded task={claim.task_id} worker={self.worker_id} "
                    f"chunks={chunk_count}"
                )
                outcomes[claim.task_id] = Outcome.SUCCEEDED
            for claim, failure in result.failed:
                outcomes[claim.task_id] = self._fail(
                    claim, failure.error_code, failure.detail
                )
            for claim in result.unfinished:
                # Cancelled (the guarded fail then matches no row: lost), or its
                # document could not move, which fails it as the single run does.
                outcomes[claim.task_id] = self._fail(
                    claim,
                    ErrorCode.INTERNAL_ERROR,
                    "Unexpected error in the worker (InvalidTransition).",
                )
        seconds = time.monotonic() - started
        for claim in batch:
            self.stats.outcomes[str(claim.task_id)] = outcomes[claim.task_id]
            logger.info(
                "task finished task=%s worker=%s outcome=%s seconds=%.3f batch=%s",
                claim.task_id,
                self.worker_id,
                outcomes[claim.task_id],
                seconds / len(batch),
                len(batch),
            )
        self._flush_counters()
        return outcomes

    def _unexpected(self, claim: TaskClaim, error: Exception) -> IngestionFailure:
        """The failure recorded for an error no stage expected."""
        if isinstance(error, IngestionFailure):
            return error
        if isinstance(error, CONNECTION_ERRORS):
            logger.warning(
                "database error task=%s (%s)", claim.task_id, type(error).__name__
            )
            if not connection.in_atomic_block:
                close_connection()
            return IngestionFailure(
                ErrorCode.DATABASE_UNAVAILABLE,
                f"The database connection failed ({type(error).__name__}).",
            )
        logger.exception("ingestion crashed task=%s", claim.task_id)
        return IngestionFailure(
            ErrorCode.INTERNAL_ERROR,
            f"Unexpected error in the worker ({type(error).__name__}).",
        )

    def _checkpoint(self, claim: TaskClaim, lost: threading.Event) -> None:
        """Called by the pipeline between steps and while it waits for the parser."""
        if lost.is_set():
            raise TaskLost(claim.task_id)
        if self._release_at is not None and time.monotonic() >= self._release_at:
            raise ReleaseRequested

    def _turn_over(
        self,
        claim: TaskClaim,
        started: float,
        asked: list[float],
        lane: str,
        *,
        found_heavy: bool = False,
    ) -> None:
        """Raise YieldRequested once the task, now of `lane`, has had its turn and
        others that this worker takes wait (`lanes.turn_is_over`; asked at most
        every WAITING_CHECK_SECONDS, `asked` holding the last time, and once
        when the run finds the task heavy)."""
        now = time.monotonic()
        ran = now - started
        if not self.turn_seconds:
            return
        if not found_heavy and (
            ran < min(self.turn_seconds, self.light_wait)
            or (asked and now - asked[0] < WAITING_CHECK_SECONDS)
        ):
            return
        asked[:] = [now]
        waiting = claims.ingestion_lanes_waiting(
            besides=claim.task_id, lanes=self.lanes
        )
        if turn_is_over(
            lane=lane,
            ran=ran,
            waiting=waiting,
            turn=self.turn_seconds,
            light_wait=self.light_wait,
            found_heavy=found_heavy,
        ):
            raise YieldRequested

    def _run_pipeline(self, claim: TaskClaim, lost: threading.Event) -> Outcome:
        started = time.monotonic()
        pipeline = IngestionPipeline(
            claim,
            on_progress=self._print_progress,
            interrupt=lambda: self._checkpoint(claim, lost),
            turn_over=partial(self._turn_over, claim, started, []),
            lanes=self.lanes,
        )
        try:
            chunk_count = pipeline.run()
        except TaskLost:
            return self._lost(claim, "(cancelled or taken over; nothing of it kept)")
        except ReleaseRequested:
            return self._release(claim)
        except YieldRequested:
            return self._yield(claim)
        except HeavyTask as found:
            return self._reroute(claim, str(found))
        except IngestionFailure as failure:
            return self._fail(claim, failure.error_code, failure.detail)
        except CONNECTION_ERRORS as error:
            logger.warning(
                "database error task=%s (%s)", claim.task_id, type(error).__name__
            )
            if not connection.in_atomic_block:
                close_connection()
            return self._fail(
                claim,
                ErrorCode.DATABASE_UNAVAILABLE,
                f"The database connection failed ({type(error).__name__}).",
            )
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
        return Outcome.SUCCEEDED

    def _fail(self, claim: TaskClaim, error_code: str, detail: str) -> Outcome:
        try:
            status = claims.ingestion_task_report_failure(
                claim, error_code=error_code, detail=detail
            )
        except CONNECTION_ERRORS as error:
            # Nothing recorded: the lease runs out and the task is reclaimed.
            return self._lost(
                claim, f"(could not record {error_code}: {type(error).__name__})"
            )
        if status is None:
            return self._lost(claim, "")
        if status == TaskStatus.RETRY_WAIT:
            self.stats.retried += 1
            self.write(
                f"retry task={claim.task_id} worker={self.worker_id} "
                f"error_code={error_code} attempt={claim.attempt}"
            )
            return Outcome.RETRY_WAIT
        self.stats.failed += 1
        self.write(
            f"failed task={claim.task_id} worker={self.worker_id} "
            f"error_code={error_code}"
        )
        return Outcome.FAILED

    def _release(self, claim: TaskClaim) -> Outcome:
        try:
            released = claims.ingestion_task_release(claim)
        except CONNECTION_ERRORS as error:
            return self._lost(claim, f"(could not release: {type(error).__name__})")
        if not released:
            return self._lost(claim, "")
        self.stats.released += 1
        self.write(
            f"released task={claim.task_id} worker={self.worker_id} "
            "(shutdown; back in the queue, no attempt charged)"
        )
        return Outcome.RELEASED

    def _yield(self, claim: TaskClaim) -> Outcome:
        try:
            moved = claims.ingestion_task_yield(claim)
        except CONNECTION_ERRORS as error:
            return self._lost(claim, f"(could not yield: {type(error).__name__})")
        if not moved:
            return self._lost(claim, "")
        self.stats.yielded += 1
        self.write(
            f"yielded task={claim.task_id} worker={self.worker_id} "
            "(its turn is over; back in the queue, resumes from its checkpoints)"
        )
        return Outcome.YIELDED

    def _reroute(self, claim: TaskClaim, reason: str) -> Outcome:
        try:
            released = claims.ingestion_task_release(claim, lane=TaskLane.HEAVY)
        except CONNECTION_ERRORS as error:
            return self._lost(claim, f"(could not reroute: {type(error).__name__})")
        if not released:
            return self._lost(claim, "")
        self.stats.rerouted += 1
        self.write(
            f"rerouted task={claim.task_id} worker={self.worker_id} lane=heavy "
            f"({reason}; back in the queue, no attempt charged)"
        )
        return Outcome.REROUTED

    def _lost(self, claim: TaskClaim, why: str) -> Outcome:
        self.stats.lost += 1
        self.write(f"lost task={claim.task_id} worker={self.worker_id} {why}".rstrip())
        return Outcome.LOST

    def _print_progress(self, stage: str, completed: int, total: int) -> None:
        self.write(f"stage={stage} {completed}/{total}")
