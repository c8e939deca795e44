"""``kronika bench locomo|longmemeval|memory|folds|scale|crash|writes|team-writes|
session-turns|hand-edits|round-trips|lessons|serve``: run a benchmark, print and save the
results (``crash`` exits 1 when a trial breaks an invariant)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.table import Table
from rich.text import Text

from kronika.cli import render
from kronika.errors import ImportFormatError, InvalidInput
from kronika.settings import Settings


def _sizes(text: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(s) for s in text.split(",") if s.strip())
    except ValueError as exc:
        raise InvalidInput(f"--sizes must be numbers separated by commas: {exc}") from exc
    if not sizes or min(sizes) < 1:
        raise InvalidInput("--sizes must be positive numbers separated by commas")
    return sizes


def _index(args: argparse.Namespace) -> str | None:
    """The ``--index`` spec, checked (``None``: SQLite)."""
    from kronika.bench.postgres import parse_index

    kind, _ = parse_index(args.index)
    if args.lexical != "bm25" and kind != "postgres":
        raise InvalidInput("--lexical chooses the keyword scoring of --index postgres only")
    return None if kind == "sqlite" else args.index


def _indexes(args: argparse.Namespace) -> tuple[str, ...]:
    """scale: the indexes to measure side by side (``--index sqlite,postgres``)."""
    from kronika.bench.postgres import parse_index

    specs = tuple(s.strip() for s in (args.index or "sqlite").split(",") if s.strip())
    for spec in specs:
        parse_index(spec)
    if args.lexical != "bm25":
        raise InvalidInput("--lexical is for locomo and longmemeval")
    return specs or ("sqlite",)


def _check_before(args: argparse.Namespace) -> None:
    """``--before``, when given, must be a ``src`` folder holding kronika."""
    if args.before is not None and not (Path(args.before) / "kronika").is_dir():
        raise InvalidInput(f"--before needs a src folder holding kronika; got {args.before!r}")


def _sized_in_turn(
    args: argparse.Namespace, progress: Callable[[str, int, int], None]
) -> dict[str, Any]:
    """``bench session-turns`` and ``bench hand-edits``: timed calls at each size, each
    size with this tree and ``--before``'s in turn."""
    if args.budget <= 0:
        raise InvalidInput("--budget must be above 0")
    _check_before(args)
    common = {"calls": args.calls, "budget_s": args.budget, "before": args.before}
    if args.suite == "hand-edits":
        from kronika.bench.hand_edits import run_hand_edits

        return run_hand_edits(_sizes(args.sizes or "10,3000"), progress=progress, **common)
    from kronika.bench.session_turns import run_session_turns

    return run_session_turns(
        _sizes(args.sizes or "10,1000,10000"), index=args.index, progress=progress, **common
    )


def _folds(
    args: argparse.Namespace, settings: Settings, progress: Callable[[str, int, int], None]
) -> dict[str, Any]:
    """``bench folds``: the data files checked, then the cross-validation."""
    from kronika.bench.folds_run import run_folds

    for option, value in (("--locomo", args.locomo), ("--longmemeval", args.longmemeval)):
        if value is not None and not Path(value).is_file():
            raise ImportFormatError(f"bench folds {option} needs a data file; got {value!r}")
    if args.locomo is None and args.longmemeval is None and args.no_memory:
        raise InvalidInput("bench folds needs --locomo, --longmemeval or bench memory's people")
    return run_folds(
        locomo=args.locomo,
        longmemeval=args.longmemeval,
        memory=not args.no_memory,
        people=tuple(args.person or ()),
        k=args.folds,
        settings=settings,
        workdir=Path(args.workdir) if args.workdir else None,
        limit=args.limit,
        progress=progress,
    )


