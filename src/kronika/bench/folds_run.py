"""``kronika bench folds``: recall settings chosen by k-fold cross-validation over
LoCoMo conversations, LongMemEval questions and ``bench memory`` people.

Each benchmark is ingested once (into ``workdir`` when given, where the next run finds
it again) and every setting of :data:`GRID` asks all its questions over that index
(:mod:`kronika.bench.probes`); :func:`kronika.bench.folds.cross_validate` then picks a
setting per fold on the other folds and scores it on the held-out one, over the whole
grid and over each setting alone (:func:`kronika.bench.folds.per_setting`). The grid
moves one setting at a time away from the defaults (its first entry), over recall's
query-time settings: the fusion and its lexical weight, the depth of each retriever,
the relevance floor, the recency half-life, the conversation context (neighbours,
answer, speaker, time, when and session weights), the weights of the score and hub
reduction.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from kronika import Embedder, InvalidInput, Memory, Settings, Vector
from kronika.bench._runtime import Progress, bench_memory, embedder_id, settings_summary
from kronika.bench.folds import Benchmark, cross_validate, per_setting
from kronika.bench.memdata import people as all_people
from kronika.bench.probes import (
    Probe,
    Replay,
    cached_home,
    file_stamp,
    locomo_probes,
    longmemeval_probes,
    mark_ingested,
    memory_probes,
)
from kronika.bench.report import table

GRID: dict[str, dict[str, Any]] = {
    "default": {},
    "lexical_weight=0.3": {"lexical_weight": 0.3},
    "lexical_weight=0.4": {"lexical_weight": 0.4},
    "lexical_weight=0.6": {"lexical_weight": 0.6},
    "lexical_weight=0.7": {"lexical_weight": 0.7},
    "fusion=minmax": {"fusion": "minmax"},
    "adaptive shift=0.1": {"fusion": "adaptive", "adaptive_shift": 0.1},
    "adaptive shift=0.2": {"fusion": "adaptive", "adaptive_shift": 0.2},
    "recall_candidates=25": {"recall_candidates": 25},
    "recall_candidates=100": {"recall_candidates": 100},
    "relevance_floor=0": {"relevance_floor": "0"},
    "relevance_floor=0.20": {"relevance_floor": "0.20"},
    "recency_half_life=90": {"recency_half_life": 90.0},
    "recency_half_life=365": {"recency_half_life": 365.0},
    "neighbour_weight=0.25": {"neighbour_weight": 0.25},
    "neighbour_weight=1": {"neighbour_weight": 1.0},
    "answer_focus=0.75": {"answer_focus": 0.75},
    "answer_focus=3": {"answer_focus": 3.0},
    "speaker_focus=0.6": {"speaker_focus": 0.6},
    "speaker_focus=2.4": {"speaker_focus": 2.4},
    "time_focus=2": {"time_focus": 2.0},
    "time_focus=8": {"time_focus": 8.0},
    "when_focus=0.5": {"when_focus": 0.5},
    "when_focus=2": {"when_focus": 2.0},
    "session_weight=0.2": {"session_weight": 0.2},
    "session_weight=0.8": {"session_weight": 0.8},
    "weights=0.9/0.05/0.05": {"alpha": 0.9, "beta": 0.05, "gamma": 0.05},
    "weights=0.6/0.2/0.2": {"alpha": 0.6, "beta": 0.2, "gamma": 0.2},
    "hub_neighbours=10, scope others": {"hub_neighbours": 10, "hub_scope": "others"},
    "hub_neighbours=10, scope all": {"hub_neighbours": 10, "hub_scope": "all"},
    "hub_neighbours=10, scope others, z ceiling 3": {
        "hub_neighbours": 10,
        "hub_scope": "others",
        "fusion_z_ceiling": 3.0,
    },
}
"""The settings compared: the defaults first (ties go to them), then one setting moved
at a time, each name saying which up to its ``=`` (:func:`~kronika.bench.folds.setting_of`);
a weight of the context or of the score goes to half and to twice its default. Named
``adaptive …`` are the query-adaptive fusion (core/adaptive.py), ``weights=α/β/γ`` the
weights of the recall score (core/scoring.py), ``hub_neighbours=10`` hub reduction
(core/hubness.py) over candidates of other sessions and facts (``scope others``) or
over every candidate (``scope all``), ``z ceiling 3`` with bounded standard scores."""

BENCHMARKS = {
    "locomo": Benchmark("locomo", ("recall@5", "recall@10", "multi-hop recall@10")),
    "longmemeval": Benchmark(
        "longmemeval",
        (
            "session recall_all@5",
            "session recall_any@5",
            "session recall_all@10",
            "turn recall_all@10",
        ),
    ),
    "memory": Benchmark("memory", ("hit@1", "hit@3", "mrr", "no_answer")),
}


def run_folds(
    *,
    locomo: str | Path | None = None,
    longmemeval: str | Path | None = None,
    memory: bool = True,
    people: Sequence[str] = (),
    k: int = 5,
    grid: Mapping[str, Mapping[str, Any]] | None = None,
    settings: Settings | None = None,
    workdir: Path | None = None,
    limit: int | None = None,
    embedder: Embedder | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Cross-validate ``grid`` (default :data:`GRID`; its first entry is the baseline)
    over the benchmarks given; returns the JSON-ready results (tables, headline).

    ``limit`` keeps the first conversations (LoCoMo) and questions (LongMemEval);
    ``people`` only these ``bench memory`` people.
    """
    grid = dict(grid or GRID)
    if not grid:
        raise ValueError("the grid holds no setting")
    base = settings or Settings()
    variants = {name: base.with_overrides(**dict(over)) for name, over in grid.items()}
    wanted: list[tuple[str, Path | None]] = [
        (name, Path(src))
        for name, src in (("locomo", locomo), ("longmemeval", longmemeval))
        if src is not None
    ]
    if memory:
        wanted.append(("memory", None))
    if not wanted:
        raise ValueError("no benchmark to run: give a LoCoMo or LongMemEval file, or memory")
    unknown = sorted(set(people) - {p.pid for p in all_people("all")})
    if memory and unknown:
        raise InvalidInput(f"no such person in bench memory: {', '.join(unknown)}")
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {name: {} for name in grid}
    timings: dict[str, dict[str, float]] = {}
    model: str | None = None
    with tempfile.TemporaryDirectory(prefix="kronika-folds-") as tmp:
        root = Path(workdir) if workdir is not None else Path(tmp)
        if embedder is None:
            from kronika import build_embedder

            embedder = build_embedder(
                base.embedder,
                threads=base.embedder_threads,
                without_mood=base.embed_without_mood,
            )
        for bench, path in wanted:
            stamp: dict[str, Any] = (
                file_stamp(path, limit) if path is not None else {"people": sorted(people)}
            )
            # what shapes the index: a workspace ingested otherwise is ingested again
            stamp |= {
                "embedder": base.embedder,
                "embed_context_words": base.embed_context_words,
                "embed_without_mood": base.embed_without_mood,
                "kronika": _version(),
            }
            with (
                cached_home(root, bench, stamp) as (home, saved),
                bench_memory(base, workdir=home, memory=None, embedder=embedder) as (mem, _),
            ):
                assert isinstance(mem, Memory)
                began = time.perf_counter()
                ids: dict[str, dict[str, str]] = dict((saved or {}).get("ids", {}))
                read = _reading(progress, bench, saved is None)
                if bench == "locomo" and path is not None:
                    probes = locomo_probes(mem, path, limit=limit, ingest=saved is None, seen=read)
                elif bench == "longmemeval" and path is not None:
                    probes = longmemeval_probes(
                        mem, path, limit=limit, ingest=saved is None, seen=read
                    )
                else:
                    probes = memory_probes(mem, ids, only=people, ingest=saved is None, seen=read)
                _warm(mem, probes)
                if saved is None:
                    mark_ingested(root, bench, stamp, {"ids": ids})
                ingest_s = time.perf_counter() - began
                began = time.perf_counter()
                vectors = _vectors(embedder, probes)
                total = len(variants) * len(probes)
                for n, (name, variant) in enumerate(variants.items()):
                    replay = Replay(mem, variant)
                    rows = runs[name][bench] = []
                    for i, probe in enumerate(probes):
                        if progress:
                            progress(f"{bench}: {name}", n * len(probes) + i, total)
                        result = replay.recall(probe, vectors[probe.text])
                        rows.append({"unit": probe.unit, **probe.score(result)})
                timings[bench] = {
                    "ingest_s": ingest_s,
                    "ask_s": time.perf_counter() - began,
                    "questions": float(len(probes)),
                    "settings": float(len(variants)),
                }
                model = embedder_id(mem)
    if progress:
        progress("done", len(wanted), len(wanted))
    benchmarks = [BENCHMARKS[name] for name, _ in wanted]
    cv = cross_validate(runs, benchmarks, k=k)
    results: dict[str, Any] = {
        "benchmark": "folds",
        "dataset": ", ".join(str(path or "kronika.bench.memdata") for _, path in wanted),
        "k": k,
        "grid": {name: dict(over) for name, over in grid.items()},
        "embedder": model,
        "settings": settings_summary(base),
        "cv": cv,
        "per_setting": per_setting(runs, benchmarks, k=k, default=next(iter(grid))),
        "timings": timings,
    }
    results["headline"] = _headline(cv, benchmarks)
    results["tables"] = _tables(results, benchmarks)
    return results


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("kronika")
    except metadata.PackageNotFoundError:
        return "unknown"


