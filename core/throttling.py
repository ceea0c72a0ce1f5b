"""Per-user limits that every API process shares.

- `UserScopedRateThrottle`: requests per period, by the view's `throttle_scope`
  (`REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]`), counted in the database by
  `core.counters.take`; DRF answers `429` with `Retry-After`, and
  `core.api_errors` gives it the code `throttled`.
- `Slots`: at most N of something at once per owner (open chat streams), in the
  `default` cache. Each slot is its own cache key taken with `cache.add`, atomic
  on every cache backend (a counter's `incr` is not, on the database cache), and
  it expires on its own: a process killed while holding a slot frees it after
  the TTL, not never.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

from django.core.cache import cache
from rest_framework.settings import api_settings
from rest_framework.throttling import ScopedRateThrottle

from . import counters
from .rates import parse_rate


class UserScopedRateThrottle(ScopedRateThrottle):
    """DRF's scoped throttle (per user, per address when anonymous) counted by
    one atomic statement. DRF's own reads a history from the cache, decides and
    writes it back, so requests arriving together all passed. The rates are read
    at each request, so settings changes apply."""

    def allow_request(self, request, view) -> bool:
        self.scope = getattr(view, self.scope_attr, None)
        rate = api_settings.DEFAULT_THROTTLE_RATES[self.scope] if self.scope else None
        if not rate:
            return True
        limit = parse_rate(rate)
        taken = counters.take(
            self.get_cache_key(request, view), limit=limit.count, seconds=limit.seconds
        )
        self._retry_after = taken.retry_after
        return taken.allowed

    def wait(self) -> int:
        return self._retry_after


class Slot:
    """One held place; `release()` gives it back (safe to call more than once)."""

    def __init__(self, key: str | None, token: str, ttl_seconds: int) -> None:
        self.key = key
        self.token = token
        self.ttl_seconds = ttl_seconds
        self._refreshed_at = time.monotonic()
        self._released = False

    def refresh(self) -> None:
        """Keep a long stream's slot from expiring; writes at most every third TTL."""
        now = time.monotonic()
        if self.key and now - self._refreshed_at > self.ttl_seconds / 3:
            cache.touch(self.key, self.ttl_seconds)
            self._refreshed_at = now

    def release(self) -> None:
        if self._released:
            return
        self._released = True
        # Only our own token: after a TTL expiry the key may be someone else's.
        if self.key and cache.get(self.key) == self.token:
            cache.delete(self.key)


class Slots:
    """`limit` slots per owner under `name`; a limit of 0 means no limit."""

    def __init__(self, name: str, *, limit: int, ttl_seconds: int) -> None:
        self.name = name
        self.limit = limit
        self.ttl_seconds = ttl_seconds

    def acquire(self, owner: str) -> Slot | None:
        """A free slot, or None when all `limit` are held."""
        token = uuid.uuid4().hex
        if self.limit <= 0:
            return Slot(None, token, self.ttl_seconds)
        for index in range(self.limit):
            key = f"slots:{self.name}:{owner}:{index}"
            if cache.add(key, token, timeout=self.ttl_seconds):
                return Slot(key, token, self.ttl_seconds)
        return None


class SlotHeldStream:
    """Yields `chunks` while holding `slot` and frees it when closed.

    Django registers `close()` with the response, and every WSGI server closes
    the response it started: when the stream ends, when it raises, and when a
    write fails because the client went away. A generator's `finally` would not
    do: closing a generator that never started skips its body.
    """

    def __init__(self, chunks: Iterator[bytes], slot: Slot) -> None:
        self._chunks = chunks
        self._slot = slot

    def __iter__(self) -> SlotHeldStream:
        return self

    def __next__(self) -> bytes:
        try:
            chunk = next(self._chunks)
        except BaseException:
            self.close()
            raise
        self._slot.refresh()
        return chunk

    def close(self) -> None:
        try:
            close = getattr(self._chunks, "close", None)
            if close is not None:
                close()
        finally:
            self._slot.release()
