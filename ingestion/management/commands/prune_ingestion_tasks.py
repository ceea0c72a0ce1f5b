from __future__ import annotations

from datetime import timedelta

from django.core.management.base import BaseCommand

from core.arguments import positive_float
from ingestion.housekeeping import ingestion_history_prune


class Command(BaseCommand):
    help = (
        "Delete finished ingestion tasks (succeeded, failed, cancelled) and "
        "delivered outbox events older than --older-than days. The latest task of "
        "each document is always kept. Stage outputs kept for a retry (artifacts) "
        "go once no task of their document can resume from them."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--older-than",
            type=positive_float,
            required=True,
            metavar="DAYS",
            help="Age in days (finished_at / delivered_at) beyond which rows go.",
        )

    def handle(self, *args, **options):
        result = ingestion_history_prune(
            older_than=timedelta(days=options["older_than"])
        )
        self.stdout.write(
            self.style.SUCCESS(
                f"pruned tasks={result.tasks} outbox_events={result.events} "
                f"artifacts={result.artifacts}"
            )
        )
