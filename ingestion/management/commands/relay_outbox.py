from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand

from core.arguments import positive_float, positive_int
from ingestion.outbox import Relay


class Command(BaseCommand):
    help = (
        "Publish committed outbox events (NOTIFY on PostgreSQL, Redis when "
        "OUTBOX_REDIS_URL is set) and mark them delivered. Without --loop, stop "
        "when none is left."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--loop",
            action="store_true",
            help="Keep relaying until stopped (SIGTERM/SIGINT).",
        )
        parser.add_argument(
            "--interval",
            type=positive_float,
            default=None,
            help="Seconds between looks for new events with --loop "
            "(default: OUTBOX_RELAY_INTERVAL).",
        )
        parser.add_argument(
            "--batch-size",
            type=positive_int,
            default=100,
            help="Events read and published per pass (default: 100).",
        )

    def handle(self, *args, **options):
        relay = Relay(batch_size=options["batch_size"], write=self.stdout.write)
        relay.install_signal_handlers()
        publishers = ",".join(p.name for p in relay.publishers) or "none"
        self.stdout.write(f"relay started publishers={publishers}")
        stats = relay.run(
            loop=options["loop"],
            interval=options["interval"] or settings.OUTBOX_RELAY_INTERVAL,
        )
        self.stdout.write(
            f"relay stopped delivered={stats.delivered} failed={stats.failed}"
        )
