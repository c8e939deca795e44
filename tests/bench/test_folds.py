"""k-fold cross-validation of settings: the folds, and what each fold may see."""

from __future__ import annotations

from typing import Any

import pytest

from kronika.bench.folds import Benchmark, assign_folds, cross_validate, per_setting, setting_of

BENCH = Benchmark("b", ("score", "other"))


def _rows(values: dict[str, float]) -> list[dict[str, Any]]:
    """Two questions per unit, both scoring ``values[unit]``."""
    return [{"unit": u, "score": v, "other": 1.0 - v} for u, v in values.items() for _ in (0, 1)]


def test_folds_are_deterministic_balanced_and_independent_of_order() -> None:
    units = [f"conv-{n}" for n in range(23)]
    folds = assign_folds(units, 5)
    assert folds == assign_folds(list(reversed(units)), 5)  # the data's order does not matter
    assert folds == assign_folds(units + units[:4], 5)  # nor a unit listed twice
    assert set(folds) == set(units)  # every unit in exactly one fold
    sizes = sorted(list(folds.values()).count(f) for f in range(5))
    assert sizes == [4, 4, 5, 5, 5]
    assert assign_folds(units, 5) != assign_folds(units, 4)


def test_fewer_than_two_folds_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 2 folds"):
        assign_folds(["a", "b"], 1)


def test_a_fold_never_chooses_with_its_own_questions() -> None:
    units = [f"u{n}" for n in range(6)]
    folds = assign_folds(units, 3)
    # "cheat" is perfect on fold 0's units and bad elsewhere; "steady" is fair everywhere.
    cheat = {u: 1.0 if folds[u] == 0 else 0.0 for u in units}
    steady = dict.fromkeys(units, 0.5)
    runs = {"steady": {"b": _rows(steady)}, "cheat": {"b": _rows(cheat)}}
    cv = cross_validate(runs, [BENCH], k=3)
    by_fold = {f["fold"]: f for f in cv["folds"]}
    # holding fold 0 out, its questions are invisible: the cheat looks worst and loses
    assert by_fold[0]["joint"] == "steady"
    # the other folds see fold 0 in training, where the cheat shines (2 of 4 units at 1.0)...
    assert by_fold[1]["joint"] == "steady"  # 0.5 == 0.5: a tie goes to the first (default)
    # ...and each fold's held-out units are its own, disjoint, and cover every unit
    held = [u for f in cv["folds"] for u in f["units"]["b"]]
    assert sorted(held) == sorted(units)
    # so the fold-out figure is the steady one, while the dev best flatters
    assert cv["fold_out"]["joint"]["b"]["score"] == pytest.approx(0.5)
    assert cv["dev"]["cheat"]["b"]["score"] == pytest.approx(1 / 3)
    assert cv["questions"]["b"] == {"score": 12, "other": 12}


def test_the_held_out_figure_is_each_question_under_its_folds_choice() -> None:
    units = [f"u{n}" for n in range(8)]
    folds = assign_folds(units, 4)
    good = {u: 0.9 if folds[u] != 3 else 0.1 for u in units}  # poor on fold 3 alone
    fair = dict.fromkeys(units, 0.4)
    runs = {"fair": {"b": _rows(fair)}, "good": {"b": _rows(good)}}
    cv = cross_validate(runs, [BENCH], k=4)
    assert [f["joint"] for f in cv["folds"]] == ["good"] * 4
    # every fold picked "good": the fold-out figure is good's over all questions
    assert cv["fold_out"]["joint"]["b"]["score"] == pytest.approx((0.9 * 6 + 0.1 * 2) / 8)
    assert cv["stability"]["joint"] == {"good": 4}
    assert cv["dev_best"]["joint"] == "good"


def test_joint_choice_weighs_each_benchmark_equally() -> None:
    other = Benchmark("c", ("score",))
    units = [f"u{n}" for n in range(4)]
    big = {f"x{n}": 1.0 for n in range(40)}
    runs = {
        # "a" wins the 40-unit benchmark by a little, loses the small one by a lot
        "a": {"b": _rows(dict.fromkeys(units, 0.2)), "c": _rows(dict.fromkeys(big, 0.6))},
        "z": {"b": _rows(dict.fromkeys(units, 0.9)), "c": _rows(dict.fromkeys(big, 0.5))},
    }
    cv = cross_validate(runs, [BENCH, other], k=2)
    assert {f["joint"] for f in cv["folds"]} == {"z"}
    assert {f["per_benchmark"]["c"] for f in cv["folds"]} == {"a"}
    assert cv["fold_out"]["per_benchmark"]["c"]["score"] == pytest.approx(0.6)


def test_settings_must_ask_the_same_questions() -> None:
    runs = {"x": {"b": _rows({"u1": 1.0})}, "y": {"b": _rows({"u2": 1.0})}}
    with pytest.raises(ValueError, match="same b questions"):
        cross_validate(runs, [BENCH], k=2)


def test_each_setting_is_cross_validated_alone_and_wins_only_when_stable_and_fair() -> None:
    other = Benchmark("c", ("score",))
    units = [f"u{n}" for n in range(10)]
    folds = assign_folds(units, 5)

    def run(b: float, c: float) -> dict[str, list[dict[str, Any]]]:
        return {"b": _rows(dict.fromkeys(units, b)), "c": _rows(dict.fromkeys(units, c))}

    lucky = {u: 1.0 if folds[u] == 0 else 0.4 for u in units}  # good on one fold only
    runs = {
        "default": run(0.5, 0.5),
        "focus=1": run(0.6, 0.5),  # better on b, as good on c: wins
        "focus=2": run(0.55, 0.5),
        "hubs=10": run(0.8, 0.45),  # +30 points on b, but c loses 5: no default
        "floor=0": {"b": _rows(lucky), "c": _rows(dict.fromkeys(units, 0.5))},
    }
    found = per_setting(runs, [BENCH, other], k=5, default="default")
    assert list(found) == ["focus", "hubs", "floor"]
    assert found["focus"]["values"] == ["focus=1", "focus=2"]
    assert found["focus"]["choices"] == ["focus=1"] * 5 and found["focus"]["wins"]
    assert found["focus"]["fold_out"]["b"]["score"] == pytest.approx(0.6)
    assert found["focus"]["default"]["b"]["score"] == pytest.approx(0.5)
    assert found["hubs"]["stable"] and not found["hubs"]["wins"]
    # holding fold 0 out, lucky looks poor (0.4) and the default is kept; every other
    # fold sees fold 0 and chooses lucky (0.55): not stable, so no change of default
    assert not found["floor"]["stable"] and not found["floor"]["wins"]
    assert found["floor"]["choices"] == ["default"] + ["floor=0"] * 4
    assert setting_of("adaptive shift=0.1") == "adaptive shift"
    assert setting_of("hub_neighbours=10, scope all") == "hub_neighbours"
