"""How strongly a memory holds on: importance that decays while the item is not used.

    strength = importance × 2^(−idle_days / half_life) × (1 + log2(1 + uses))

``idle_days`` counts from the last use (recall) of the item, else from its last change;
``uses`` is its access count. An item nobody recalls loses half its strength every
``half_life`` days; each doubling of its uses adds its importance once more. The
decay job archives Brain facts whose strength fell below ``archive_below`` (they stay
recallable from the archive; nothing is deleted), and the Brain's overflow moves the
weakest facts first, so importance counts as well as use.

Defaults, chosen on principle rather than fitted: a half-life of 90 days (a season: a
fact unused for a quarter is half as present) and a threshold of 0.1, which a fact of
default importance 0.5, never recalled, reaches after about 7 months
(0.5 × 2^(−210/90) ≈ 0.1); an important fact (0.9) after about 9.5 months.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime

from kronika.core.model import MemoryItem


def strength(item: MemoryItem, now: datetime, half_life_days: float) -> float:
    """The item's strength at ``now`` (see the module docstring)."""
    since = item.last_accessed_at or item.updated_at
    idle_days = max(0.0, (now - since).total_seconds() / 86400)
    decay = 2.0 ** (-idle_days / half_life_days) if half_life_days > 0 else 1.0
    return item.importance * decay * (1.0 + math.log2(1 + max(0, item.access_count)))


def weakest_first(
    items: Sequence[MemoryItem], now: datetime, half_life_days: float
) -> list[MemoryItem]:
    """``items`` from the weakest to the strongest (ties: older first, then id)."""
    return sorted(
        items,
        key=lambda it: (
            strength(it, now, half_life_days),
            it.last_accessed_at or it.updated_at,
            it.id,
        ),
    )
