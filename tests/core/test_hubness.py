"""Hub reduction of the vector list (CSLS over the query's own candidates)."""

from __future__ import annotations

import numpy as np
import pytest

from kronika.core.hubness import without_hubs


def test_a_candidate_close_to_every_other_loses_its_lead() -> None:
    # "hi" is close to all the small talk around it; the fact stands apart. The query
    # gives "hi" a slightly higher cosine: corrected, the fact comes first.
    rng = np.random.default_rng(3)
    centre = rng.normal(size=16)
    small_talk = {f"chat{n}": centre + 0.3 * rng.normal(size=16) for n in range(12)}
    vectors = {"hi": centre, "city: Bristol": rng.normal(size=16), **small_talk}
    results = [("hi", 0.30), ("city: Bristol", 0.26)] + [(c, 0.1) for c in small_talk]
    corrected = dict(without_hubs(results, vectors, neighbours=10))
    assert corrected["city: Bristol"] > corrected["hi"]
    # the order given is kept, only the scores move; each is lowered by half a mean cosine
    assert [i for i, _ in without_hubs(results, vectors)] == [i for i, _ in results]
    for item_id, cosine in results:
        assert cosine - 0.5 <= corrected[item_id] <= cosine + 0.5


def test_nothing_changes_when_turned_off_or_with_too_few_vectors() -> None:
    results = [("a", 0.5), ("b", 0.4)]
    vectors = {"a": np.ones(4), "b": -np.ones(4)}
    assert without_hubs(results, vectors, neighbours=0) == results
    assert without_hubs(results, {"a": np.ones(4)}) == results
    assert without_hubs([], vectors) == []


def test_a_candidate_without_a_vector_is_lowered_by_the_usual_closeness() -> None:
    vectors = {"a": np.array([1.0, 0.0]), "b": np.array([0.0, 1.0]), "c": np.array([1.0, 1.0])}
    out = dict(without_hubs([("a", 0.5), ("b", 0.5), ("c", 0.5), ("x", 0.5)], vectors))
    closeness = [0.5 - out[i] for i in "abc"]
    assert 0.5 - out["x"] == pytest.approx(float(np.mean(closeness)))
    assert out["c"] < out["a"]  # c is between a and b: closer to the others
