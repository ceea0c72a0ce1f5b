"""Test-only settings: the real settings, with a worker whose first indexing fails
as if the database connection had dropped, and whose parses are counted, one line
each, in the file CURATOR_TEST_PARSE_LOG names (`tests/ingestion/failing_index.py`,
installed as an app so that it patches the pipeline once the apps are loaded)."""

from __future__ import annotations

from config.settings import *  # noqa: F403
from config.settings import INSTALLED_APPS

INSTALLED_APPS = [*INSTALLED_APPS, "tests.ingestion.failing_index.FailingIndex"]
