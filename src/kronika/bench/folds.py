"""k-fold cross-validation of settings over several benchmarks at once (pure).

Every question of every benchmark belongs to a *unit* the folds split by (a LoCoMo
conversation, a LongMemEval question, a ``bench memory`` person), so no conversation
or person is ever on both sides of a fold. :func:`assign_folds` deals the units of
each benchmark into ``k`` folds, in an order fixed by a hash of their names (the same
folds on every run and every machine, whatever order the data lists them in).

:func:`cross_validate` takes, for every candidate setting, one row per question
(``{"unit": …, metric: value, …}``) and for each fold ``f``:

* scores every setting on the questions of the *other* folds (each benchmark's
  selection metric, the benchmarks' means averaged with equal weight: one setting for
  all of them), picks the best (ties: the setting listed first, the default), and
* scores that choice on fold ``f``'s questions alone.

Each question is thus scored once, under a setting chosen without it; the mean over
all questions is the *fold-out* figure. The same is done with each benchmark choosing
for itself. *Dev* figures are a setting's mean over every question, and the *dev
best* is the setting a choice on all the data would make: the gap between its dev
figure and the fold-out one is what choosing on the data itself flatters.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kronika.bench.metrics import mean

Rows = Sequence[Mapping[str, Any]]
"""One row per question: ``"unit"`` and the question's metrics (a metric a question
has no value for, such as multi-hop recall of a temporal question, is left out)."""


@dataclass(frozen=True, slots=True)
class Benchmark:
    """How one benchmark is judged: the metric settings are chosen by, and every
    metric reported (the selection metric first)."""

    name: str
    metrics: tuple[str, ...]

    @property
    def select(self) -> str:
        return self.metrics[0]


def assign_folds(units: Sequence[str], k: int) -> dict[str, int]:
    """``{unit: fold}`` with folds 0 … k−1 of sizes differing by at most one; the order
    of dealing is the SHA-256 of each unit's name, so it does not depend on the order
    of ``units``. Fewer units than ``k`` leave the last folds empty."""
    if k < 2:
        raise ValueError("cross-validation needs at least 2 folds")
    distinct = sorted(set(units), key=lambda u: (hashlib.sha256(u.encode()).hexdigest(), u))
    return {unit: n % k for n, unit in enumerate(distinct)}


def score(rows: Rows, metric: str) -> float:
    """The mean of ``metric`` over the rows that have it (0.0 when none has)."""
    return mean(float(r[metric]) for r in rows if metric in r)


def count(rows: Rows, metric: str) -> int:
    return sum(1 for r in rows if metric in r)


def cross_validate(
    runs: Mapping[str, Mapping[str, Rows]],
    benchmarks: Sequence[Benchmark],
    *,
    k: int,
    default: str | None = None,
) -> dict[str, Any]:
    """Choose among ``runs`` (setting name → benchmark name → rows; every setting must
    have asked the same questions) by ``k``-fold cross-validation; JSON-ready.

    Returns ``{"k", "folds": [{"fold", "units", "joint", "per_benchmark"}], "dev":
    {setting: {benchmark: {metric: value}}}, "dev_best": {"joint", "per_benchmark"},
    "fold_out": {"joint", "per_benchmark": {benchmark: {metric: value}}},
    "questions": {benchmark: {metric: count}}, "stability": {…}}``.
    """
    if not runs:
        raise ValueError("no settings to choose between")
    names = list(runs)
    default = default or names[0]
    marks = {b.name: _fold_marks(runs, b.name, k) for b in benchmarks}
    dev = {s: {b.name: _all(runs[s][b.name], b.metrics) for b in benchmarks} for s in names}
    folds: list[dict[str, Any]] = []
    joint_rows: dict[str, list[Mapping[str, Any]]] = {b.name: [] for b in benchmarks}
    own_rows: dict[str, list[Mapping[str, Any]]] = {b.name: [] for b in benchmarks}
    for f in range(k):
        train = {
            s: {b.name: _in(runs[s][b.name], marks[b.name], f, False) for b in benchmarks}
            for s in names
        }
        per = {
            b.name: _best({s: score(train[s][b.name], b.select) for s in names}) for b in benchmarks
        }
        joint = _best(
            {s: mean(score(train[s][b.name], b.select) for b in benchmarks) for s in names}
        )
        for b in benchmarks:
            joint_rows[b.name] += _in(runs[joint][b.name], marks[b.name], f, True)
            own_rows[b.name] += _in(runs[per[b.name]][b.name], marks[b.name], f, True)
        folds.append(
            {
                "fold": f,
                "units": {
                    b.name: sorted(u for u, g in marks[b.name].items() if g == f)
                    for b in benchmarks
                },
                "joint": joint,
                "per_benchmark": per,
            }
        )
    return {
        "k": k,
        "default": default,
        "settings": names,
        "folds": folds,
        "dev": dev,
        "dev_best": {
            "joint": _best({s: mean(dev[s][b.name][b.select] for b in benchmarks) for s in names}),
            "per_benchmark": {
                b.name: _best({s: dev[s][b.name][b.select] for s in names}) for b in benchmarks
            },
        },
        "fold_out": {
            "joint": {b.name: _all(joint_rows[b.name], b.metrics) for b in benchmarks},
            "per_benchmark": {b.name: _all(own_rows[b.name], b.metrics) for b in benchmarks},
        },
        "questions": {
            b.name: {m: count(runs[default][b.name], m) for m in b.metrics} for b in benchmarks
        },
        "stability": {
            "joint": dict(Counter(fold["joint"] for fold in folds)),
            **{
                b.name: dict(Counter(fold["per_benchmark"][b.name] for fold in folds))
                for b in benchmarks
            },
        },
    }


def _fold_marks(runs: Mapping[str, Mapping[str, Rows]], bench: str, k: int) -> dict[str, int]:
    """The folds of ``bench``'s units, checked to be the same questions in every run."""
    asked = [[r["unit"] for r in run[bench]] for run in runs.values()]
    if any(a != asked[0] for a in asked):
        raise ValueError(f"the settings must ask the same {bench} questions")
    return assign_folds(asked[0], k)


