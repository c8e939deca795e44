"""The R3 score of every hit and the order of the hits, checked against core.scoring."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from kronika import Memory, SessionRecord, TurnRecord
from kronika.core.model import RecallHit
from kronika.core.scoring import ScoreWeights, combined_score, recency
from kronika.engine.best import best as _best
from kronika.ports import FeatureRow, ScoreFeatures
from kronika.testing import FrozenClock

WORDS = ["tea", "kettle", "harbour", "blue", "garden", "painting", "Łódź", "concert"]
QUERIES = ["tea in the garden", "blue kettle", "Łódź concert", "painting", "harbour tea blue"]


def _sessions(rng: random.Random) -> list[SessionRecord]:
    found = []
    for s in range(6):
        start = datetime(2023, 5, 1, tzinfo=UTC) + timedelta(days=s, microseconds=s * 7)
        turns = tuple(
            TurnRecord(
                turn_id=f"D{s}:{t}",
                speaker=["Caroline", "Melanie"][t % 2],
                # repeated sentences: equal relevance, broken by recency, then by id
                content=" ".join(rng.sample(WORDS, 2)) if t % 3 else "tea and a blue kettle",
            )
            for t in range(12)
        )
        found.append(SessionRecord(session_id=f"conv-s{s}", started_at=start, turns=turns))
    return found


def _check(hits: tuple[RecallHit, ...], now: datetime, weights: ScoreWeights) -> None:
    for hit in hits:
        item, score = hit.item, hit.score
        expected = recency(
            now, item.created_at, item.last_accessed_at, item.access_count, weights.half_life
        )
        assert score.recency == expected
        assert score.importance == item.importance
        assert score.total == combined_score(score.relevance, item.importance, expected, weights)
    keys = [(-h.score.total, -h.score.relevance, h.item.id) for h in hits]
    assert keys == sorted(keys)


def test_hits_are_scored_and_ordered_as_core_scoring_says(
    memory: Memory, clock: FrozenClock
) -> None:
    rng = random.Random(4)
    memory.import_sessions("conv", _sessions(rng))
    s = memory.settings
    weights = ScoreWeights.from_settings(
        s.alpha, s.beta, s.gamma, s.recency_half_life, s.decay_base
    )
    for step in range(12):
        clock.advance(hours=rng.randint(1, 600), microseconds=rng.randint(0, 10**6))
        query = rng.choice(QUERIES)
        everything = memory.recall(query, agent="conv", k=1000, record_access=False)
        # every candidate, each text once (the repeated sentences take one place)
        texts = [hit.item.content for hit in everything.hits]
        assert texts and len(texts) == len(set(texts)) and len(texts) < everything.candidates
        _check(everything.hits, clock.now(), weights)
        for k in (1, 3, 10):
            top = memory.recall(query, agent="conv", k=k, record_access=False)
            assert top.hits == everything.hits[:k]
        # accesses move recency and damp the decay of the recalled items
        memory.recall(query, agent="conv", k=rng.randint(1, 5), record_access=step % 3 != 2)
    accessed = [h for h in everything.hits if h.item.access_count]
    assert accessed and any(h.item.access_count > 1 for h in accessed)


def _reference(
    features: ScoreFeatures,
    relevance: dict[str, float],
    now: datetime,
    weights: ScoreWeights,
    k: int,
) -> list[tuple[str, float, float, float, float]]:
    """The scoring loop as written before it was vectorised: one item at a time."""

    def utc(epoch: float) -> datetime:
        return datetime.fromtimestamp(epoch, tz=UTC)

    ranked = []
    for item_id, (importance, created, accessed, count, _, _) in features.rows().items():
        rel = relevance[item_id]
        last = None if accessed is None else utc(accessed)
        rec = recency(now, utc(created), last, count, weights.half_life)
        total = combined_score(rel, importance, rec, weights)
        ranked.append((-total, -rel, item_id, (item_id, rel, importance, rec, total)))
    ranked.sort(key=lambda row: row[:3])
    return [row[3] for row in ranked[:k]]


def test_the_best_candidates_equal_the_item_by_item_computation() -> None:
    rng = random.Random(9)
    now = datetime(2025, 3, 1, 8, 0, 0, 250_001, tzinfo=UTC)
    # γ = 0: equal relevance and importance tie exactly, then the id decides
    tied = ScoreWeights(alpha=0.5, beta=0.5, gamma=0.0)
    nothing = ScoreWeights(alpha=0.0, beta=0.0, gamma=0.0)
    for weights in (ScoreWeights(), tied, nothing, ScoreWeights(half_life=600.0)):
        for _ in range(30):
            rows: dict[str, FeatureRow] = {}
            relevance: dict[str, float] = {}
            for n in rng.sample(range(1000), rng.randint(0, 60)):
                created = now.timestamp() - rng.choice([0, 1e-6, 0.5, 3600, 1e7]) * rng.random()
                accessed = rng.choice([None, created + rng.uniform(0, 9000)])
                importance = rng.choice([0.25, 0.5, 0.75])
                rows[f"i{n}"] = (importance, created, accessed, rng.choice([0, 1, 7]), None, None)
                relevance[f"i{n}"] = rng.choice([0.0, 0.25, 0.75, rng.random()])
            features = ScoreFeatures.from_rows(rows)
            for k in (1, 2, 5, 100):
                best = _best(features, relevance, now, weights, k)
                expected = _reference(features, relevance, now, weights, k)
                got = [(b.item_id, b.relevance, b.importance, b.recency, b.total) for b in best]
                assert got == expected


def _without_usage(features: ScoreFeatures) -> ScoreFeatures:
    return replace(
        features,
        last_accessed_at=np.full(len(features), np.nan),
        access_count=np.zeros(len(features), dtype=np.int64),
        usage_read=False,
    )


def _reader(
    stored: dict[str, tuple[float | None, int]], asked: list[str]
) -> Callable[[Sequence[str]], dict[str, tuple[float | None, int]]]:
    def usage(ids: Sequence[str]) -> dict[str, tuple[float | None, int]]:
        asked.extend(ids)
        return {i: stored[i] for i in ids if i in stored}

    return usage


def test_usage_read_for_the_candidates_that_can_reach_the_top_gives_the_same_best() -> None:
    """An index that keeps usage apart (SQLite) is asked for it only for the candidates
    whose best possible score reaches the k-th best least one: same winners, same
    scores to the bit, fewer lookups."""
    rng = random.Random(12)
    now = datetime(2025, 3, 1, 8, 0, 0, 250_001, tzinfo=UTC)
    asked_in_all = 0
    candidates_in_all = 0
    choices = (ScoreWeights(), ScoreWeights(gamma=0.0), ScoreWeights(gamma=5.0, half_life=3600.0))
    for weights in choices:
        for _ in range(40):
            rows: dict[str, FeatureRow] = {}
            relevance: dict[str, float] = {}
            for n in rng.sample(range(1000), rng.randint(0, 120)):
                created = now.timestamp() - rng.choice([0, 60, 3600, 1e6]) * rng.random()
                accessed = rng.choice([None, None, created + rng.uniform(0, 9000)])
                count = 0 if accessed is None else rng.choice([1, 2, 40])
                importance = rng.choice([0.25, 0.5, 0.75])
                rows[f"i{n}"] = (importance, created, accessed, count, None, None)
                relevance[f"i{n}"] = rng.choice([0.0, 0.25, rng.random(), rng.random() ** 4])
            features = ScoreFeatures.from_rows(rows)
            stored = {i: (r[2], r[3]) for i, r in rows.items() if r[3] or r[2] is not None}
            for k in (1, 3, 10, 200):
                asked: list[str] = []
                expected = _best(features, relevance, now, weights, k)
                usage = _reader(stored, asked)
                got = _best(_without_usage(features), relevance, now, weights, k, usage)
                assert got == expected
                assert len(asked) == len(set(asked)) <= len(features)
                asked_in_all += len(asked)
                candidates_in_all += len(features)
    assert asked_in_all < candidates_in_all


def test_without_recency_only_the_best_k_are_asked_for_usage() -> None:
    now = datetime(2025, 3, 1, tzinfo=UTC)
    rows: dict[str, FeatureRow] = {
        f"i{n}": (0.5, now.timestamp() - n, None, 0, None, None) for n in range(50)
    }
    relevance = {f"i{n}": 1.0 / (n + 1) for n in range(50)}
    asked: list[str] = []

    def usage(ids: Sequence[str]) -> dict[str, tuple[float | None, int]]:
        asked.extend(ids)
        return {}

    features = _without_usage(ScoreFeatures.from_rows(rows))
    best = _best(features, relevance, now, ScoreWeights(gamma=0.0), 5, usage)
    assert [b.item_id for b in best] == ["i0", "i1", "i2", "i3", "i4"]
    assert sorted(asked) == ["i0", "i1", "i2", "i3", "i4"]


def test_features_without_usage_and_no_reader_are_refused() -> None:
    features = ScoreFeatures.from_rows({"a": (0.5, 1.0, 2.0, 3, None, None)})
    with pytest.raises(ValueError, match="usage reader"):
        _best(_without_usage(features), {"a": 1.0}, datetime.now(UTC), ScoreWeights(), 1)
