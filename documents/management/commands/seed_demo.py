from django.core.management.base import BaseCommand

from documents.demo import DemoSeeder


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

    def handle(self, *args, **options):
        seeder = DemoSeeder(report=self.stdout.write)
        seeder.run(with_documents=not options["no_documents"])
        self.stdout.write(self.style.SUCCESS("Demo data is ready."))