def _in(rows: Rows, marks: Mapping[str, int], fold: int, inside: bool) -> list[Mapping[str, Any]]:
    return [r for r in rows if (marks[r["unit"]] == fold) == inside]


def _all(rows: Rows, metrics: Sequence[str]) -> dict[str, float]:
    return {m: score(rows, m) for m in metrics}


def _best(values: Mapping[str, float]) -> str:
    """The name with the highest value; the first of equals (in ``values``' order)."""
    names = list(values)
    best = names[0]
    for name in names[1:]:
        if values[name] > values[best] + 1e-12:
            best = name
    return best


def setting_of(name: str) -> str:
    """The setting a grid entry moves: its name up to ``=`` (``"answer_focus=0"`` →
    ``"answer_focus"``, ``"adaptive shift=0.1"`` → ``"adaptive shift"``)."""
    return name.split("=", 1)[0].strip()


def per_setting(
    runs: Mapping[str, Mapping[str, Rows]],
    benchmarks: Sequence[Benchmark],
    *,
    k: int,
    default: str,
    slack: float = 0.01,
) -> dict[str, dict[str, Any]]:
    """Each setting of the grid cross-validated alone: the default and that setting's
    values (grid entries grouped by :func:`setting_of`), jointly, JSON-ready.

    For each setting: ``"values"``, each fold's joint ``"choices"``, its ``"fold_out"``
    and the default's figures (``"default"``, every metric of every benchmark), whether
    every fold chose the same (``"stable"``), and ``"wins"``: every fold chose the same
    value other than the default, its fold-out mean of the selection metrics is above
    the default's, and no benchmark's selection metric loses more than ``slack`` (a
    point). Only then is a default worth changing.
    """
    groups: dict[str, list[str]] = {}
    for name in runs:
        if name != default:
            groups.setdefault(setting_of(name), []).append(name)
    base = {b.name: _all(runs[default][b.name], b.metrics) for b in benchmarks}
    found: dict[str, dict[str, Any]] = {}
    for setting, values in groups.items():
        cv = cross_validate({n: runs[n] for n in (default, *values)}, benchmarks, k=k)
        choices = [fold["joint"] for fold in cv["folds"]]
        out = cv["fold_out"]["joint"]
        stable = len(set(choices)) == 1
        gain = mean(out[b.name][b.select] for b in benchmarks) - mean(
            base[b.name][b.select] for b in benchmarks
        )
        kept = all(out[b.name][b.select] - base[b.name][b.select] >= -slack for b in benchmarks)
        found[setting] = {
            "values": values,
            "choices": choices,
            "fold_out": out,
            "default": base,
            "stable": stable,
            "wins": stable and choices[0] != default and gain > 1e-12 and kept,
        }
    return found
