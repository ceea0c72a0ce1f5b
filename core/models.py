"""The kernel's one table: counts that hold under concurrency (`core/counters.py`)."""

from __future__ import annotations

from django.db import models


class Counter(models.Model):
    """Events of one subject in its current window.

    The window began with the subject's first event and ends at `window_ends`
    (seconds since the epoch); a row whose window has ended counts as no row, and
    is deleted now and then. Totals for /metrics are windows that never end.
    """

    subject = models.CharField(max_length=200, primary_key=True)
    count = models.PositiveIntegerField(default=0)
    window_ends = models.FloatField(db_index=True)

    def __str__(self) -> str:
        return f"{self.subject} = {self.count}"
