"""How fast an open memory notices edits to its Markdown: ``kronika bench hand-edits``.

An open memory (a server, a chat) checks the Markdown for edits before a read, at most
once per ``sync_interval`` (:doc:`workspace.md#hand-edits`). For each size N (10 and
3,000 chats by default) a fresh local workspace gets one agent, N short chats of four
turns (imported: setup, not timed) and 20 facts, and is opened with ``sync_interval``
0, so that every read checks. Then ``calls`` rounds (or as many as ``budget_s`` allows)
time, one call at a time:

* **quiet sync**: ``Memory.sync(agent)`` when nothing changed;
* **recall, nothing changed**: a ``recall()`` and the check before it;
* **recall after a remember**: ``remember()`` of a new value (not timed), then a
  ``recall()``: the check sees the files the write changed;
* **recall after a hand edit**: a line appended to a daily log as an editor would
  (not timed), then a ``recall()`` of the word that line alone holds; the round counts
  as *found* when the line is the recall's first result.

Embedding is excluded (:class:`~kronika.bench.fixed.FixedVectors`).

``--before PATH`` measures the same with the kronika under ``PATH`` (a ``src`` folder of
another checkout) in the same run: each size with one tree, then the other, the first
alternating from size to size and round to round. Each measurement is a process of its
own using only kronika's public API, so it runs unchanged against an older kronika.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

CALLS = ("quiet_sync", "recall_quiet", "recall_after_remember", "recall_after_edit")
"""The timed calls of a round, in order (:func:`measure_size`)."""
LABELS = {
    "quiet_sync": "quiet sync",
    "recall_quiet": "recall, nothing changed",
    "recall_after_remember": "recall after a remember",
    "recall_after_edit": "recall after a hand edit",
}
TURNS = 4
"""Turns in each chat."""
FACTS = 20
"""Facts stored beside the chats."""
LOG = "memory/2025-01-02.md"
"""The daily log the hand edits append to (made before the timed rounds)."""


def _chats(count: int) -> list[Any]:
    from kronika.testing import conversation

    at = datetime(2025, 1, 1, tzinfo=UTC)
    return [
        conversation(
            f"chat-{s}",
            at,
            [
                (
                    f"c{s}-{t}",
                    "user" if t % 2 == 0 else "assistant",
                    f"chat {s} turn {t}: the parcel for topic {(s * 7 + t) % 53} comes on day"
                    f" {(s * 3 + t) % 31}",
                )
                for t in range(TURNS)
            ],
        )
        for s in range(count)
    ]


def measure_size(chats: int, calls: int, budget_s: float) -> dict[str, Any]:
    """One size on a fresh local workspace (see the module docstring), with the kronika
    found on ``sys.path``."""
    import kronika
    from kronika import Settings, build_memory
    from kronika.bench.fixed import FixedVectors

    spent: dict[str, list[float]] = {name: [] for name in CALLS}
    found = 0
    with tempfile.TemporaryDirectory(prefix="kronika-hand-edits-") as tmp:
        home = Path(tmp) / "home"
        settings = Settings().with_overrides(home=home, sync_interval=0.0)
        with build_memory(settings, create=True, embedder=FixedVectors()) as memory:
            memory.create_agent("bench")
            if chats:
                memory.import_sessions("bench", _chats(chats))
            for n in range(FACTS):
                memory.remember(
                    f"stored fact {n}: shelf {n * 13 % 97}", key=f"fact_{n}", agent="bench"
                )
            log = home / "agents" / "bench" / LOG
            log.parent.mkdir(parents=True, exist_ok=True)
            log.write_text("# 2025-01-02\n\n## Notes\n- a plain note to start\n", encoding="utf-8")
            memory.sync("bench")
            memory.recall("the first recall of this process", agent="bench")

            def timed(name: str, call: Callable[..., Any], *args: Any) -> Any:
                began = time.perf_counter()
                answer = call(*args, agent="bench")
                spent[name].append(time.perf_counter() - began)
                return answer

            began = time.perf_counter()
            for n in range(calls):
                timed("quiet_sync", memory.sync)
                timed("recall_quiet", memory.recall, f"topic {n % 53}")
                memory.remember(f"kept value {n}", key=f"kept_{n % 5}", agent="bench")
                timed("recall_after_remember", memory.recall, f"day {n % 31}")
                word = f"quokka{n}x"
                with log.open("a", encoding="utf-8") as out:
                    out.write(f"- a hand-written note about {word}\n")
                got = timed("recall_after_edit", memory.recall, word)
                found += bool(got.hits) and word in got.hits[0].item.content
                if time.perf_counter() - began > budget_s and n >= 2:
                    break
    rounds = len(spent["recall_after_edit"])
    return {
        "chats": chats,
        "turns": chats * TURNS,
        "rounds": rounds,
        "found": found,
        "kronika": str(Path(kronika.__file__).parent),
        **{f"{name}_ms": 1000 * statistics.median(spent[name]) for name in CALLS},
    }


def run_hand_edits(
    sizes: Sequence[int] = (10, 3_000),
    *,
    calls: int = 30,
    budget_s: float = 60.0,
    before: str | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> dict[str, Any]:
    """Every size, with this kronika and (``before``) the one at that path, each a
    process of its own; the results with their tables."""
    from kronika.bench.team_writes import alternating, collect, own_src, spawn

    trees = [("this", own_src())] + ([("before", before)] if before else [])
    rows: list[dict[str, Any]] = []
    for turn, size in enumerate(sizes):
        if progress:
            progress(f"hand edits beside {size:,} chats", turn, len(sizes))
        for label, src in alternating(trees, turn):
            job = {"chats": size, "calls": calls, "budget_s": budget_s}
            rows.append({"tree": label, **collect(spawn(src, job, __file__))})
    if progress:
        progress("hand edits", len(sizes), len(sizes))
    return results_of(rows, calls)


def results_of(rows: Sequence[dict[str, Any]], calls: int) -> dict[str, Any]:
    """The report of :func:`run_hand_edits`'s ``rows``."""
    from kronika.bench.fixed import FixedVectors
    from kronika.bench.report import table

    order = sorted(rows, key=lambda r: (r["chats"], r["tree"] != "before"))
    return {
        "benchmark": "hand-edits",
        "dataset": f"synthetic chats of {TURNS} turns and {FACTS} facts",
        "embedder": FixedVectors.model_id,
        "settings": {"sync_interval": 0.0, "calls": calls},
        "rows": list(rows),
        "headline": {
            f"{name}_ms@{r['chats']}_{r['tree']}": r[f"{name}_ms"] for r in rows for name in CALLS
        },
        "tables": [
            table(
                "An open memory checking for edits before every read (sync_interval 0),"
                f" embedding excluded; median ms of up to {calls} rounds",
                [
                    "chats stored",
                    "code",
                    *(LABELS[name] for name in CALLS),
                    "hand edits found first",
                ],
                [
                    [
                        f"{r['chats']:,}",
                        r["tree"],
                        *(f"{r[f'{name}_ms']:.2f}" for name in CALLS),
                        f"{r['found']} of {r['rounds']}",
                    ]
                    for r in order
                ],
            )
        ],
    }


def _main(argv: Sequence[str]) -> int:
    job = json.loads(argv[0])
    print(json.dumps(measure_size(job["chats"], job["calls"], job["budget_s"])), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
