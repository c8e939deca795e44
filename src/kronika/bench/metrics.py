"""Retrieval metrics of the LoCoMo and LongMemEval protocols, as pure functions.

Notation: ``gold`` is the set of relevant ids, ``ranked`` the retrieved ids best
first (duplicates already removed), ``k`` the cut-off.

* LoCoMo evidence recall@k = |gold ∩ ⋃ cited(unit_i), i ≤ k| / |gold|, where a
  retrieved unit (a turn, a fact, a summary) counts every turn it cites.
* recall_all@k = 1 if gold ⊆ top-k else 0 (the LongMemEval paper's "Recall").
* recall_any@k = 1 if gold ∩ top-k ≠ ∅ else 0.
* ndcg_any@k = DCG(top-k) / DCG(ideal top-k) with binary relevance, using the
  discount of LongMemEval's own evaluation code: ``DCG = rel_1 + Σ_{r=2..k} rel_r /
  log2(r)`` (ranks 1 and 2 both weigh 1). The ideal ranking puts the
  ``min(|gold|, k)`` gold ids first. 0 when there is no gold.

All of them lie in [0, 1] and equal 1 for a ranking that starts with all of gold
(when ``|gold| ≤ k``).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Sequence

LOCOMO_KS = (5, 10, 25, 50)
LONGMEMEVAL_KS = (1, 3, 5, 10, 30, 50)


def dedupe(ids: Iterable[str]) -> list[str]:
    """``ids`` in order of first appearance, each once."""
    return list(dict.fromkeys(ids))


def evidence_recall(gold: Collection[str], cited: Sequence[Iterable[str]], k: int) -> float:
    """LoCoMo recall@k: share of ``gold`` cited by the first ``k`` retrieved units."""
    if not gold:
        return 0.0
    found = {turn for unit in cited[:k] for turn in unit}
    return len(set(gold) & found) / len(set(gold))


def recall_all(gold: Collection[str], ranked: Sequence[str], k: int) -> float:
    """1.0 when every gold id is in the top ``k``, else 0.0 (0.0 without gold)."""
    if not gold:
        return 0.0
    return float(set(gold) <= set(ranked[:k]))


def recall_any(gold: Collection[str], ranked: Sequence[str], k: int) -> float:
    """1.0 when at least one gold id is in the top ``k``, else 0.0."""
    return float(bool(set(gold) & set(ranked[:k])))


def _dcg(relevances: Sequence[int]) -> float:
    return sum(
        rel / (1.0 if rank == 1 else math.log2(rank)) for rank, rel in enumerate(relevances, 1)
    )


def ndcg_any(gold: Collection[str], ranked: Sequence[str], k: int) -> float:
    """Binary-relevance nDCG@k with LongMemEval's discount (see the module docstring)."""
    wanted = set(gold)
    if not wanted or k <= 0:
        return 0.0
    ideal = _dcg([1] * min(len(wanted), k))
    return _dcg([1 if doc in wanted else 0 for doc in ranked[:k]]) / ideal


def sessions_from_turns(session_of_turns: Iterable[str | None]) -> list[str]:
    """Session ranking from ranked turns: sessions by their first appearance."""
    return dedupe(s for s in session_of_turns if s is not None)


def mean(values: Iterable[float]) -> float:
    """Arithmetic mean; 0.0 for no values (an empty row reports 0 with count 0)."""
    items = list(values)
    return sum(items) / len(items) if items else 0.0


def percentile(values: Iterable[float], q: float) -> float:
    """The ``q``-th percentile (0-100) with linear interpolation between order statistics."""
    items = sorted(values)
    if not items:
        return 0.0
    pos = (len(items) - 1) * q / 100.0
    low = math.floor(pos)
    high = min(low + 1, len(items) - 1)
    return items[low] + (items[high] - items[low]) * (pos - low)


def budget_prefix(tokens: Sequence[int], budget: int) -> int:
    """How many leading results fit in ``budget`` tokens (stops at the first that does not)."""
    used = 0
    for count, cost in enumerate(tokens):
        used += cost
        if used > budget:
            return count
    return len(tokens)


def first_rank(gold: str | None, ranked: Sequence[str]) -> int | None:
    """The 1-based position of ``gold`` in ``ranked`` (``None``: absent, or no gold)."""
    if gold is None:
        return None
    for position, doc in enumerate(ranked, 1):
        if doc == gold:
            return position
    return None


def answer_scores(rank: int | None, returned: int) -> dict[str, float]:
    """One answerable question: ``hit@1``, ``hit@3`` (1 when the gold is within the first
    1 / 3 results), ``mrr`` (1 / rank, 0 when absent) and ``empty`` (1 when recall
    returned nothing at all: a relevance floor that cut the answer away)."""
    return {
        "hit@1": float(rank is not None and rank <= 1),
        "hit@3": float(rank is not None and rank <= 3),
        "mrr": 1.0 / rank if rank else 0.0,
        "empty": float(returned == 0),
    }
