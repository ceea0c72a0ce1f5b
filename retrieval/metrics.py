"""Search and chat latency, observed in this API process (prometheus_client's
default registry; each process exports its own, as Prometheus expects)."""

from __future__ import annotations

from prometheus_client import Histogram

LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)

SEARCH_SECONDS = Histogram(
    "curator_search_seconds",
    "Time to answer POST /api/search.",
    buckets=LATENCY_BUCKETS,
)
CHAT_SECONDS = Histogram(
    "curator_chat_seconds", "Time to answer POST /api/chat.", buckets=LATENCY_BUCKETS
)
