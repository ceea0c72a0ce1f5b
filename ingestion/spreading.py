"""Which claimable task a worker aims at next: the claim-spreading policy.

A worker without competition reads and claims the first task in claim order (the
earliest turn, `enqueue.next_turn`, oldest first within it). A missed claim means
its view of the queue is stale (others claimed meanwhile), so it reads the queue
again rather than trying more of it, and for its next `SPREAD_CLAIMS_AFTER_MISS`
claims it picks one task at random among the first 2 x `INGESTION_CLAIM_WINDOW` in
that order, so that competing workers rarely aim at the same row
(docs/benchmarks.md, "Claiming on PostgreSQL"). A worker of both lanes looks in
the light lane first: light work goes before heavy, by turns within each.
"""

from __future__ import annotations

import random

from django.conf import settings

from . import claims
from .claims import Candidate
from .lanes import ALL_LANES
from .models import TaskLane

SPREAD_CLAIMS_AFTER_MISS = 500


class CandidatePicker:
    def __init__(
        self,
        *,
        rng: random.Random | None = None,
        lanes: frozenset[str] = ALL_LANES,
    ) -> None:
        self._rng = rng or random.Random()  # noqa: S311 - load spreading, not security
        self._spread_remaining = 0
        # Light work first, each lane in claim order: a small file waits for
        # seconds, not behind a scan's turn (`lanes.turn_is_over`).
        self._lane_order = (
            [lanes & {TaskLane.LIGHT}, lanes] if len(lanes) > 1 else [lanes]
        )

    def next_candidate(self) -> Candidate | None:
        """The task to try to claim next; `None` when nothing is claimable."""
        for lanes in self._lane_order:
            candidate = self._candidate(lanes)
            if candidate is not None:
                return candidate
        return None

    def _candidate(self, lanes: frozenset[str]) -> Candidate | None:
        candidates: list[Candidate] = []
        if self._spread_remaining > 0:
            self._spread_remaining -= 1
            # One row read, at a random place among the next few: past the end
            # of a short queue it finds nothing, and the first is read instead.
            candidates = claims.claimable_tasks(
                1,
                offset=self._rng.randrange(settings.INGESTION_CLAIM_WINDOW * 2),
                lanes=lanes,
            )
        candidates = candidates or claims.claimable_tasks(1, lanes=lanes)
        return candidates[0] if candidates else None

    def missed(self) -> None:
        """The last candidate was claimed by another worker: spread from now on."""
        self._spread_remaining = SPREAD_CLAIMS_AFTER_MISS
