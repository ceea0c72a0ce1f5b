from __future__ import annotations

import json

from django.core.management.base import BaseCommand

from ingestion.selectors import ingestion_status


class Command(BaseCommand):
    help = (
        "Show the ingestion queue: tasks per state, the oldest queued task's age, "
        "per lane the tasks claimable and running and how long they waited, "
        "running tasks with stage, progress and lease, failures per error code in "
        "the last 24 hours, undelivered outbox events."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--json", action="store_true", help="Print one JSON object (for scripts)."
        )

    def handle(self, *args, **options):
        status = ingestion_status()
        if options["json"]:
            self.stdout.write(json.dumps(status, indent=2, sort_keys=True))
            return
        write = self.stdout.write
        write("Tasks by state")
        for state, count in status["tasks_by_status"].items():
            write(f"  {state:<12} {count}")
        age = status["oldest_queued_age_seconds"]
        write(f"Oldest queued: {'-' if age is None else f'{age:.0f} s'}")
        write("Lanes (waits of tasks claimed in the last 24 h)")
        for lane, queue in status["lanes"].items():
            write(
                f"  {lane:<6} claimable={queue['depth']} running={queue['running']} "
                f"oldest={self.seconds(queue['oldest_wait_seconds'])} "
                f"wait p50={self.seconds(queue['wait_p50_seconds'])} "
                f"p95={self.seconds(queue['wait_p95_seconds'])} "
                f"claimed={queue['claimed_last_24h']}"
            )
        write(f"Running ({len(status['running'])})")
        for task in status["running"]:
            write(
                f"  {task['task_id']} worker={task['worker_id']} "
                f"attempt={task['attempt']} {task['stage']} "
                f"{task['completed']}/{task['total']} "
                f"{self.lease_text(task['lease_expires_in_seconds'])} "
                f"lane={task['lane']}"
            )
        failures = status["failures_last_24h_by_error_code"]
        write("Failures in the last 24 h" + ("" if failures else ": none"))
        for code, count in sorted(failures.items()):
            write(f"  {code:<22} {count}")
        write(f"Outbox events not yet delivered: {status['outbox_undelivered']}")

    def seconds(self, value: float | None) -> str:
        return "-" if value is None else f"{value:.1f} s"

    def lease_text(self, seconds: float | None) -> str:
        if seconds is None:
            return "no lease"
        if seconds < 0:
            return self.style.WARNING(f"lease expired {-seconds:.0f} s ago")
        return f"lease {seconds:.0f} s"
