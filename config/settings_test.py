"""Test settings: the real settings, with a throwaway key and fast hashing."""

from __future__ import annotations

import os
import tempfile

os.environ.setdefault("SECRET_KEY", "insecure-test-only-key")
os.environ.setdefault("MEDIA_ROOT", tempfile.mkdtemp(prefix="curator-test-media-"))

from config.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
