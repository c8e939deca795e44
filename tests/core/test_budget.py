from hypothesis import given
from hypothesis import strategies as st

from kronika.core.budget import pack

costs = st.lists(st.integers(min_value=0, max_value=50), max_size=30)


def test_a_large_item_is_skipped_and_smaller_later_ones_still_fit():
    kept, dropped = pack(["aaaa", "bbbbbbbbbb", "cc", "d"], len, 7)
    assert kept == ["aaaa", "cc", "d"]
    assert dropped == 1


def test_no_budget_keeps_everything():
    assert pack([5, 6, 7], lambda x: x, None) == ([5, 6, 7], 0)


def test_zero_budget_keeps_only_free_items():
    assert pack([0, 3, 0], lambda x: x, 0) == ([0, 0], 1)


@given(costs, st.integers(min_value=0, max_value=200))
def test_kept_items_fit_and_keep_their_order(items, budget):
    indexed = list(enumerate(items))
    kept, dropped = pack(indexed, lambda pair: pair[1], budget)
    assert sum(c for _, c in kept) <= budget
    positions = [i for i, _ in kept]
    assert positions == sorted(positions)
    assert len(kept) + dropped == len(items)


@given(costs, st.integers(min_value=0, max_value=200))
def test_every_dropped_item_would_not_have_fit(items, budget):
    indexed = list(enumerate(items))
    kept, _ = pack(indexed, lambda pair: pair[1], budget)
    kept_ids = {i for i, _ in kept}
    spent = 0
    for i, c in indexed:
        if i in kept_ids:
            spent += c
        else:
            assert spent + c > budget