def run_bench(args: argparse.Namespace, settings: Settings) -> int:
    from kronika import bench

    if args.embedder:
        settings = settings.with_overrides(embedder=args.embedder)
    elif args.suite == "crash":  # the trials test the write path, not a model
        settings = settings.with_overrides(embedder="hashing")
    modes = tuple(args.mode) if args.mode else ("lexical", "vector", "hybrid")
    if args.calls is None:  # each suite's own default
        args.calls = 30 if args.suite == "hand-edits" else 200
    if args.suite == "crash" and (args.trials < 1 or args.writers < 1 or args.max_run <= 0):
        raise InvalidInput("--trials and --writers must be at least 1, --max-run above 0")
    if args.suite != "team-writes" and (args.queries == 0 or args.batch == 0):
        raise InvalidInput("--queries and --batch must be at least 1 (0 skips them in team-writes)")
    results: dict[str, Any]
    with render.labelled_progress_bar(not args.json) as progress:
        if args.suite == "crash":
            results = bench.run_crash(
                args.trials,
                writers=args.writers,
                settings=settings,
                seed=args.seed,
                max_run_s=args.max_run,
                progress=progress,
                index=_index(args),
                batches=args.batches,
                agents=args.agents,
            )
        elif args.suite == "lessons":
            if not 2 <= args.tasks <= 100_000:
                raise InvalidInput("--tasks must be from 2 to 100000")
            results = bench.run_lessons(
                tasks=args.tasks,
                seed=args.seed,
                settings=settings,
                progress=progress,
                evaluator=args.evaluator,
            )
        elif args.suite == "writes":
            if args.calls < 1 or args.budget <= 0:
                raise InvalidInput("--calls must be at least 1 and --budget above 0")
            _check_before(args)
            results = bench.run_writes(
                _sizes(args.sizes or "1000,10000,100000"),
                calls=args.calls,
                budget_s=args.budget,
                batch=args.batch,
                settings=settings,
                progress=progress,
            )
            if args.before is not None:
                from kronika.bench.writes_batch import add_side_by_side, side_by_side

                rows = side_by_side(
                    _sizes(args.sizes or "1000,10000,100000"),
                    args.before,
                    calls=args.calls,
                    budget_s=args.budget,
                    batch=args.batch,
                    progress=progress,
                )
                add_side_by_side(results, rows, args.batch)
        elif args.suite == "team-writes":
            from kronika.bench.team_writes import run_team_writes

            if args.calls < 1 or args.budget <= 0 or args.writer_seconds <= 0:
                raise InvalidInput(
                    "--calls must be at least 1, --budget and --writer-seconds above 0"
                )
            _check_before(args)
            if args.rounds < 1:
                raise InvalidInput("--rounds must be at least 1")
            results = run_team_writes(
                () if args.writers_only else _sizes(args.sizes or "1000,10000"),
                index=args.index or "postgres",
                calls=args.calls,
                budget_s=args.budget,
                before=args.before,
                writers=2 if args.writers == 1 else args.writers,
                writer_s=args.writer_seconds,
                queries=50 if args.queries is None else args.queries,
                batch=args.batch,
                rounds=args.rounds,
                sessions=args.sessions,
                progress=progress,
            )
        elif args.suite in ("session-turns", "hand-edits"):
            results = _sized_in_turn(args, progress)
        elif args.suite == "round-trips":
            from kronika.bench.round_trips import run_round_trips

            if not 0 <= args.delay_ms <= 1000:
                raise InvalidInput("--delay-ms must be between 0 and 1000")
            _check_before(args)
            results = run_round_trips(
                index=args.index,
                turns=_sizes(args.sizes or "2000")[0],
                calls=args.calls,
                delay_ms=args.delay_ms,
                before=args.before,
                progress=progress,
            )
        elif args.suite == "memory":
            from kronika.bench.memory_suite import run_memory

            results = run_memory(
                split=args.split,
                settings=settings,
                only=tuple(args.person or ()),
                limit=args.limit,
                progress=progress,
            )
        elif args.suite == "folds":
            results = _folds(args, settings, progress)
        elif args.suite == "serve":
            from kronika.bench.serve import run_serve

            if args.budget <= 0:
                raise InvalidInput("--budget must be above 0")
            results = run_serve(
                _sizes(args.sizes or "10000")[0],
                requests=args.queries or 100,
                clients=_sizes(args.clients),
                budget_s=args.budget,
                settings=settings,
                progress=progress,
                workers=_sizes(args.workers),
                index=args.index,
                client=args.client,
            )
        elif args.suite == "scale":
            sizes = _sizes(args.sizes or "10000,100000")
            results = bench.run_scale(
                sizes,
                queries=args.queries or 100,
                settings=settings,
                progress=progress,
                workdir=Path(args.workdir) if args.workdir else None,
                indexes=_indexes(args),
            )
        elif args.suite == "vectors":
            results = bench.run_vectors(
                _sizes(args.sizes or "10000,100000"),
                queries=args.queries or 50,
                repeats=args.repeats,
                settings=settings,
                progress=progress,
                workdir=Path(args.workdir) if args.workdir else None,
            )
        else:
            if not args.path or not Path(args.path).is_file():
                raise ImportFormatError(f"bench {args.suite} needs a data file; got {args.path!r}")
            run = bench.run_locomo if args.suite == "locomo" else bench.run_longmemeval
            results = run(
                args.path,
                modes=modes,
                limit=args.limit,
                settings=settings,
                progress=progress,
                index=_index(args),
                lexical=args.lexical,
            )
    name = args.suite
    if args.suite == "crash":  # crash-<M>, crash-batches-<M>, crash-batches-agents-<M>
        kinds = ("batches",) * args.batches + ("agents",) * args.agents
        name = "-".join(("crash", *kinds, str(args.writers)))
    json_path, md_path = bench.write_report(name, results, args.out)
    failed = 1 if results.get("headline", {}).get("trials_failing") else 0
    if args.json:
        render.print_json(
            {
                "suite": args.suite,
                **bench.headline(results),
                "results": results,
                "report": str(md_path),
            }
        )
        return failed
    for tbl in results.get("tables", []):
        table = Table(title=tbl["title"], title_justify="left")
        for column in tbl["columns"]:
            table.add_column(str(column))
        for row in tbl["rows"]:
            table.add_row(*(Text(str(cell)) for cell in row))
        render.out.print(table)
    render.out.print(f"results written to {md_path} and {json_path}")
    return failed
