"""Test-only settings: the real settings with a default cache that hands back
what it read half a second later. A throttle that reads, decides and writes back
(DRF's own) then lets requests arriving together through, however the server
spaces them out before the throttle; one that decides in a single statement is
not affected. Without the delay the race shows only now and then."""

from __future__ import annotations

from config.settings import *  # noqa: F403

CACHES = {
    "default": {
        **CACHES["default"],  # noqa: F405
        "BACKEND": "tests.security.slow_cache.SlowReadDatabaseCache",
    }
}
