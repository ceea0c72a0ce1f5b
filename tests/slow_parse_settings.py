"""Test-only settings: the real settings, with a parse that takes a long while.

Tests use this as DJANGO_SETTINGS_MODULE for a worker process they mean to kill
or stop in the middle of parsing (CURATOR_TEST_PARSE_DELAY seconds, default 60).
The wait calls the worker's checkpoint like a real parse does, so a lost lease
or the end of the shutdown grace period still interrupts it.
"""

from __future__ import annotations

import os
import time

from config.settings import *  # noqa: F403
from ingestion import sandbox

_extract = sandbox.ParseSandbox.extract
_DELAY = float(os.environ.get("CURATOR_TEST_PARSE_DELAY", "60"))


def _slow_extract(self, *args, interrupt=lambda: None, **kwargs):
    deadline = time.monotonic() + _DELAY
    while time.monotonic() < deadline:
        interrupt()
        time.sleep(0.05)
    return _extract(self, *args, interrupt=interrupt, **kwargs)


sandbox.ParseSandbox.extract = _slow_extract
