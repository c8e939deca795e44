from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from kronika.bench.metrics import (
    budget_prefix,
    evidence_recall,
    ndcg_any,
    percentile,
    recall_all,
    recall_any,
    sessions_from_turns,
)

ids = st.text(alphabet="abcdef", min_size=1, max_size=2)
gold_sets = st.frozensets(ids, min_size=1, max_size=6)
rankings = st.lists(ids, max_size=20, unique=True)
ks = st.integers(min_value=1, max_value=30)


@given(gold_sets, rankings, ks)
def test_every_metric_is_a_share(gold: frozenset[str], ranked: list[str], k: int) -> None:
    for value in (
        recall_all(gold, ranked, k),
        recall_any(gold, ranked, k),
        ndcg_any(gold, ranked, k),
        evidence_recall(gold, [(r,) for r in ranked], k),
    ):
        assert 0.0 <= value <= 1.0
    assert recall_all(gold, ranked, k) <= recall_any(gold, ranked, k)


@given(gold_sets, rankings, ks)
def test_gold_first_is_perfect(gold: frozenset[str], rest: list[str], k: int) -> None:
    ranked = sorted(gold) + [r for r in rest if r not in gold]
    assert ndcg_any(gold, ranked, k) == 1.0
    assert recall_any(gold, ranked, k) == 1.0
    if len(gold) <= k:
        assert recall_all(gold, ranked, k) == 1.0
        assert evidence_recall(gold, [(r,) for r in ranked], k) == 1.0


@given(gold_sets, rankings, st.integers(min_value=1, max_value=29))
def test_recall_grows_with_k(gold: frozenset[str], ranked: list[str], k: int) -> None:
    cited = [(r,) for r in ranked]
    assert evidence_recall(gold, cited, k) <= evidence_recall(gold, cited, k + 1)
    assert recall_all(gold, ranked, k) <= recall_all(gold, ranked, k + 1)


def test_hand_computed_figures() -> None:
    # Official LongMemEval discount: rank 1 and rank 2 weigh 1, rank 3 weighs 1/log2(3).
    assert math.isclose(ndcg_any({"b"}, ["a", "b"], 10), 1.0)
    assert math.isclose(ndcg_any({"c"}, ["a", "b", "c"], 10), 1 / math.log2(3))
    assert math.isclose(ndcg_any({"a", "c"}, ["a", "b", "c"], 10), (1 + 1 / math.log2(3)) / 2)
    assert ndcg_any({"c"}, ["a", "b", "c"], 2) == 0.0
    # A fact citing two turns counts both.
    assert evidence_recall({"D1:1", "D2:2", "D3:3"}, [("D1:1", "D2:2"), ("D3:3",)], 1) == 2 / 3
    assert evidence_recall(set(), [("x",)], 5) == 0.0


def test_sessions_from_turns_keeps_first_appearance() -> None:
    assert sessions_from_turns(["s2", "s1", "s2", None, "s3", "s1"]) == ["s2", "s1", "s3"]


def test_percentile_and_budget() -> None:
    assert percentile([4.0, 1.0, 3.0, 2.0], 50) == 2.5
    assert percentile([1.0, 2.0, 3.0], 100) == 3.0
    assert percentile([], 95) == 0.0
    assert budget_prefix([400, 500, 200], 1000) == 2
    assert budget_prefix([400, 500], 1000) == 2
    assert budget_prefix([1200], 1000) == 0
