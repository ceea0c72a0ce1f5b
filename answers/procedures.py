"""A procedure asked ("What should I do when ...?", 怎么办, 步骤): the steps of the
list the best sentence is part of or leads into, as claims."""

from __future__ import annotations

from dataclasses import replace

from .evidence import Unit
from .types import Claim, Confidence

# A run of one-sentence paragraphs is a list of steps from this many on.
MIN_STEPS = 3


def procedure_steps(
    best: Unit, units: list[Unit], confidence: Confidence, *, limit: int
) -> list[Claim]:
    """A procedure's steps: the run of one-sentence paragraphs (a list's items,
    as the parsers write them) of the best unit's section that it is part of or
    leads into, as claims from its first step on (at most `limit`); the last says
    whether more steps follow. None when the best unit is in no such run."""
    section = sorted(
        (
            unit
            for unit in units
            if unit.source_id == best.source_id
            and unit.heading == best.heading
            and unit.row is None
        ),
        key=lambda unit: unit.position,
    )
    runs: list[list[Unit]] = []
    for unit in section:
        alone = unit.quote.strip() == unit.paragraph.strip()
        if alone and runs and runs[-1][-1].position == unit.position - 1:
            runs[-1].append(unit)
        elif alone:
            runs.append([unit])
    steps = next(
        (
            run
            for run in runs
            if len(run) >= MIN_STEPS
            and run[0].position <= best.position + 1
            and best.position <= run[-1].position
        ),
        [],
    )
    # From the first step, unless the best unit is a later one of a long list.
    at = next((i for i, step in enumerate(steps) if step is best), 0)
    steps = steps[at if at >= limit else 0 :]
    claims = [
        Claim(
            text=step.text,
            source_ids=[step.source_id],
            quote=step.quote,
            confidence=confidence,
        )
        for step in steps[:limit]
    ]
    if len(steps) > limit:
        claims[-1] = replace(claims[-1], more=True)
    return claims
