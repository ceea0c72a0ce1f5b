"""The one backoff rule: task retries, reconnects after an outage, outbox redelivery."""

from __future__ import annotations

import random


def capped_exponential(
    attempt: int,
    *,
    base: float,
    cap: float,
    factor: float = 2,
    jitter: float = 0.0,
    rng: random.Random | None = None,
) -> float:
    """Seconds to wait after the `attempt`-th failure (1, 2, ...).

    `min(cap, base * factor ** (attempt - 1))`; with `jitter` j, times a random
    factor in [1 - j, 1), so that callers that failed together spread out and no
    delay is shorter than (1 - j) of its step.
    """
    try:
        step = min(cap, base * factor ** max(attempt - 1, 0))
    except OverflowError:  # past 2 ** 1023: the cap was reached long before
        step = cap
    if not jitter:
        return step
    return step * (rng or _rng).uniform(1.0 - jitter, 1.0)


_rng = random.Random()  # noqa: S311 - load spreading, not security
