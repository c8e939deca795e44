"""``kronika bench folds``: recall settings chosen by k-fold cross-validation over
LoCoMo conversations, LongMemEval questions and ``bench memory`` people.

Each benchmark is ingested once (into ``workdir`` when given, where the next run finds
it again) and every setting of :data:`GRID` asks all its questions over that index
(:mod:`kronika.bench.probes`); :func:`kronika.bench.folds.cross_validate` then picks a
setting per fold on the other folds and scores it on the held-out one. The grid moves
one setting at a time away from the defaults (its first entry), over the query-time
settings that matter: the fusion and its lexical weight, the depth of each retriever,
the relevance floor and the recency half-life.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from kronika.bench._runtime import Progress, bench_memory, embedder_id, settings_summary
from kronika.bench.folds import Benchmark, cross_validate
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
from kronika.errors import InvalidInput
from kronika.memory import Memory
from kronika.ports import Embedder, Vector
from kronika.settings import Settings

GRID: dict[str, dict[str, Any]] = {
    "default": {},
    "lexical_weight=0.3": {"lexical_weight": 0.3},
    "lexical_weight=0.4": {"lexical_weight": 0.4},
    "lexical_weight=0.5": {"lexical_weight": 0.5},
    "lexical_weight=0.7": {"lexical_weight": 0.7},
    "fusion=minmax": {"fusion": "minmax"},
    "adaptive shift=0.1": {"fusion": "adaptive", "adaptive_shift": 0.1},
    "adaptive shift=0.2": {"fusion": "adaptive", "adaptive_shift": 0.2},
    "adaptive shift=0.3": {"fusion": "adaptive", "adaptive_shift": 0.3},
    "recall_candidates=50": {"recall_candidates": 50},
    "recall_candidates=200": {"recall_candidates": 200},
    "relevance_floor=0": {"relevance_floor": "0"},
    "relevance_floor=0.10": {"relevance_floor": "0.10"},
    "relevance_floor=0.20": {"relevance_floor": "0.20"},
    "recency_half_life=90": {"recency_half_life": 90.0},
    "recency_half_life=365": {"recency_half_life": 365.0},
}
"""The settings compared: the defaults first (ties go to them), then one setting moved
at a time. Named ``adaptive …`` are the query-adaptive fusion (core/adaptive.py)."""

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
            from kronika.providers.embedders import build_embedder

            embedder = build_embedder(base.embedder, threads=base.embedder_threads)
        for bench, path in wanted:
            stamp: dict[str, Any] = (
                file_stamp(path, limit) if path is not None else {"people": sorted(people)}
            )
            # what shapes the index: a workspace ingested otherwise is ingested again
            stamp |= {
                "embedder": base.embedder,
                "embed_context_words": base.embed_context_words,
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
    adaptive = [name for name, over in grid.items() if over.get("fusion") == "adaptive"]
    results: dict[str, Any] = {
        "benchmark": "folds",
        "dataset": ", ".join(str(path or "kronika.bench.memdata") for _, path in wanted),
        "k": k,
        "grid": {name: dict(over) for name, over in grid.items()},
        "embedder": model,
        "settings": settings_summary(base),
        "cv": cv,
        "adaptive": _adaptive(runs, benchmarks, k, next(iter(grid)), adaptive)
        if adaptive
        else None,
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


def _adaptive(
    runs: Mapping[str, Mapping[str, Any]],
    benchmarks: Sequence[Benchmark],
    k: int,
    default: str,
    adaptive: Sequence[str],
) -> dict[str, Any]:
    """The adaptive fusion (its shift chosen per fold among ``adaptive``) against the
    default, fold-out; ``wins`` when it gains on every benchmark's selection metric and
    loses no reported metric by more than a point."""
    cv = cross_validate({name: runs[name] for name in adaptive}, benchmarks, k=k)
    base = cross_validate({default: runs[default]}, benchmarks, k=k)
    rows = []
    wins = True
    for b in benchmarks:
        for metric in b.metrics:
            before = base["fold_out"]["joint"][b.name][metric]
            after = cv["fold_out"]["joint"][b.name][metric]
            rows.append(
                {"benchmark": b.name, "metric": metric, "default": before, "adaptive": after}
            )
            if after - before < -0.01 or (metric == b.select and after <= before):
                wins = False
    return {"rows": rows, "wins": wins, "stability": cv["stability"]["joint"]}


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
    adaptive = results.get("adaptive")
    if adaptive:
        tables.append(
            table(
                "Adaptive fusion (shift chosen per fold) against the default, fold-out:"
                f" {'wins' if adaptive['wins'] else 'does not win'}",
                ["benchmark", "metric", "default", "adaptive", "difference"],
                [
                    [
                        r["benchmark"],
                        r["metric"],
                        f"{r['default']:.3f}",
                        f"{r['adaptive']:.3f}",
                        f"{r['adaptive'] - r['default']:+.3f}",
                    ]
                    for r in adaptive["rows"]
                ],
            )
        )
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
