from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from workbench.demo import DemoSeeder


class Command(BaseCommand):
    help = (
        "Create the demo knowledge bases, users (alice, bob, carol; password from "
        "DEMO_PASSWORD) and sample documents. Safe to run more than once."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--no-documents",
            action="store_true",
            help="Create knowledge bases and users only, no sample documents.",
        )
        parser.add_argument(
            "--allow-production",
            action="store_true",
            help="Run even with DEBUG off (demo users with a known password).",
        )

    def handle(self, *args, **options):
        if not settings.DEBUG and not options["allow_production"]:
            raise CommandError(
                "seed_demo creates users with a known password; DEBUG is off, so "
                "this looks like a production configuration. Run it with DEBUG=true "
                "or pass --allow-production on purpose."
            )
        seeder = DemoSeeder(report=self.stdout.write)
        seeder.run(with_documents=not options["no_documents"])
        self.stdout.write(self.style.SUCCESS("Demo data is ready."))
