from __future__ import annotations

import json
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError

from answers import rules
from answers.providers import provider_names
from core.arguments import positive_int
from workbench.evaluation.answer_quality import AnswerEvaluator
from workbench.evaluation.datasets import FORMATS, DatasetError, load_dataset
from workbench.evaluation.scratch import EvaluationError


class Command(BaseCommand):
    help = (
        "Measure answer quality on a SQuAD-style or TAT-QA data set, a documents "
        "data set or a knowledge-base folder (kb-dev): publish every other "
        "article (SQuAD) or item (TAT-QA), or every document, into a scratch "
        "knowledge base "
        "through the real ingestion path, ask every question through the chat "
        "service and report the answer-hit rate, wrong answers and refusals (the "
        "questions about unpublished passages must be refused), the median answer "
        "length and the chat latency; for TAT-QA also per answer type."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--dataset",
            type=Path,
            required=True,
            help="Path of the JSON data set, or of a knowledge-base folder.",
        )
        parser.add_argument(
            "--format",
            choices=("auto", *FORMATS),
            default="auto",
            help="Data set format (default: detected from the file).",
        )
        parser.add_argument(
            "--provider",
            default=None,
            help="Chat provider to measure (default: the configured CHAT_PROVIDER).",
        )
        parser.add_argument(
            "--limit",
            type=positive_int,
            default=None,
            help="Ask only the first N questions (the same half is published).",
        )
        parser.add_argument(
            "--details",
            type=Path,
            default=None,
            help="Write one JSON line per question (question, gold, answer) here.",
        )
        parser.add_argument(
            "--json", action="store_true", help="Print the result as JSON."
        )
        parser.add_argument(
            "--ablate",
            action="append",
            default=[],
            metavar="RULE",
            help="Switch off this rule of the extractive answerer (its name in "
            "answers/rules.py) to measure what it is worth; repeatable.",
        )
        parser.add_argument(
            "--keep",
            action="store_true",
            help="Keep the scratch knowledge base instead of deleting it.",
        )

    def handle(self, *args, **options):
        try:
            with rules.ablated(*options["ablate"]):
                self._evaluate(options)
        except rules.UnknownRule as error:
            raise CommandError(str(error)) from error

    def _evaluate(self, options) -> None:
        try:
            dataset = load_dataset(options["dataset"], options["format"])
        except DatasetError as error:
            raise CommandError(str(error)) from error
        try:
            evaluator = AnswerEvaluator(
                dataset.limited(options["limit"]),
                provider=options["provider"],
                keep=options["keep"],
                write=self.stderr.write if options["verbosity"] > 0 else lambda _: None,
            )
        except ImproperlyConfigured as error:
            raise CommandError(
                f"{error} (providers: {', '.join(provider_names())})"
            ) from error
        try:
            report = evaluator.run()
        except EvaluationError as error:
            raise CommandError(str(error)) from error
        if options["details"]:
            with options["details"].open("w", encoding="utf-8") as stream:
                report.write_details(stream)
        ablated = sorted(rules.switched_off())
        if options["json"]:
            result = {**report.as_json(), "ablated": ablated}
            self.stdout.write(json.dumps(result, indent=2))
            return
        self.stdout.write(
            f"{report.dataset} ({report.format}), provider {report.provider}: "
            f"{report.published} passages published ({report.chunks} chunks), "
            f"{report.held_out} held out, ingested in {report.ingest_seconds:.1f} s"
        )
        if ablated:
            self.stdout.write(f"Rules switched off: {', '.join(ablated)}")
        self.stdout.write(report.table())
        if report.format == "kb":
            self.stdout.write("\nMisses (wrong answers first):")
            for line in report.misses():
                self.stdout.write(line)
