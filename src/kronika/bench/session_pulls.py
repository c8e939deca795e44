"""Two workers taking turns in one session: what a call costs on the pulling side.

Part of ``kronika bench session-turns`` in team mode. Two homes on one PostgreSQL
database are two workers of one tenant. The first imports one session of N synthetic
turns (and another session holding the rest up to the longest length, so the memory
is the same size at every length), the second opens its working copy of it; both
save a few turns untimed. Then they take turns: the first saves a turn (untimed), the
second saves one, timed: its call takes the write lock, pulls the first worker's turn
from the store of record into its copy of the session, appends its own and pushes
it. The wall time and the process's CPU time of the second worker's calls alone are
kept, and a profile (``cProfile``) of :data:`PROFILED` more of its calls gives the
steps (:data:`STEPS`). Embedding is excluded (:class:`~kronika.bench.fixed.FixedVectors`).

It runs as a process of its own (see :mod:`kronika.bench.session_turns`) using only
kronika's public API, so it runs unchanged against an older kronika (``--before``).
"""

from __future__ import annotations

import cProfile
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

PROFILED = 10
"""Calls of the pulling worker profiled after the timed ones."""
WARM = 3
"""Turns each worker saves before the timed ones (a first append reads the file)."""

STEPS: tuple[tuple[str, str], ...] = (
    ("pull", "copy_pull.py:pull|working_copy.py:pull"),
    ("record read", "record.py:changes"),
    ("file read + hashed", "copy_state.py:file_state|working_copy.py:_state"),
    ("manifest saved", "working_copy.py:_save_manifest"),
    ("file extended", "appending.py:extend_in_place"),
    ("own append", "appending.py:append_turn_in_place|sessionfiles.py:append_turn"),
    ("index sync", "indexer/indexer.py:sync_agent|sync.py:sync_agent"),
    ("push (release)", "working_copy.py:push"),
)
"""Steps of the pulling worker's call as ``(label, "file:function")`` found in the
profile (cumulative milliseconds per call; steps nest)."""

SESSION = "talk"


def measure_pulls(
    url: str, length: int, total: int, calls: int, budget_s: float, profiled: str
) -> dict[str, Any]:
    """Two workers on the empty database at ``url`` taking turns in a session of
    ``length`` turns (``total`` in the memory); the pulling worker's profile is dumped
    to the file ``profiled``."""
    import kronika
    from kronika import build_memory, load_settings
    from kronika.bench.fixed import FixedVectors, long_session

    with tempfile.TemporaryDirectory(prefix="kronika-session-pulls-") as tmp:
        first_home, second_home = Path(tmp) / "first", Path(tmp) / "second"
        settings = load_settings(first_home, environ={}, database_url=url)
        with build_memory(settings, create=True, embedder=FixedVectors()) as first:
            first.create_agent("bench")
            sessions = [long_session(SESSION, length, length)]
            if total > length:
                sessions.append(long_session("other", total - length, total))
            first.import_sessions("bench", sessions)
            settings = load_settings(second_home, environ={}, database_url=url)
            with build_memory(settings, create=True, embedder=FixedVectors()) as second:
                for n in range(WARM):
                    first.save_turn(SESSION, "user", f"warm up {n}", agent="bench")
                    second.save_turn(SESSION, "user", f"warm up {n}, again", agent="bench")
                spent: list[float] = []
                cpu_s = 0.0
                began = time.perf_counter()
                for n in range(calls):
                    first.save_turn(SESSION, "user", f"the kettle, turn {n}", agent="bench")
                    cpu, at = time.process_time(), time.perf_counter()
                    second.save_turn(SESSION, "user", f"the tea, turn {n}", agent="bench")
                    spent.append(time.perf_counter() - at)
                    cpu_s += time.process_time() - cpu
                    if time.perf_counter() - began > budget_s and len(spent) >= 3:
                        break
                profile = cProfile.Profile()
                for n in range(PROFILED):
                    first.save_turn(SESSION, "user", f"profiled kettle {n}", agent="bench")
                    profile.enable()
                    second.save_turn(SESSION, "user", f"profiled tea {n}", agent="bench")
                    profile.disable()
                profile.dump_stats(profiled)
                first.sync("bench")
                same = _file(first_home) == _file(second_home)
                turns = len(second.load_session(SESSION, agent="bench"))
    done = len(spent)
    return {
        "backend": "postgres",
        "turns": length,
        "memory_turns": max(total, length),
        "kronika": str(Path(kronika.__file__).parent),
        "calls": done,
        "turns_after": turns,
        "same_file": same,
        "median_ms": 1000 * statistics.median(spent),
        "p95_ms": 1000 * sorted(spent)[max(0, int(0.95 * done) - 1)],
        "cpu_ms": 1000 * cpu_s / done,
    }


def _file(home: Path) -> bytes:
    return (home / "agents" / "bench" / "sessions" / f"{SESSION}.md").read_bytes()


def _main(argv: Sequence[str]) -> int:
    job = json.loads(argv[0])
    print(json.dumps(measure_pulls(*job["pulls"])), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
