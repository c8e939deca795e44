"""The recall score (SPEC R3) and reciprocal rank fusion of retriever rankings.

score = α·relevance + β·importance + γ·recency

recency = exp(−decay · Δt),  decay = decay_base / (ln(1 + access_count) + 1)

Δt is the number of seconds since the item was last accessed (else since it was
created), clamped at 0 so an item dated in the future counts as brand new.
Frequent use lowers the decay rate: an item recalled often fades more slowly.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
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


def rrf_fuse(
    rankings: Sequence[Sequence[str]],
    *,
    k: int = 60,
    weights: Sequence[float] | None = None,
) -> dict[str, float]:
    """Reciprocal rank fusion, normalised to (0, 1].

    fused(id) = Σ_i w_i / (k + rank_i(id)) / Σ_i w_i / (k + 1)

    ``rank_i`` is the 1-based position of ``id`` in ranking ``i`` (a ranking that
    does not contain ``id`` contributes nothing; a repeated id counts at its first
    position). The denominator is the best possible sum, so an id ranked first in
    every ranking scores exactly 1.0. Weights default to 1 and must be ≥ 0 with a
    positive sum; the order of the rankings does not matter.
    """
    if k < 0:
        raise ValueError("rrf k must not be negative")
    w = [1.0] * len(rankings) if weights is None else [float(x) for x in weights]
    if len(w) != len(rankings):
        raise ValueError("rrf_fuse needs one weight per ranking")
    if any(x < 0 for x in w):
        raise ValueError("rrf weights must not be negative")
    best = sum(x / (k + 1) for x in w)
    if best <= 0:
        return {}
    fused: dict[str, float] = {}
    for ranking, weight in zip(rankings, w, strict=True):
        if weight == 0:
            continue
        seen: set[str] = set()
        for position, item_id in enumerate(ranking, start=1):
            if item_id in seen:
                continue
            seen.add(item_id)
            fused[item_id] = fused.get(item_id, 0.0) + weight / (k + position)
    # min() guards the 1.0 ceiling against float rounding in the sums
    return {item_id: min(1.0, total / best) for item_id, total in fused.items()}
