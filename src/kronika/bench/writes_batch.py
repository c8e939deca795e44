"""``kronika bench writes --before PATH``: ``remember_many`` of the kronika at ``PATH``
(a ``src`` folder) beside this one's and beside the SQLite floor's batch, in one run.

Each round times, at each size, a fresh process of each tree, then the floor: the
same setup as ``bench writes`` (``size`` facts written to ``brain_archive.md`` and
synced, the process's first ``remember()``, then ``calls`` more), then one
``remember_many`` of ``batch`` new keyed facts, its wall time and the process's CPU
time. Rounds interleave the trees, the first of the two alternating from round to
round, so a change in the machine's load falls on both; ratios are taken within a
round.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any


def batch_job(size: int, calls: int, batch: int) -> dict[str, Any]:
    """One tree's ``remember_many`` at ``size`` (run in a process of that tree: only
    what older kronikas have too is used)."""
    from kronika import Settings, build_memory
    from kronika.bench.fixed import FixedVectors
    from kronika.bench.writes import _stored_facts
    from kronika.testing import archive_document

    now = datetime(2025, 1, 1, tzinfo=UTC)
    with tempfile.TemporaryDirectory(prefix="kronika-batch-") as tmp:
        home = Path(tmp) / "home"
        settings = Settings().with_overrides(home=home)
        with build_memory(settings, create=True, embedder=FixedVectors()) as memory:
            memory.create_agent("bench")
            archive = home / "agents" / "bench" / "brain_archive.md"
            archive.write_text(archive_document(_stored_facts(size, now)), encoding="utf-8")
            memory.sync("bench")
            memory.remember("the first fact of this process", key="first_call", agent="bench")
            for n in range(calls):
                memory.remember(f"new fact {n}: {n * 7919 % 10007}", key=f"new_{n}", agent="bench")
            many = [
                {"key": f"many_{n}", "value": f"batch fact {n}: {n * 7919 % 10007}"}
                for n in range(batch)
            ]
            began, cpu_at = time.perf_counter(), time.process_time()
            memory.remember_many(many, agent="bench")
            wall, cpu = time.perf_counter() - began, time.process_time() - cpu_at
    return {"size": size, "per_s": batch / wall, "cpu_per_s": batch / cpu if cpu else 0.0}


def side_by_side(
    sizes: Sequence[int],
    before: str,
    *,
    calls: int,
    budget_s: float,
    batch: int,
    rounds: int = 3,
    progress: Callable[[str, int, int], None] | None = None,
) -> list[dict[str, Any]]:
    """``rounds`` rounds of: at each size, the tree at ``before`` and this tree (the one,
    then the other, in turn), the floor (see the module docstring); a row per round and
    size."""
    from kronika.bench.team_writes import alternating, collect, own_src, spawn
    from kronika.bench.writes import _floor_size

    rows: list[dict[str, Any]] = []
    for n in range(rounds):
        for size in sizes:
            if progress:
                progress(f"remember_many before/after @{size:,}", n, rounds)
            got = {
                label: collect(spawn(src, {"size": size, "calls": calls, "batch": batch}, __file__))
                for label, src in alternating((("before", before), ("after", own_src())), n)
            }
            floor = _floor_size(size, calls, budget_s, batch)
            rows.append(
                {
                    "round": n + 1,
                    "size": size,
                    "before_per_s": got["before"]["per_s"],
                    "after_per_s": got["after"]["per_s"],
                    "before_cpu_per_s": got["before"]["cpu_per_s"],
                    "after_cpu_per_s": got["after"]["cpu_per_s"],
                    "floor_per_s": floor["batch_items_per_s"],
                    "floor_cpu_per_s": floor["batch_cpu_items_per_s"],
                }
            )
    return rows


def add_side_by_side(results: dict[str, Any], rows: list[dict[str, Any]], batch: int) -> None:
    """Add :func:`side_by_side`'s ``rows`` and their table to ``bench writes``'
    ``results``."""
    from kronika.bench.report import table

    results["remember_many_before"] = rows
    results.setdefault("tables", []).append(side_by_side_table(rows, batch, table))


def side_by_side_table(
    rows: list[dict[str, Any]],
    batch: int,
    table: Callable[[str, list[str], list[list[str]]], dict[str, Any]],
) -> dict[str, Any]:
    def ratio(value: float, floor: float) -> str:
        return f"{value / floor:.3f}×" if floor else "-"

    return table(
        f"remember_many({batch:,}): the code at --before beside this code and the floor's"
        " batch (rounds interleaved; a fresh process each)",
        [
            "stored",
            "round",
            "before items/s",
            "after items/s",
            "floor items/s",
            "after vs floor",
            "before items/CPU-s",
            "after items/CPU-s",
            "floor items/CPU-s",
            "after vs floor (CPU)",
        ],
        [
            [
                f"{r['size']:,}",
                str(r["round"]),
                f"{r['before_per_s']:,.0f}",
                f"{r['after_per_s']:,.0f}",
                f"{r['floor_per_s']:,.0f}",
                ratio(r["after_per_s"], r["floor_per_s"]),
                f"{r['before_cpu_per_s']:,.0f}",
                f"{r['after_cpu_per_s']:,.0f}",
                f"{r['floor_cpu_per_s']:,.0f}",
                ratio(r["after_cpu_per_s"], r["floor_cpu_per_s"]),
            ]
            for r in rows
        ],
    )


if __name__ == "__main__":
    job = json.loads(sys.argv[1])
    print(json.dumps(batch_job(int(job["size"]), int(job["calls"]), int(job["batch"]))))
