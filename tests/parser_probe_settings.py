"""Test-only settings: the real settings, with an embedder that probes, from inside
a parser process, what of the worker it can open (`OpenProbe` in
`tests/security/parser_hooks.py`; EMBEDDING_PROVIDER=open-probe), and the paths to
try in CURATOR_TEST_PROBE."""

from __future__ import annotations

from config.settings import *  # noqa: F403
from config.settings import EMBEDDING_PROVIDERS, INGESTION_PARSER_ENV

EMBEDDING_PROVIDERS = {
    **EMBEDDING_PROVIDERS,
    "open-probe": "tests.security.parser_hooks.OpenProbe",
}
INGESTION_PARSER_ENV = [*INGESTION_PARSER_ENV, "CURATOR_TEST_PROBE"]
