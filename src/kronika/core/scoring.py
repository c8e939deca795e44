"""The recall score (SPEC R3).

score = α·relevance + β·importance + γ·recency

recency = exp(−decay · Δt),  decay = decay_base / (ln(1 + access_count) + 1)

Δt is the number of seconds since the item was last accessed (else since it was
created), clamped at 0 so an item dated in the future counts as brand new.
Frequent use lowers the decay rate: an item recalled often fades more slowly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class ScoreWeights:
    """α, β, γ of the combined score and the recency decay base (per second)."""

    alpha: float = 0.5
    beta: float = 0.3
    gamma: float = 0.2
    decay_base: float = 0.001


def recency(
    now: datetime,
    created_at: datetime,
    last_accessed_at: datetime | None,
    access_count: int,
    decay_base: float,
) -> float:
    """exp(−decay·Δt) with decay = decay_base / (ln(1 + access_count) + 1).

    Δt = max(0, now − (last_accessed_at or created_at)) in seconds. The result is in
    (0, 1] (it underflows to the smallest positive float rather than 0, so an old
    item still ranks by its other parts); it never increases with Δt and never
    decreases with ``access_count``. A negative ``access_count`` is treated as 0.
    """
    reference = last_accessed_at if last_accessed_at is not None else created_at
    elapsed = max(0.0, (now - reference).total_seconds())
    decay = decay_base / (math.log1p(max(0, access_count)) + 1.0)
    return max(math.exp(-decay * elapsed), math.ulp(0.0))


def combined_score(relevance: float, importance: float, recency: float, w: ScoreWeights) -> float:
    """α·relevance + β·importance + γ·recency (monotone in each part for weights ≥ 0)."""
    return w.alpha * relevance + w.beta * importance + w.gamma * recency
