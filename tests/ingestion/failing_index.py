"""The app `tests.failing_index_settings` adds: the first indexing of the worker
process fails with OperationalError, and every parse appends its kind to the file
CURATOR_TEST_PARSE_LOG names."""

from __future__ import annotations

import os

from django.apps import AppConfig
from django.db import OperationalError


class FailingIndex(AppConfig):
    name = "tests.ingestion.failing_index"
    label = "failing_index"

    def ready(self) -> None:
        from ingestion import pipeline, sandbox

        extract, chunk_rows = sandbox.ParseSandbox.extract, pipeline.chunk_rows
        failures = [OperationalError("connection dropped (test)")]

        def counted_extract(sandbox_self, kind, *args, **kwargs):
            with open(os.environ["CURATOR_TEST_PARSE_LOG"], "a") as log:
                log.write(f"{kind}\n")
            return extract(sandbox_self, kind, *args, **kwargs)

        def failing_once(**kwargs):
            if failures:
                raise failures.pop()
            return chunk_rows(**kwargs)

        sandbox.ParseSandbox.extract = counted_extract
        pipeline.chunk_rows = failing_once
