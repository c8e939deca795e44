"""Turning lexical and vector results into one relevance in [0, 1].

Relevance must say how *well* an item matches, not only where it ranks: the R3
score adds importance and recency to it, and a merely recent fact must not beat
a clearly matching memory. So each retriever's scores are normalised per query
and combined convexly (Bruch et al., 2023, "An Analysis of Fusion Functions for
Hybrid Retrieval")::

    lexical_i = bm25_i / max(bm25)                       (0 when not matched)
    vector_i  = (cos_i − min(cos)) / (max(cos) − min(cos))
    relevance = w · lexical_i + (1 − w) · vector_i        w = lexical_weight (default 0.7)

Min-max scaling makes the vector part embedder-agnostic: what a model calls
"unrelated" differs (~0.1 for one model, ~0.75 for another). Lexical evidence (shared
rare words) is precise where the embedding is fuzzy, hence the default weight; on
LoCoMo (dev) it measured best among 0.5/0.6/0.7 and RRF (k = 10, 30, 60) — see
``docs/benchmarks.md``. With one retriever only, its normalised score is the relevance.
"""

from __future__ import annotations

from collections.abc import Sequence


def normalise_lexical(results: Sequence[tuple[str, float]]) -> dict[str, float]:
    """``score / max score`` for positive scores; ``{}`` for no results."""
    if not results:
        return {}
    best = max(score for _, score in results)
    if best <= 0:
        return {item_id: 1.0 for item_id, _ in results}
    return {item_id: max(0.0, score) / best for item_id, score in results}


def normalise_vector(results: Sequence[tuple[str, float]]) -> dict[str, float]:
    """Cosines rescaled so the weakest candidate maps to 0 and the best to 1."""
    if not results:
        return {}
    floor = min(score for _, score in results)
    spread = max(score for _, score in results) - floor
    if spread <= 1e-12:
        return {item_id: 1.0 for item_id, _ in results}
    return {item_id: min(1.0, max(0.0, (score - floor) / spread)) for item_id, score in results}


def fuse(
    lexical: Sequence[tuple[str, float]] | None,
    vector: Sequence[tuple[str, float]] | None,
    *,
    lexical_weight: float = 0.7,
) -> dict[str, float]:
    """Relevance in [0, 1] for every candidate of either retriever (``None`` = not run)."""
    if lexical is None and vector is None:
        return {}
    lex = normalise_lexical(lexical or [])
    vec = normalise_vector(vector or [])
    if lexical is None:
        return vec
    if vector is None:
        return lex
    w = min(1.0, max(0.0, lexical_weight))
    return {
        item_id: w * lex.get(item_id, 0.0) + (1.0 - w) * vec.get(item_id, 0.0)
        for item_id in dict.fromkeys([*lex, *vec])
    }
