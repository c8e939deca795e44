"""Hub reduction of the vector list (CSLS over the query's own candidates)."""

from __future__ import annotations

from typing import Any

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


def _long_session_and_a_hub() -> tuple[list[tuple[str, float]], dict[str, Any], dict[str, str]]:
    """A session of twelve turns on one topic (close to each other), the answer among
    them; a greeting close to every turn of every other session; scattered candidates."""
    rng = np.random.default_rng(5)
    topic, small_talk = rng.normal(size=32), rng.normal(size=32)
    turns = {f"s1-t{n}": topic + 0.35 * rng.normal(size=32) for n in range(12)}
    chats = {f"s{n}-hi": small_talk + 0.35 * rng.normal(size=32) for n in range(2, 8)}
    scattered = {f"note{n}": rng.normal(size=32) for n in range(6)}
    vectors: dict[str, Any] = {**turns, **chats, **scattered, "hello": small_talk}
    results = [("s1-t0", 0.40), ("hello", 0.36)]
    results += [(i, 0.2) for i in [*turns][1:]] + [(i, 0.1) for i in [*chats, *scattered]]
    families = {i: "session-1" for i in turns} | {i: f"session-{i[1]}" for i in chats}
    return results, vectors, families


def test_a_turn_of_a_long_session_is_not_taken_for_a_hub_by_its_own_sessions_turns() -> None:
    results, vectors, families = _long_session_and_a_hub()
    # read against every candidate, the answer's own session makes it a "hub": it falls
    # behind the greeting, which is close to every turn of small talk
    everyone = dict(without_hubs(results, vectors))
    assert everyone["hello"] > everyone["s1-t0"]
    # read against other sessions' candidates only, it keeps its lead; the greeting, close
    # to small talk of six other sessions, is still lowered
    others = dict(without_hubs(results, vectors, families=families))
    assert others["s1-t0"] > others["hello"]
    assert others["hello"] == pytest.approx(everyone["hello"])
    assert others["s1-t0"] > everyone["s1-t0"] + 0.1


def test_a_candidate_with_no_other_family_around_counts_as_usual() -> None:
    vectors = {"a": np.array([1.0, 0.0]), "b": np.array([0.9, 0.1]), "c": np.array([0.0, 1.0])}
    results = [("a", 0.5), ("b", 0.5), ("c", 0.5)]
    # a and b are one family: each is read against c alone; c against both
    out = dict(without_hubs(results, vectors, families={"a": "f", "b": "f"}))
    cos_bc = 0.1 / float(np.linalg.norm([0.9, 0.1]))
    assert out["a"] == pytest.approx(0.5 - 0.5 * 0.0)
    assert out["b"] == pytest.approx(0.5 - 0.5 * cos_bc)
    # everyone of one family: nobody to read against, nothing changes
    same = without_hubs(results, vectors, families=dict.fromkeys("abc", "f"))
    assert same == results
