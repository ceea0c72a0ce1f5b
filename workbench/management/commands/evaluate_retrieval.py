from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.arguments import positive_int
from retrieval.search import PROFILES
from workbench.evaluation.datasets import PASSAGE_FORMATS, DatasetError, load_dataset
from workbench.evaluation.scratch import EvaluationError
from workbench.evaluation.search_quality import Evaluator


class Command(BaseCommand):
    help = (
        "Measure retrieval quality on a SQuAD-style or TAT-QA data set: ingest its "
        "passages into a scratch knowledge base through the real ingestion path, ask "
        "its questions with each profile and print recall@1/5/10, MRR@10 and the "
        "median latency, beside a plain BM25 baseline (bm25s over jieba words)."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--dataset", type=Path, required=True, help="Path of the JSON data set."
        )
        parser.add_argument(
            "--format",
            choices=("auto", *PASSAGE_FORMATS),
            default="auto",
            help="Data set format (default: detected from the file).",
        )
        parser.add_argument(
            "--profile",
            action="append",
            choices=PROFILES,
            dest="profiles",
            help="Search profile to measure; repeat for several (default: all).",
        )
        parser.add_argument(
            "--limit",
            type=positive_int,
            default=None,
            help="Ask only the first N questions (every passage is still indexed).",
        )
        parser.add_argument(
            "--no-baseline",
            action="store_false",
            dest="baseline",
            help="Leave out the bm25s-jieba baseline row.",
        )
        parser.add_argument(
            "--json", action="store_true", help="Print the result as JSON."
        )
        parser.add_argument(
            "--keep",
            action="store_true",
            help="Keep the scratch knowledge base instead of deleting it.",
        )

    def handle(self, *args, **options):
        try:
            dataset = load_dataset(options["dataset"], options["format"])
        except DatasetError as error:
            raise CommandError(str(error)) from error
        if dataset.format not in PASSAGE_FORMATS:
            raise CommandError(
                "A data set of documents is measured by evaluate_answers; "
                "evaluate_retrieval reads SQuAD-style and TAT-QA files."
            )
        try:
            report = Evaluator(
                dataset.limited(options["limit"]),
                profiles=list(dict.fromkeys(options["profiles"] or PROFILES)),
                baseline=options["baseline"],
                keep=options["keep"],
                write=self.stderr.write if options["verbosity"] > 0 else lambda _: None,
            ).run()
        except EvaluationError as error:
            raise CommandError(str(error)) from error
        if options["json"]:
            self.stdout.write(json.dumps(report.as_json(), indent=2))
            return
        self.stdout.write(
            f"{report.dataset} ({report.format}): {report.passages} passages, "
            f"{report.chunks} chunks, {report.questions} questions, "
            f"ingested in {report.ingest_seconds:.1f} s"
        )
        self.stdout.write(report.table())
