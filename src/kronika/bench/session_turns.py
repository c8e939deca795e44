"""``save_turn()`` into one session as it grows: ``kronika bench session-turns``.

For each length N (10, 1,000 and 10,000 turns by default) a fresh workspace gets one
agent and one session of N synthetic turns, and another session holding the rest up to
the longest length (imported: setup, not timed), so that the memory, and with it the
search index, is the same size at every length and only the session's length differs.
Then a few turns are saved untimed (a process's first append reads the file once).
Then ``save_turn()`` of new turns into that session is timed one call at a time, each
durable when it returns, ``calls`` of them or as many as ``budget_s`` allows: what appending a turn
costs at turn N. Embedding is excluded: :class:`~kronika.bench.fixed.FixedVectors`
makes a text's vector from its hash.

Both backends are measured: the local workspace (Markdown files and the SQLite index)
and team mode (a working copy of a PostgreSQL store of record, the PostgreSQL index;
a throwaway local server unless ``--index postgres=URL``). In team mode the run also
reports the write-ahead log PostgreSQL wrote per call (``pg_current_wal_lsn`` before
and after the timed calls): a document rewritten whole at each turn shows there.

A profile (``cProfile``) of :data:`PROFILED` more calls gives the time spent in each
step of the write path (:data:`STEPS`), so a step whose cost grows with the session
shows as the one that differs between lengths.

``--before PATH`` measures the same with the kronika package found under ``PATH`` (a
``src`` folder of another checkout), in the same run: each length and backend is
measured with one tree, then the other, the first alternating from length to length.
Each measurement is a process of its own that uses only kronika's public API, so it
runs unchanged against an older kronika.
"""

from __future__ import annotations

import cProfile
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

PROFILED = 10
"""Calls profiled after the timed ones (a profile slows the calls it watches)."""
WARM = 3
"""Turns saved before the timed ones: the first append of a process reads the file."""

STEPS: tuple[tuple[str, str], ...] = (
    ("turn id + tail", "memory/sessions.py:_turns_in"),
    ("file append", "appending.py:append_turn_in_place|sessionfiles.py:append_turn"),
    ("index sync", "indexer/indexer.py:sync_agent|sync.py:sync_agent"),
    ("lock + pull", "working_copy.py:_take"),
    ("push (release)", "working_copy.py:push"),
    ("whole file parsed", "facts/reads.py:parse_source|factfiles.py:parse_source"),
    ("record write", "record.py:write"),
    ("record: items compared", "record_rows.py:write_items|record.py:_write_items"),
)
"""Steps of a saved turn as ``(label, "file:function")`` found in the profile
(cumulative milliseconds per call; steps nest, so they do not add up). ``|`` parts
name the same step in another layout of the code (an older kronika)."""

SESSION = "talk"


def measure_length(
    url: str | None, length: int, total: int, calls: int, budget_s: float, profiled: str
) -> dict[str, Any]:
    """One length on a fresh workspace holding ``total`` turns in all: local without
    ``url``, else team mode on the empty database at ``url`` (the package on
    ``sys.path``); the profile is dumped to the file ``profiled`` (read by the parent:
    this runs against an older kronika)."""
    import kronika
    from kronika import Settings, build_memory, load_settings
    from kronika.bench.fixed import FixedVectors, long_session

    with tempfile.TemporaryDirectory(prefix="kronika-session-turns-") as tmp:
        home = Path(tmp) / "home"
        settings = (
            load_settings(home, environ={}, database_url=url)
            if url
            else Settings().with_overrides(home=home)
        )
        with build_memory(settings, create=True, embedder=FixedVectors()) as memory:
            memory.create_agent("bench")
            began = time.perf_counter()
            sessions = [long_session(SESSION, length, length)]
            if total > length:  # the rest of the memory, in a session of its own
                sessions.append(long_session("other", total - length, total))
            memory.import_sessions("bench", sessions)
            setup_s = time.perf_counter() - began

            def say(what: str) -> None:
                memory.save_turn(SESSION, "user", what, agent="bench")

            for n in range(WARM):
                say(f"warm up turn {n}")
            wal = _wal(url)
            spent: list[float] = []
            cpu = time.process_time()
            began = time.perf_counter()
            for n in range(calls):
                at = time.perf_counter()
                say(f"turn {n} of the bench: the kettle is on, {n * 31} minutes")
                spent.append(time.perf_counter() - at)
                if time.perf_counter() - began > budget_s and len(spent) >= 3:
                    break
            cpu_s = time.process_time() - cpu
            wal_bytes = _wal(url) - wal if url else 0
            profile = cProfile.Profile()
            profile.enable()
            for n in range(PROFILED):
                say(f"profiled turn {n}: {n * 17}")
            profile.disable()
            profile.dump_stats(profiled)
            turns = len(memory.load_session(SESSION, agent="bench"))
    done = len(spent)
    return {
        "backend": "postgres" if url else "local",
        "turns": length,
        "memory_turns": max(total, length),
        "kronika": str(Path(kronika.__file__).parent),
        "setup_s": setup_s,
        "calls": done,
        "turns_after": turns,
        "per_s": 1.0 / statistics.median(spent),
        "median_ms": 1000 * statistics.median(spent),
        "p95_ms": 1000 * sorted(spent)[max(0, int(0.95 * done) - 1)],
        "cpu_ms": 1000 * cpu_s / done,
        "wal_kb": wal_bytes / 1024 / done,
    }


