"""Leave-one-person-out choice between settings, from runs of ``kronika bench memory``.

A tuning script runs :func:`kronika.bench.memory_suite.run_memory` once for each
candidate setting (over the same people) and hands the results here. For each person
in turn the candidate with the best mean ``metric`` over the *other* people's questions
is chosen, and that choice is scored on the held-out person's questions alone. The mean
of those held-out scores, weighted by questions, is what the way of choosing is worth on
people it never saw; the candidate chosen most often is the one to propose.

Each candidate costs one run (the people are written once per run), not one per fold.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from kronika.bench.metrics import mean

METRICS = ("hit@1", "hit@3", "mrr", "no_answer", "useful")
"""``useful`` scores every question at once, for settings that trade answers for
silence (the answer floor): an answerable question counts its reciprocal rank, a
``none`` question 1 when recall returned nothing, else 0."""


def _score(rows: Sequence[dict[str, Any]], metric: str) -> float:
    """The mean of ``metric`` over the rows that have it (``no_answer`` only ``none``
    questions have; the others every answerable one; ``useful`` every question)."""
    if metric == "useful":
        return mean(r["mrr"] if "mrr" in r else r["no_answer"] for r in rows)
    return mean(r[metric] for r in rows if metric in r)


def leave_one_person_out(
    runs: Mapping[str, dict[str, Any]], *, metric: str = "hit@1"
) -> dict[str, Any]:
    """Choose among ``runs`` (candidate name → results of ``run_memory``) by
    leave-one-person-out: ``{"folds": [{"held_out", "chosen", "train", "held_out_score"}],
    "held_out_mean", "chosen_most", "all_people"}`` where ``all_people`` is each
    candidate's score over every question (the figure a choice on everything would see).
    Ties go to the candidate named first."""
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}: choose one of {', '.join(METRICS)}")
    if not runs:
        raise ValueError("no runs to choose between")
    rows = {name: result["questions"] for name, result in runs.items()}
    people = [list(dict.fromkeys(r["person"] for r in rs)) for rs in rows.values()]
    if any(p != people[0] for p in people):
        raise ValueError("the runs must ask the same people")
    folds = []
    weighted = []
    for held in people[0]:
        train = {
            name: _score([r for r in rs if r["person"] != held], metric)
            for name, rs in rows.items()
        }
        chosen = max(train, key=lambda name: train[name])  # first of equals
        mine = [
            r for r in rows[chosen] if r["person"] == held and (metric in r or metric == "useful")
        ]
        score = _score(mine, metric)
        folds.append({"held_out": held, "chosen": chosen, "train": train, "held_out_score": score})
        weighted.append((score, len(mine)))
    total = sum(n for _, n in weighted)
    return {
        "metric": metric,
        "folds": folds,
        "held_out_mean": sum(s * n for s, n in weighted) / total if total else 0.0,
        "chosen_most": Counter(f["chosen"] for f in folds).most_common(1)[0][0],
        "all_people": {name: _score(rs, metric) for name, rs in rows.items()},
    }
