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
from datetime import UTC, datetime, timedelta

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = 1_000_000
_EXACT = 2**53  # microsecond counts up to this divide exactly as Python ints do


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


def recencies(
    now: datetime,
    created_at: Floats,
    last_accessed_at: Floats,
    access_count: npt.NDArray[np.int64],
    decay_base: float,
) -> Floats:
    """:func:`recency` of many items at once, equal to it bit for bit.

    Times are Unix epoch seconds (``last_accessed_at`` NaN: never accessed), and
    each is taken to the microsecond as ``datetime.fromtimestamp(t, UTC)`` does
    (half to even), which is what the scalar function sees of a stored time.
    """
    reference = np.where(np.isnan(last_accessed_at), created_at, last_accessed_at)
    whole_s, part = np.trunc(reference), reference - np.trunc(reference)
    micros = np.rint(part * _US)  # datetime's rounding of the fraction (modf, half to even)
    whole_s = whole_s + (micros >= _US) - (micros < 0)
    micros = micros - _US * (micros >= _US) + _US * (micros < 0)
    now_us = (now - _EPOCH) // timedelta(microseconds=1)
    elapsed_us = now_us - (whole_s.astype(np.int64) * _US + micros.astype(np.int64))
    elapsed = np.maximum(0.0, elapsed_us / _US)
    far = np.flatnonzero(np.abs(elapsed_us) > _EXACT)
    for n in far.tolist():  # beyond 285 years: as Python divides big integers
        elapsed[n] = max(0.0, int(elapsed_us[n]) / _US)
    rates = [decay_base / (math.log1p(c) + 1.0) for c in np.maximum(access_count, 0).tolist()]
    exponents = (-np.asarray(rates, dtype=np.float64) * elapsed).tolist()
    tiny = math.ulp(0.0)
    return np.asarray([max(math.exp(x), tiny) for x in exponents], dtype=np.float64)
