"""The recall score (SPEC R3): relevance decides, importance and recency break near-ties.

score   = relevance · (α + β·importance + γ·recency) / (α + β + γ)

Importance and recency lie in [0, 1], so the second factor lies in
[α / (α + β + γ), 1]: they can lower a score by at most that share, never raise it
above its relevance. An item whose relevance is below ``α / (α + β + γ)`` of
another's (0.8 with the defaults) can never outrank it, whatever its importance and
recency (:func:`overtaking_bound`); an item of relevance 0 scores 0.

recency = 2^(−Δt / h),   h = half_life · (1 + ln(1 + n)),
n       = min(ACCESS_CAP, access_count · 2^(−Δt / half_life))

Δt is the time since the item was last recalled by a caller (else since it was
created), clamped at 0 so an item dated in the future counts as brand new. Each
recall a caller made lengthens the half-life, by at most ``1 + ln(1 + ACCESS_CAP)``,
and the accesses themselves fade with the same half-life: a
memory recalled often last year counts as recalled rarely today.
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
DAY = 86_400.0
ACCESS_CAP = 10.0
"""The most accesses recency counts (after their fading): the half-life of a memory
recalled very often is at most ``1 + ln 11`` ≈ 3.4 times the setting's."""
RECENCY_HALF_LIFE_DAYS = 30.0


@dataclass(frozen=True, slots=True)
class ScoreWeights:
    """α, β, γ of the combined score and the recency half-life (in seconds)."""

    alpha: float = 0.8
    beta: float = 0.1
    gamma: float = 0.1
    half_life: float = RECENCY_HALF_LIFE_DAYS * DAY

    @classmethod
    def from_settings(
        cls, alpha: float, beta: float, gamma: float, half_life_days: float, decay_base: float
    ) -> ScoreWeights:
        """The weights of the settings; a ``decay_base`` above 0 (the older setting, per
        second) stands for the half-life ``ln 2 / decay_base`` seconds."""
        half_life = math.log(2.0) / decay_base if decay_base > 0 else half_life_days * DAY
        return cls(alpha=alpha, beta=beta, gamma=gamma, half_life=half_life)


def overtaking_bound(w: ScoreWeights) -> float:
    """The share ``α / (α + β + γ)``: an item outranks another only when its relevance
    is above this share of the other's (1.0 when importance and recency count for
    nothing, 0.0 when relevance has no weight of its own)."""
    total = w.alpha + w.beta + w.gamma
    return 1.0 if total <= 0 else w.alpha / total


def _rate(count: float, elapsed: float, half_life: float) -> float:
    """ln 2 / h of one item (see the module docstring); 0 for an unbounded half-life."""
    if not half_life > 0 or math.isinf(half_life):
        return 0.0 if math.isinf(half_life) else math.inf
    faded = min(ACCESS_CAP, max(0.0, count) * 2.0 ** (-elapsed / half_life))
    return math.log(2.0) / (half_life * (math.log1p(faded) + 1.0))


def recency(
    now: datetime,
    created_at: datetime,
    last_accessed_at: datetime | None,
    access_count: int,
    half_life: float,
) -> float:
    """2^(−Δt / h) as in the module docstring, ``half_life`` in seconds.

    Δt = max(0, now − (last_accessed_at or created_at)) in seconds. The result is in
    (0, 1] (it underflows to the smallest positive float rather than 0, so an old
    item still ranks by its other parts); it never increases with Δt and never
    decreases with ``access_count``. A negative ``access_count`` is treated as 0.
    """
    reference = last_accessed_at if last_accessed_at is not None else created_at
    elapsed = max(0.0, (now - reference).total_seconds())
    rate = _rate(float(max(0, access_count)), elapsed, half_life)
    return max(math.exp(-rate * elapsed) if elapsed else 1.0, math.ulp(0.0))


def modulation(importance: float, recency: float, w: ScoreWeights) -> float:
    """(α + β·importance + γ·recency) / (α + β + γ): in [overtaking_bound(w), 1]."""
    total = w.alpha + w.beta + w.gamma
    if total <= 0:
        return 1.0
    return (w.alpha + w.beta * importance + w.gamma * recency) / total


def combined_score(relevance: float, importance: float, recency: float, w: ScoreWeights) -> float:
    """relevance · :func:`modulation` (monotone in each part for weights and relevance ≥ 0)."""
    return relevance * modulation(importance, recency, w)


def recencies(
    now: datetime,
    created_at: Floats,
    last_accessed_at: Floats,
    access_count: npt.NDArray[np.int64],
    half_life: float,
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
    tiny = math.ulp(0.0)
    out = []
    for count, dt in zip(np.maximum(access_count, 0).tolist(), elapsed.tolist(), strict=True):
        rate = _rate(float(count), dt, half_life)
        out.append(max(math.exp(-rate * dt) if dt else 1.0, tiny))
    return np.asarray(out, dtype=np.float64)
