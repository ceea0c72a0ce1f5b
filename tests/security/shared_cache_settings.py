"""Test-only settings: the real settings with a cache that several server
processes share (a directory, CURATOR_TEST_CACHE_DIR), as Redis or the database
cache would be in production."""

from __future__ import annotations

import os

from config.settings import *  # noqa: F403

CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
        "LOCATION": os.environ["CURATOR_TEST_CACHE_DIR"],
    }
}
