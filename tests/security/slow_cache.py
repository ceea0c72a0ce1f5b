"""The database cache, handing back each value it read half a second later
(slow_cache_settings.py): whatever is decided on that value is decided late."""

from __future__ import annotations

import time

from django.core.cache.backends.db import DatabaseCache


class SlowReadDatabaseCache(DatabaseCache):
    def get(self, key, default=None, version=None):
        value = super().get(key, default, version)
        time.sleep(0.5)
        return value
