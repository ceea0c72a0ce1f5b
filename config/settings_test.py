"""Test settings: the real settings, with a throwaway key, fast password hashing
and the fast hashing embedder."""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("SECRET_KEY", "insecure-test-only-key")
os.environ.setdefault(
    "MEDIA_ROOT", str(Path(__file__).resolve().parent.parent / "var" / "test-media")
)

from config.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# Each test sees its own readiness checks; tests/security checks the reuse.
READINESS_CACHE_SECONDS = 0
# Test databases give index versions again with other chunks: snapshots stay in
# each process's memory unless a test (or `process_env`) gives a folder of its own.
SEARCH_SNAPSHOT_DIR = ""
# The hashing embedder: thousands of chunks a second, where E5 embeds a few. The
# tests of E5 itself build it (tests/retrieval/test_e5_embeddings.py); other
# Curator processes get it from `process_env`.
EMBEDDING_PROVIDER = "hashing"
# Words alone for answers: the model of meaning embeds every sentence a test
# ingests. Its tests turn it on (tests/retrieval/test_confidence.py).
CHAT_MEANING_PROVIDER = ""
