"""Ingestion metrics read from the database at scrape time.

Workers are separate processes, possibly on other hosts, so nothing here lives in
process memory: any API host answers `/metrics` with the same numbers.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

from django.db.models import Count, Min, Sum
from django.utils import timezone
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
)
from prometheus_client.registry import Collector

from .models import (
    FINISHED_STATUSES,
    ErrorCode,
    IngestionTask,
    TaskStage,
    TaskStatus,
    WorkerCounter,
)
from .selectors import lane_queues

DURATION_BUCKETS = (0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0)
# Light work should wait seconds at most (issue 35: 15 s), heavy work may wait more.
WAIT_BUCKETS = (0.1, 0.5, 1.0, 2.5, 5.0, 15.0, 30.0, 60.0, 300.0, 1800.0)
RECENT = timedelta(hours=24)


class IngestionCollector(Collector):
    def collect(self) -> Iterator:
        now = timezone.now()
        yield self._tasks_by_state()
        yield self._queue_age(now)
        yield from self._lanes(now)
        yield from self._failures(now)
        yield self._durations(now)
        yield self._stage_durations(now)
        yield from self._worker_counters()

    def _tasks_by_state(self) -> GaugeMetricFamily:
        gauge = GaugeMetricFamily(
            "curator_ingestion_tasks", "Ingestion tasks by state.", labels=["status"]
        )
        counts = dict(
            IngestionTask.objects.order_by()
            .values_list("status")
            .annotate(n=Count("pk"))
            .values_list("status", "n")
        )
        for status in TaskStatus.values:
            gauge.add_metric([status], counts.get(status, 0))
        return gauge

    def _queue_age(self, now) -> GaugeMetricFamily:
        oldest = (
            IngestionTask.objects.claimable(now)
            .order_by()
            .aggregate(oldest=Min("available_at"))["oldest"]
        )
        return GaugeMetricFamily(
            "curator_ingestion_queue_oldest_age_seconds",
            "Age of the oldest claimable task (0 when the queue is empty).",
            value=(now - oldest).total_seconds() if oldest else 0.0,
        )

    def _lanes(self, now) -> Iterator[GaugeMetricFamily | HistogramMetricFamily]:
        """Per lane: depth, the oldest claimable task's wait so far, and the
        queue waits (claim minus available) of tasks claimed in the last 24 h."""
        depth = GaugeMetricFamily(
            "curator_ingestion_lane_depth",
            "Claimable tasks, by lane.",
            labels=["lane"],
        )
        oldest = GaugeMetricFamily(
            "curator_ingestion_lane_oldest_wait_seconds",
            "Wait so far of the oldest claimable task, by lane (0 when none).",
            labels=["lane"],
        )
        waits = HistogramMetricFamily(
            "curator_ingestion_queue_wait_seconds",
            "Queue wait of tasks claimed in the last 24 hours, by lane.",
            labels=["lane"],
        )
        for lane, queue in lane_queues(now).items():
            depth.add_metric([lane], queue.depth)
            oldest.add_metric([lane], queue.oldest_wait_seconds or 0.0)
            _add_histogram(waits, lane, queue.recent_waits, WAIT_BUCKETS)
        yield depth
        yield oldest
        yield waits

    def _failures(self, now) -> Iterator[GaugeMetricFamily]:
        failed = IngestionTask.objects.filter(status=TaskStatus.FAILED).order_by()
        for name, help_text, rows in (
            (
                "curator_ingestion_failures",
                "Failed tasks kept in history, by error code.",
                failed,
            ),
            (
                "curator_ingestion_failures_recent",
                "Tasks that failed in the last 24 hours, by error code.",
                failed.filter(finished_at__gte=now - RECENT),
            ),
        ):
            gauge = GaugeMetricFamily(name, help_text, labels=["error_code"])
            counts = dict(
                rows.values_list("error_code")
                .annotate(n=Count("pk"))
                .values_list("error_code", "n")
            )
            for code in sorted({*ErrorCode.values, *filter(None, counts)}):
                gauge.add_metric([code], counts.get(code, 0))
            yield gauge

    def _durations(self, now) -> HistogramMetricFamily:
        """Run time (claim to finish) of tasks finished in the last 24 hours."""
        histogram = HistogramMetricFamily(
            "curator_ingestion_task_duration_seconds",
            "Run time of tasks finished in the last 24 hours, by outcome.",
            labels=["status"],
        )
        rows = (
            IngestionTask.objects.filter(
                status__in=FINISHED_STATUSES,
                finished_at__gte=now - RECENT,
                started_at__isnull=False,
            )
            .order_by()
            .values_list("status", "started_at", "finished_at")
        )
        samples: dict[str, list[float]] = {s: [] for s in FINISHED_STATUSES}
        for status, started, finished in rows.iterator():
            samples[status].append(max((finished - started).total_seconds(), 0.0))
        for status, seconds in samples.items():
            _add_histogram(histogram, status, seconds)
        return histogram

    def _stage_durations(self, now) -> HistogramMetricFamily:
        """Seconds per stage of the last run of tasks finished in the last 24 hours.

        The final stage (finalizing) is not timed: it ends with the task.
        """
        histogram = HistogramMetricFamily(
            "curator_ingestion_stage_duration_seconds",
            "Seconds per stage, tasks finished in the last 24 hours.",
            labels=["stage"],
        )
        rows = (
            IngestionTask.objects.filter(
                status__in=FINISHED_STATUSES, finished_at__gte=now - RECENT
            )
            .order_by()
            .values_list("stage_seconds", flat=True)
        )
        samples: dict[str, list[float]] = {
            stage: [] for stage in TaskStage.values if stage != TaskStage.FINALIZING
        }
        for timings in rows.iterator():
            for stage, seconds in (timings or {}).items():
                if stage in samples and isinstance(seconds, int | float):
                    samples[stage].append(float(seconds))
        for stage, seconds in samples.items():
            _add_histogram(histogram, stage, seconds)
        return histogram

    def _worker_counters(self) -> Iterator[CounterMetricFamily]:
        totals = dict(
            WorkerCounter.objects.order_by()
            .values_list("name")
            .annotate(total=Sum("value"))
            .values_list("name", "total")
        )
        for name, help_text in (
            ("claims", "Tasks claimed by workers."),
            ("missed_claims", "Claim attempts another worker won first."),
            ("leases_reclaimed", "Running tasks taken back after their lease expired."),
            ("turns_yielded", "Running tasks given back at a checkpoint for others."),
        ):
            yield CounterMetricFamily(
                f"curator_ingestion_{name}", help_text, value=totals.get(name, 0)
            )


def _add_histogram(
    histogram: HistogramMetricFamily,
    label: str,
    seconds: list[float],
    bounds: tuple[float, ...] = DURATION_BUCKETS,
) -> None:
    buckets = [(str(bound), sum(1 for s in seconds if s <= bound)) for bound in bounds]
    buckets.append(("+Inf", len(seconds)))
    histogram.add_metric([label], buckets, sum_value=sum(seconds))
