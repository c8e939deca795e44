"""The best candidates of a recall by the R3 score (SPEC R3): every candidate's score
computed at once over the columns the index read (:class:`~kronika.ports.ScoreFeatures`),
only those that can still reach the top scored in full, and one place for a text said
again and again."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

import numpy as np

from kronika.core.model import MemoryItem
from kronika.core.scoring import ScoreWeights, recencies
from kronika.core.text import said_alike
from kronika.ports import ScoreFeatures, Usage, usage_columns


@dataclass(frozen=True, slots=True)
class Scored:
    """One candidate's R3 score and its parts."""

    item_id: str
    relevance: float
    importance: float
    recency: float
    total: float


def best(
    features: ScoreFeatures,
    relevance: Mapping[str, float],
    moment: datetime,
    weights: ScoreWeights,
    k: int,
    usage: Callable[[Sequence[str]], Usage] | None = None,
) -> list[Scored]:
    """The ``k`` best candidates by R3 score (then relevance, then id), best first.

    Every candidate's score is computed at once over arrays (:func:`recencies` is
    :func:`recency` bit for bit, and the product is :func:`combined_score`'s, operation
    by operation); only the winners become objects.

    Only the candidates that can still reach the top are scored in full (and, when
    ``features`` left the usage columns unread, ``usage`` reads theirs alone). Recency
    lies in (0, 1], so with γ ≥ 0 and relevance ≥ 0 a candidate's score is at least
    ``relevance · (α + β·importance) / (α + β + γ)`` and at most that with γ added to
    the bracket (rounding keeps both bounds, every step being monotone); one whose
    most is below the k-th best least is out whatever its usage (module tests compare
    with reading every usage).
    """
    if any(item_id not in relevance for item_id in features.ids):
        features = only(features, relevance)
    n = len(features)
    if n == 0:
        return []
    ids = features.ids
    rel = np.fromiter((relevance[i] for i in ids), dtype=np.float64, count=n)
    importance, created = features.importance, features.created_at
    accessed, count = features.last_accessed_at, features.access_count
    weight = weights.alpha + weights.beta + weights.gamma
    spread = weight > 0  # all weights 0: the score is the relevance
    base = weights.alpha + weights.beta * importance
    bounded = np.isfinite(base).all() and (rel >= 0).all() and np.isfinite(rel).all()
    if n > k and weights.gamma >= 0 and bounded:
        least = rel * (base / weight) if spread else rel
        most = rel * ((base + weights.gamma) / weight) if spread else rel
        kth_least = np.partition(-least, k - 1)[k - 1]  # minus the k-th best least score
        keep = np.flatnonzero(-most <= kth_least)
        ids = tuple(ids[c] for c in keep.tolist())
        rel, base, importance, created = rel[keep], base[keep], importance[keep], created[keep]
        accessed, count = accessed[keep], count[keep]
        n = len(ids)
    if not features.usage_read:
        if usage is None:
            raise ValueError("score features without usage need a usage reader")
        accessed, count = usage_columns(ids, usage(ids))
    rec = recencies(moment, created, accessed, count, weights.half_life)
    total = rel * ((base + weights.gamma * rec) / weight) if spread else rel * 1.0
    if n > k:  # every candidate scoring at least the k-th best, ties included
        kth = np.partition(-total, k - 1)[k - 1]
        chosen = np.flatnonzero(-total <= kth).tolist()
    else:
        chosen = list(range(n))
    totals, rels = total.tolist(), rel.tolist()
    chosen.sort(key=lambda c: (-totals[c], -rels[c], ids[c]))
    return [
        Scored(ids[c], rels[c], float(importance[c]), float(rec[c]), totals[c]) for c in chosen[:k]
    ]


def only(features: ScoreFeatures, wanted: Mapping[str, float]) -> ScoreFeatures:
    """The columns of the ids of ``wanted`` alone (the candidates the floor kept)."""
    keep = [n for n, item_id in enumerate(features.ids) if item_id in wanted]
    return replace(
        features,
        ids=tuple(features.ids[n] for n in keep),
        importance=features.importance[keep],
        created_at=features.created_at[keep],
        last_accessed_at=features.last_accessed_at[keep],
        access_count=features.access_count[keep],
        speaker=tuple(features.speaker[n] for n in keep),
        session_id=tuple(features.session_id[n] for n in keep),
    )


def once_each(winners: list[Scored], items: Mapping[str, MemoryItem]) -> list[Scored]:
    """``winners`` without the later copies of a text an earlier one says word for word
    (case and spacing aside)."""
    seen: set[str] = set()
    kept = []
    for w in winners:
        item = items.get(w.item_id)
        if item is None:
            continue
        text = said_alike(item.content)
        if text not in seen:
            seen.add(text)
            kept.append(w)
    return kept
