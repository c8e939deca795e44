"""``save_turn()`` with several writers at once, and what one ``fsync`` costs here.

Part of ``kronika bench writes``. Each writer is a thread of one process or a process
of its own, all saving turns into one workspace, durable when each call returns
(group commit shares the syncs: :mod:`kronika.stores.durable`). Rates are turns per
second of wall time from the moment every writer is ready to the last call's end.
Writers save into one shared session (``shared``) or each into a session of its own
(``own``). Embedding is excluded (:class:`~kronika.bench.fixed.FixedVectors`).

The fsync probe appends a line to a file in the same folder and syncs it, ``samples``
times: the floor any durable call pays on this disk at this moment.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from kronika import Settings

SESSION_TURNS = 100
_CHILD = (
    "import sys; from pathlib import Path; from kronika.bench.turns import _child;"
    " _child(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])"
)


def fsync_latency(folder: Path, samples: int = 200) -> dict[str, float]:
    """Median and 90th percentile of one small append + ``fsync``, in milliseconds."""
    spent = []
    probe = folder / "fsync-probe"
    fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        for _ in range(samples):
            os.write(fd, b"x" * 200 + b"\n")
            began = time.perf_counter()
            os.fsync(fd)
            spent.append(time.perf_counter() - began)
    finally:
        os.close(fd)
        probe.unlink()
    spent.sort()
    return {"p50_ms": 1000 * statistics.median(spent), "p90_ms": 1000 * spent[len(spent) * 9 // 10]}


def _session(writer: int, sessions: str) -> str:
    return "shared" if sessions == "shared" else f"own-{writer}"


def _prepare(home: Path, settings: Settings, writers: int) -> None:
    from kronika import build_memory
    from kronika.bench.fixed import FixedVectors, long_session

    with build_memory(
        settings.with_overrides(home=home), create=True, embedder=FixedVectors()
    ) as m:
        m.create_agent("bench")
        names = {"shared", *(f"own-{n}" for n in range(writers))}
        m.import_sessions("bench", [long_session(s, SESSION_TURNS, 7) for s in sorted(names)])


def _threads(home: Path, settings: Settings, writers: int, calls: int, sessions: str) -> float:
    from kronika import build_memory
    from kronika.bench.fixed import FixedVectors

    with build_memory(settings.with_overrides(home=home), embedder=FixedVectors()) as memory:
        start = threading.Barrier(writers + 1)

        def talk(writer: int) -> None:
            start.wait()
            for n in range(calls):
                memory.save_turn(
                    _session(writer, sessions), "user", f"writer {writer} turn {n}", agent="bench"
                )

        threads = [threading.Thread(target=talk, args=(w,)) for w in range(writers)]
        for thread in threads:
            thread.start()
        start.wait()
        began = time.perf_counter()
        for thread in threads:
            thread.join()
        return writers * calls / (time.perf_counter() - began)


def _processes(home: Path, writers: int, calls: int, sessions: str) -> float:
    children = [
        subprocess.Popen(
            [sys.executable, "-c", _CHILD, str(home), str(w), str(calls), sessions],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for w in range(writers)
    ]
    for child in children:
        assert child.stdout is not None
        child.stdout.readline()  # ready: the workspace is open
    for child in children:
        assert child.stdin is not None
        child.stdin.write("go\n")
        child.stdin.flush()
    spans = [json.loads(child.communicate()[0]) for child in children]
    if any(child.returncode for child in children):
        raise RuntimeError("a save_turn writer process failed")
    return float(writers * calls / (max(s[1] for s in spans) - min(s[0] for s in spans)))


def save_turn_concurrency(
    settings: Settings, writers: tuple[int, ...] = (1, 4, 8), calls: int = 100
) -> dict[str, Any]:
    """Turns per second for each kind of writer, count and session layout, and the
    fsync latency measured just before (see the module docstring)."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="kronika-turns-") as tmp:
        latency = fsync_latency(Path(tmp))
        for kind in ("threads", "processes"):
            for sessions in ("shared", "own"):
                for count in writers:
                    if sessions == "own" and count == 1:
                        continue  # the same as one writer on a shared session
                    if kind == "processes" and count not in (1, max(writers)):
                        continue  # each process pays a start: the extremes only
                    home = Path(tmp) / f"{kind}-{sessions}-{count}"
                    _prepare(home, settings, count)
                    rate = (
                        _threads(home, settings, count, calls, sessions)
                        if kind == "threads"
                        else _processes(home, count, calls, sessions)
                    )
                    rows.append(
                        {"kind": kind, "sessions": sessions, "writers": count, "per_s": rate}
                    )
    return {"fsync": latency, "rows": rows, "calls": calls}


def _child(home: Path, writer: int, calls: int, sessions: str) -> None:
    from kronika import build_memory
    from kronika.bench.fixed import FixedVectors

    settings = Settings().with_overrides(home=home)
    with build_memory(settings, embedder=FixedVectors()) as memory:
        print("ready", flush=True)
        sys.stdin.readline()
        began = time.time()
        for n in range(calls):
            memory.save_turn(
                _session(writer, sessions), "user", f"writer {writer} turn {n}", agent="bench"
            )
        print(json.dumps([began, time.time()]), flush=True)


def concurrency_table(turns: dict[str, Any]) -> dict[str, Any]:
    """The results as a table for the report."""
    from kronika.bench.report import table

    fsync = turns["fsync"]
    return table(
        f"save_turn() with several writers, turns/s of wall time ({turns['calls']} calls"
        f" each; one fsync here: {fsync['p50_ms']:.2f} ms median,"
        f" {fsync['p90_ms']:.2f} ms p90)",
        ["writers", "session", "threads of one process", "processes"],
        [
            [
                str(count),
                sessions,
                *(
                    next(
                        (
                            f"{row['per_s']:,.0f}"
                            for row in turns["rows"]
                            if (row["kind"], row["sessions"], row["writers"])
                            == (kind, sessions, count)
                        ),
                        "-",
                    )
                    for kind in ("threads", "processes")
                ),
            ]
            for sessions in ("shared", "own")
            for count in sorted({r["writers"] for r in turns["rows"]})
            if any(r["sessions"] == sessions and r["writers"] == count for r in turns["rows"])
        ],
    )
