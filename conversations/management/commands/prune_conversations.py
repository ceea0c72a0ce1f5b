from __future__ import annotations

from datetime import timedelta

from django.core.management.base import BaseCommand

from conversations.services import conversation_prune
from core.arguments import positive_float


class Command(BaseCommand):
    help = (
        "Delete chat conversations, with their turns, last used more than "
        "--older-than days ago."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--older-than",
            type=positive_float,
            required=True,
            metavar="DAYS",
            help="Age in days (since the conversation's latest turn) beyond which "
            "conversations go.",
        )

    def handle(self, *args, **options):
        pruned = conversation_prune(older_than=timedelta(days=options["older_than"]))
        self.stdout.write(self.style.SUCCESS(f"pruned conversations={pruned}"))
