"""Greedy, order-preserving packing of items into a token budget."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def pack(items: Sequence[T], cost: Callable[[T], int], budget: int | None) -> tuple[list[T], int]:
    """Keep items in order while they fit; returns ``(kept, dropped_count)``.

    Walks ``items`` once: an item is kept when ``spent + cost(item) <= budget`` and
    skipped otherwise, so a later, smaller item may still fit after a large one is
    skipped. Invariants: Σ cost(kept) <= budget, ``kept`` is a subsequence of
    ``items`` and ``len(kept) + dropped_count == len(items)``. ``budget=None``
    keeps everything; a negative budget is treated as 0. Costs are taken as ≥ 0.
    """
    if budget is None:
        return list(items), 0
    limit = max(0, budget)
    kept: list[T] = []
    spent = 0
    for item in items:
        c = max(0, cost(item))
        if spent + c <= limit:
            kept.append(item)
            spent += c
    return kept, len(items) - len(kept)
