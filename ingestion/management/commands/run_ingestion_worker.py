from __future__ import annotations

import argparse
import logging
import os
import socket
import uuid

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from core.arguments import positive_float, positive_int
from ingestion.checks import parser_exposure
from ingestion.lanes import ALL_LANES, lanes_text, parse_lanes
from ingestion.models import IngestionTask
from ingestion.parsers import check_parsers
from ingestion.sandbox import SandboxError
from ingestion.wakeups import WAKE_MODES, make_waiter
from ingestion.worker import Worker

logger = logging.getLogger(__name__)


def _lanes(text: str) -> frozenset[str]:
    try:
        return parse_lanes(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


class Command(BaseCommand):
    # A cron-started worker pays its start-up on every run: skip the system checks
    # (they import every URLconf and view); `manage.py check` belongs to deploys.
    requires_system_checks: list[str] = []
    help = (
        "Run ingestion tasks. With TASK_ID, run that task; without, claim the oldest "
        "claimable tasks until the queue is empty (or keep polling with --loop). "
        "SIGTERM/SIGINT: stop claiming, finish the current task within "
        "INGESTION_SHUTDOWN_GRACE_SECONDS or release it (a second signal releases "
        "at once), exit 0."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "task_id", nargs="?", type=uuid.UUID, help="Run only this task (a UUID)."
        )
        parser.add_argument(
            "--worker-id",
            default=f"{socket.gethostname()}-{os.getpid()}",
            help="Name written on claimed tasks (default: host-pid).",
        )
        parser.add_argument(
            "--loop",
            action="store_true",
            help="Keep polling for new tasks until stopped (SIGTERM/SIGINT).",
        )
        parser.add_argument(
            "--max-tasks",
            type=positive_int,
            default=None,
            help="Stop after claiming this many tasks.",
        )
        parser.add_argument(
            "--poll-interval",
            type=positive_float,
            default=None,
            help="Seconds between polls of an empty queue with --loop "
            "(default: INGESTION_POLL_INTERVAL).",
        )
        parser.add_argument(
            "--lanes",
            type=_lanes,
            default=ALL_LANES,
            help="Claim only tasks of these lanes, comma-separated: light, heavy "
            "(default both). A light-only worker gives a task it finds heavy back "
            "to the queue, for the others (docs/operations.md, Lanes).",
        )
        parser.add_argument(
            "--wake",
            choices=WAKE_MODES,
            default="auto",
            help="How an idle --loop worker learns of new tasks besides polling: "
            "notify (PostgreSQL LISTEN), redis (BRPOP on OUTBOX_REDIS_KEY), poll "
            "(only polling). Default auto: notify on PostgreSQL, else poll.",
        )

    def handle(self, *args, **options):
        try:
            check_parsers()
        except SandboxError as error:
            raise CommandError(str(error)) from error
        for warning in parser_exposure():
            logger.warning("%s %s (%s)", warning.msg, warning.hint, warning.id)
        task_id = options["task_id"]
        if (
            task_id is not None
            and not IngestionTask.objects.filter(pk=task_id).exists()
        ):
            raise CommandError(f"No ingestion task {task_id}.")
        try:
            waiter = make_waiter(options["wake"] if options["loop"] else "poll")
        except ValueError as error:
            raise CommandError(str(error)) from error
        worker = Worker(
            worker_id=options["worker_id"],
            loop=options["loop"],
            max_tasks=options["max_tasks"],
            poll_interval=options["poll_interval"] or settings.INGESTION_POLL_INTERVAL,
            waiter=waiter,
            write=self.stdout.write,
            lanes=options["lanes"],
        )
        worker.install_signal_handlers()
        if options["loop"]:
            self.stdout.write(
                f"started worker={worker.worker_id} wake={waiter.mode} "
                f"poll_interval={worker.poll_interval:g}s "
                f"lanes={lanes_text(worker.lanes)}"
            )
        stats = worker.run(task_id)
        if task_id is not None:
            return
        if stats.claimed == 0:
            self.stdout.write(f"nothing to do worker={worker.worker_id}")
        else:
            self.stdout.write(
                f"stopped worker={worker.worker_id} claimed={stats.claimed} "
                f"succeeded={stats.succeeded} failed={stats.failed} "
                f"retried={stats.retried} released={stats.released} "
                f"yielded={stats.yielded} rerouted={stats.rerouted} "
                f"lost={stats.lost} missed={stats.missed}"
            )