def _reading(progress: Progress | None, bench: str, ingest: bool) -> Callable[[str], None]:
    """What the probe readers call with each unit they read (or ingest)."""
    count = 0
    label = f"{bench}: {'ingest' if ingest else 'read'}"

    def seen(unit: str) -> None:
        nonlocal count
        count += 1
        if progress:
            progress(f"{label} {unit}", count, 0)

    return seen


def _warm(mem: Memory, probes: Sequence[Probe]) -> None:
    """One recall through the facade per agent: brings the index up to date with the
    workspace and the vectors ready, as a benchmark's first question would."""
    seen: set[str] = set()
    for probe in probes:
        if probe.agent not in seen:
            seen.add(probe.agent)
            mem.recall(probe.text, agent=probe.agent, k=1, now=probe.now, record_access=False)


def _vectors(embedder: Embedder, probes: Sequence[Probe]) -> dict[str, Vector]:
    """Each question embedded once, for every setting to use."""
    texts = list(dict.fromkeys(p.text for p in probes))
    return {text: embedder.embed_query(text) for text in texts}


def _headline(cv: dict[str, Any], benchmarks: Sequence[Benchmark]) -> dict[str, float]:
    flat: dict[str, float] = {}
    default = cv["default"]
    for b in benchmarks:
        for metric in b.metrics:
            key = f"{b.name}.{metric.replace(' ', '_')}"
            flat[f"{key}.default"] = cv["dev"][default][b.name][metric]
            flat[f"{key}.fold_out"] = cv["fold_out"]["joint"][b.name][metric]
    return flat


