"""Two workers remembering facts of one agent in turn (``kronika bench team-writes``).

Behind a load balancer, ``kronika serve --workers 2`` on PostgreSQL sends one agent's
writes to either worker: each call then first pulls what the other worker wrote since
its own last call (the Brain rewritten, facts moved to ``brain_archive.md``), then
writes. For each size N a fresh database gets one agent whose archive holds N facts
and a Brain at its budget (as ``team-writes`` sets it up), then two workers (two
working copies, one process each call in turn) call ``remember()`` alternately,
``calls`` times each. Reported per worker: CPU and wall time per call, means (the calls
that move facts to the archive, every few calls, are where a pull that reads or parses
the whole archive costs most: a median would pass them over), and the median wall time.

This file runs as a script under another checkout's kronika too (``--before``): it
uses the public API and ``kronika.testing`` only (a kronika from before
``kronika.testing.archive_document`` is reported as not measured).
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

STOCKED = 60
"""Facts remembered after the archive is written: a Brain past its budget."""


def measure_in_turn(url: str, size: int, calls: int) -> dict[str, Any]:
    """Two workers in turn on the empty database at ``url`` (see the module)."""
    from kronika import build_memory, load_settings
    from kronika.bench.fixed import FixedVectors
    from kronika.bench.writes import _stored_facts

    try:
        from kronika.testing import archive_document
    except ImportError:  # a kronika from before 2026-11-28: not measured
        return {"size": size, "calls": 0, "skipped": "no kronika.testing.archive_document"}

    cpu: dict[str, list[float]] = {"first": [], "second": []}
    wall: dict[str, list[float]] = {"first": [], "second": []}
    with tempfile.TemporaryDirectory(prefix="kronika-team-turns-") as tmp:
        one = load_settings(Path(tmp) / "one", environ={}, database_url=url)
        two = load_settings(Path(tmp) / "two", environ={}, database_url=url)
        with build_memory(one, create=True, embedder=FixedVectors()) as first:
            first.create_agent("bench")
            at = datetime(2025, 1, 1, tzinfo=UTC)
            archive = first.workspace.agent_dir("bench") / "brain_archive.md"
            archive.write_text(archive_document(_stored_facts(size, at)), encoding="utf-8")
            first.sync("bench")
            for n in range(STOCKED):
                first.remember(f"stocked fact {n}: {n * 13}", key=f"stock_{n}", agent="bench")
            with build_memory(two, create=True, embedder=FixedVectors()) as second:
                second.remember("the second worker's first fact", key="second", agent="bench")
                first.remember("the first worker again", key="first", agent="bench")
                for n in range(calls):
                    for name, memory in (("first", first), ("second", second)):
                        began, used = time.perf_counter(), time.process_time()
                        memory.remember(
                            f"{name} fact {n}: {n * 31}", key=f"{name}_{n}", agent="bench"
                        )
                        wall[name].append(time.perf_counter() - began)
                        cpu[name].append(time.process_time() - used)
    return {
        "size": size,
        "calls": calls,
        **{f"{w}_cpu_ms": 1000 * statistics.fmean(cpu[w]) for w in cpu},
        **{f"{w}_mean_ms": 1000 * statistics.fmean(wall[w]) for w in wall},
        **{f"{w}_median_ms": 1000 * statistics.median(wall[w]) for w in wall},
    }


def _main(argv: Sequence[str]) -> int:
    print(json.dumps(measure_in_turn(*json.loads(argv[0])["turns"])), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