def _wal(url: str | None) -> int:
    """The server's write-ahead log position in bytes (0 without a server)."""
    if not url:
        return 0
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT pg_current_wal_lsn() - '0/0'::pg_lsn").fetchone()
    return int(row[0]) if row else 0


def run_session_turns(
    lengths: Sequence[int] = (10, 1_000, 10_000),
    *,
    index: str | None = None,
    calls: int = 100,
    budget_s: float = 60.0,
    before: str | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> dict[str, Any]:
    """Time ``save_turn()`` at each session length on both backends (``index``
    ``sqlite``: the local one only), with the tree at ``before`` too, interleaved."""
    from kronika.bench import session_pulls
    from kronika.bench.postgres import PostgresSite, parse_index
    from kronika.bench.team_writes import alternating, collect, own_src, spawn, steps_ms

    kind, url = parse_index(index or "postgres")
    trees = [("after", own_src())] + ([("before", before)] if before else [])
    rows: list[dict[str, Any]] = []
    pulls: list[dict[str, Any]] = []
    site = PostgresSite(url) if kind == "postgres" else None
    with tempfile.TemporaryDirectory(prefix="kronika-session-turns-") as tmp:
        profiled = str(Path(tmp) / "profile")

        def one(label: str, src: str, db: str | None, length: int) -> None:
            job = {"turns": [db, length, max(lengths), calls, budget_s, profiled]}
            row = collect(spawn(src, job, __file__))
            rows.append({"tree": label, **row, "steps_ms": steps_ms(profiled, PROFILED, STEPS)})

        def pulled(label: str, src: str, db: str, length: int) -> None:
            job = {"pulls": [db, length, max(lengths), calls, budget_s, profiled]}
            row = collect(spawn(src, job, session_pulls.__file__))
            steps = steps_ms(profiled, session_pulls.PROFILED, session_pulls.STEPS)
            pulls.append({"tree": label, **row, "steps_ms": steps})

        try:
            for n, length in enumerate(lengths):
                for backend in ("local", "postgres") if site else ("local",):
                    for label, src in alternating(trees, n):
                        if progress:
                            progress(f"save_turn at {length:,} turns, {backend} ({label})", n, 0)
                        if site is None or backend == "local":
                            one(label, src, None, length)
                            continue
                        with site.database() as db:
                            one(label, src, db, length)
                        if progress:
                            progress(f"two workers at {length:,} turns ({label})", n, 0)
                        with site.database() as db:
                            pulled(label, src, db, length)
        finally:
            if site is not None:
                site.close()
    return _results(rows, calls, pulls)


def _results(
    rows: list[dict[str, Any]], calls: int, pulls: Sequence[dict[str, Any]] = ()
) -> dict[str, Any]:
    from kronika.bench.fixed import FixedVectors
    from kronika.bench.report import table

    def ratio(row: dict[str, Any], key: str) -> str:
        first = next(
            r
            for r in rows
            if (r["backend"], r["tree"]) == (row["backend"], row["tree"])
            and r["turns"] == min(x["turns"] for x in rows)
        )
        return f"{row[key] / first[key]:.2f}×" if first[key] else "-"

    order = sorted(rows, key=lambda r: (r["backend"], r["tree"] != "before", r["turns"]))
    tables = [
        table(
            f"save_turn() into one session as it grows, embedding excluded (median of up to"
            f" {calls} calls)",
            [
                "backend",
                "code",
                "turns in the session",
                "in the memory",
                "save_turn() /s",
                "median ms",
                "p95 ms",
                "CPU ms",
                "median vs the shortest",
                "CPU vs the shortest",
                "WAL KiB per call",
            ],
            [
                [
                    r["backend"],
                    r["tree"],
                    f"{r['turns']:,}",
                    f"{r['memory_turns']:,}",
                    f"{r['per_s']:.1f}",
                    f"{r['median_ms']:.2f}",
                    f"{r['p95_ms']:.2f}",
                    f"{r['cpu_ms']:.2f}",
                    ratio(r, "median_ms"),
                    ratio(r, "cpu_ms"),
                    f"{r['wal_kb']:.1f}" if r["backend"] == "postgres" else "-",
                ]
                for r in order
            ],
        ),
        table(
            f"Where a save_turn() spends its time (ms per call, cProfile of {PROFILED} calls;"
            " steps nest)",
            ["backend", "code", "turns", *(label for label, _ in STEPS)],
            [
                [
                    r["backend"],
                    r["tree"],
                    f"{r['turns']:,}",
                    *(f"{r['steps_ms'][s]:.2f}" for s, _ in STEPS),
                ]
                for r in order
            ],
        ),
    ]
    if pulls:
        tables.extend(_pull_tables(pulls, calls))
    return {
        "benchmark": "session-turns",
        "dataset": "synthetic chat turns (seeded)",
        "embedder": FixedVectors.model_id,
        "rows": rows,
        "pulls": list(pulls),
        "headline": {
            **{
                f"save_turn_ms@{r['turns']}_{r['backend']}_{r['tree']}": r["median_ms"]
                for r in rows
            },
            **{f"pulling_cpu_ms@{r['turns']}_{r['tree']}": r["cpu_ms"] for r in pulls},
        },
        "tables": tables,
    }


def _pull_tables(pulls: Sequence[dict[str, Any]], calls: int) -> list[dict[str, Any]]:
    """The tables of two workers taking turns (:mod:`kronika.bench.session_pulls`)."""
    from kronika.bench.report import table
    from kronika.bench.session_pulls import PROFILED as PULLS_PROFILED
    from kronika.bench.session_pulls import STEPS as PULL_STEPS

    shortest = min(r["turns"] for r in pulls)
    cpu_first = {r["tree"]: r["cpu_ms"] for r in pulls if r["turns"] == shortest}
    order = sorted(pulls, key=lambda r: (r["tree"] != "before", r["turns"]))
    return [
        table(
            "Two workers taking turns in one session: the pulling worker's save_turn()"
            f" (it pulls the other's turn first), median of up to {calls} calls",
            [
                "code",
                "turns in the session",
                "median ms",
                "p95 ms",
                "CPU ms",
                "CPU vs the shortest",
                "copies byte-identical",
            ],
            [
                [
                    r["tree"],
                    f"{r['turns']:,}",
                    f"{r['median_ms']:.2f}",
                    f"{r['p95_ms']:.2f}",
                    f"{r['cpu_ms']:.2f}",
                    f"{r['cpu_ms'] / cpu_first[r['tree']]:.2f}×"
                    if cpu_first.get(r["tree"])
                    else "-",
                    "yes" if r["same_file"] else "NO",
                ]
                for r in order
            ],
        ),
        table(
            "Where the pulling worker's call spends its time (ms per call, cProfile of"
            f" {PULLS_PROFILED} calls; steps nest)",
            ["code", "turns", *(label for label, _ in PULL_STEPS)],
            [
                [r["tree"], f"{r['turns']:,}", *(f"{r['steps_ms'][s]:.2f}" for s, _ in PULL_STEPS)]
                for r in order
            ],
        ),
    ]


def _main(argv: Sequence[str]) -> int:
    job = json.loads(argv[0])
    print(json.dumps(measure_length(*job["turns"])), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