def _tables(results: dict[str, Any], benchmarks: Sequence[Benchmark]) -> list[dict[str, Any]]:
    cv = results["cv"]
    default = cv["default"]
    best = cv["dev_best"]
    rows = []
    for b in benchmarks:
        own_best = best["per_benchmark"][b.name]
        for metric in b.metrics:
            rows.append(
                [
                    b.name,
                    metric,
                    str(cv["questions"][b.name][metric]),
                    f"{cv['dev'][default][b.name][metric]:.3f}",
                    f"{cv['dev'][best['joint']][b.name][metric]:.3f}",
                    f"{cv['fold_out']['joint'][b.name][metric]:.3f}",
                    f"{cv['dev'][own_best][b.name][metric]:.3f}",
                    f"{cv['fold_out']['per_benchmark'][b.name][metric]:.3f}",
                ]
            )
    names = [b.name for b in benchmarks]
    chosen = [
        [
            str(fold["fold"]),
            ", ".join(f"{n} {len(fold['units'][n])}" for n in names),
            fold["joint"],
            *(fold["per_benchmark"][n] for n in names),
        ]
        for fold in cv["folds"]
    ]
    every = [
        [name, *(f"{cv['dev'][name][b.name][b.select]:.3f}" for b in benchmarks)]
        for name in cv["settings"]
    ]
    tables = [
        table(
            f"Fold-out against dev ({results['k']} folds): default = the defaults on every"
            f" question; dev best = the setting a choice on all the data makes (joint"
            f" {best['joint']}); fold-out = each question scored under the setting chosen"
            " on the other folds",
            [
                "benchmark",
                "metric",
                "questions",
                "default (dev)",
                "dev best, joint",
                "fold-out, joint",
                "dev best, own",
                "fold-out, own",
            ],
            rows,
        ),
        table(
            "The setting each fold chose (units held out; joint = one setting for every"
            " benchmark, then each benchmark's own)",
            ["fold", "held out", "joint", *names],
            chosen,
        ),
        table(
            "Every setting on every question (dev), each benchmark's selection metric",
            ["setting", *(f"{b.name} {b.select}" for b in benchmarks)],
            every,
        ),
    ]
    tables.append(_per_setting_table(results["per_setting"], benchmarks, cv["default"]))
    timing = results["timings"]
    tables.append(
        table(
            "Time",
            ["benchmark", "questions", "settings", "ingest s", "ask s"],
            [
                [
                    name,
                    f"{t['questions']:.0f}",
                    f"{t['settings']:.0f}",
                    f"{t['ingest_s']:.1f}",
                    f"{t['ask_s']:.1f}",
                ]
                for name, t in timing.items()
            ],
        )
    )
    return tables


def _per_setting_table(
    found: Mapping[str, Any], benchmarks: Sequence[Benchmark], default: str
) -> dict[str, Any]:
    """Each setting cross-validated alone: what each fold chose (``-``: the default),
    each benchmark's selection metric for the default and fold-out, the verdict."""

    def short(name: str) -> str:
        return "-" if name == default else name.split("=", 1)[-1]

    rows = []
    for setting, got in found.items():
        figures = [
            f"{got['default'][b.name][b.select]:.3f} → {got['fold_out'][b.name][b.select]:.3f}"
            for b in benchmarks
        ]
        if got["wins"]:
            verdict = "wins"
        elif got["stable"] and got["choices"][0] == default:
            verdict = "default kept in every fold"
        else:
            verdict = "stable, does not win" if got["stable"] else "not stable"
        rows.append([setting, "; ".join(short(c) for c in got["choices"]), *figures, verdict])
    return table(
        "Each setting cross-validated alone (the default and its values, one choice for"
        " every benchmark): each fold's choice (-: the default), default → fold-out;"
        " wins = the same value in every fold, better on the mean, no benchmark a point"
        " worse",
        ["setting", "folds chose", *(f"{b.name} {b.select}" for b in benchmarks), "verdict"],
        rows,
    )
