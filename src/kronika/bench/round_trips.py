"""Waits for the database per call in team mode, and what they cost when it is not on
the same machine: ``kronika bench round-trips``.

A fresh tenant on PostgreSQL gets ``turns`` turns of synthetic chat (imported) and a
few dozen keyed facts; then, one call at a time: ``remember()`` of a new keyed fact,
``save_turn()`` into a live session, ``recall()`` of a question, ``recall()`` of
words no item holds (a question asked in other words than the memory's), and
``remember_many()`` of :data:`BATCH` facts. Embedding is excluded
(:class:`~kronika.bench.fixed.FixedVectors`).

Every connection goes through a :class:`~kronika.testing.roundtrips.RoundTripProxy`
run by this process, the calls by a process of their own (so the proxy never waits
for their Python), which asks this one to set the proxy and to read its count:

* **round trips**: answers held 20 ms, the count of times the client sent again after
  an answer reached it, per call (median of ``counted`` calls);
* **ms per call**: median wall time of ``calls`` calls with answers passed on at once
  and as many with them held ``delay_ms`` (a database that far away, both ways
  together), in blocks of :data:`BLOCK` in turn.

``--before PATH`` measures the kronika found under ``PATH`` (a ``src`` folder) the same
way in the same run; the measuring process uses kronika's public API only.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, Any

BATCH = 10
"""Facts a ``remember_many()`` call is given."""
CALLS = ("remember", "save_turn", "recall", "recall_unheld", "remember_many")
LABELS = {
    "recall_unheld": "recall, words no item holds",
    "remember_many": f"remember_many({BATCH})",
}
"""The table's name of a call, where it is not the call's own."""
WARM = 8
"""Calls of each kind made first, untimed (statements prepared, files read once)."""
BLOCK = 5
"""Rounds of calls timed with the server near, then as many away, in turn."""


# -- the measuring process (kronika's public API only: it may be an older kronika) ---


def _ask(reply: IO[str], request: dict[str, Any]) -> Any:
    """A request to the process that runs the proxy; its answer."""
    print(json.dumps(request), flush=True)
    return json.loads(reply.readline())


def measure(url: str, turns: int, calls: int, counted: int, delay_ms: float) -> dict[str, Any]:
    """The calls of :data:`CALLS` on the empty database at ``url`` (through the proxy),
    counted and timed as the module says; run by this file as a script."""
    import kronika
    from kronika import build_memory, load_settings
    from kronika.bench.fixed import FixedVectors
    from kronika.testing import conversation

    reply = sys.stdin
    start = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)
    words = "garden tomatoes ferry bridge kettle violin mortgage dentist marathon sourdough"
    vocabulary = words.split()
    unheld = ("quokka", "zanzibar", "wombat", "tundra", "saxophone", "glacier", "origami")
    with tempfile.TemporaryDirectory(prefix="kronika-round-trips-") as tmp:
        settings = load_settings(Path(tmp) / "home", environ={}, database_url=url)
        with build_memory(settings, create=True, embedder=FixedVectors()) as memory:
            _ask(reply, {"hold_ms": 0.0})
            sessions = [
                conversation(
                    f"s{s}",
                    start + timedelta(days=s),
                    [
                        (str(t), "user" if t % 2 else "assistant", _sentence(s * 100 + t))
                        for t in range(min(100, turns - s * 100))
                    ],
                )
                for s in range(max(1, (turns + 99) // 100))
            ]
            memory.import_sessions(settings.default_agent, sessions)
            made = [0]

            def call(kind: str) -> None:
                n = made[0] = made[0] + 1
                word = vocabulary[n % len(vocabulary)]
                if kind == "remember":
                    memory.remember(f"the {word} plan number {n}", key=f"plan_{n}")
                elif kind == "save_turn":
                    memory.save_turn("live", "user", f"what about the {word}, take {n}?")
                elif kind == "recall":
                    memory.recall(f"what did we say about the {word}?", k=10)
                elif kind == "recall_unheld":
                    odd = unheld[n % len(unheld)]
                    memory.recall(f"{odd} {unheld[(n + 4) % len(unheld)]}", k=10)
                else:
                    memory.remember_many(
                        [{"key": f"many_{n}_{m}", "value": f"{word} {m}"} for m in range(BATCH)]
                    )

            for _ in range(WARM):
                for kind in CALLS:
                    call(kind)
            waits: dict[str, list[int]] = {kind: [] for kind in CALLS}
            _ask(reply, {"hold_ms": None})  # held to count
            for _ in range(counted):
                for kind in CALLS:
                    before = _ask(reply, {"count": True})
                    call(kind)
                    waits[kind].append(_ask(reply, {"count": True}) - before)
            # near and away in turn, a block of each, so both meet a memory of one size
            spent: dict[str, dict[str, list[float]]] = {
                label: {kind: [] for kind in CALLS} for label in ("near", "away")
            }
            for block in range(0, calls, BLOCK):
                for label, hold in (("near", 0.0), ("away", delay_ms)):
                    _ask(reply, {"hold_ms": hold})
                    for _ in range(min(BLOCK, calls - block)):
                        for kind in CALLS:
                            began = time.perf_counter()
                            call(kind)
                            spent[label][kind].append(time.perf_counter() - began)
            timed = {
                label: {k: 1000 * statistics.median(v) for k, v in by_kind.items()}
                for label, by_kind in spent.items()
            }
    return {
        "kronika": str(Path(kronika.__file__).parent),
        "waits": {k: statistics.median(v) for k, v in waits.items()},
        "waits_all": waits,
        "ms_near": timed["near"],
        "ms_away": timed["away"],
    }


def _sentence(n: int) -> str:
    things = ("the garden", "a ferry", "the old bridge", "my violin", "the dentist")
    doings = ("needs water", "leaves at nine", "is closed", "sounds better", "moved")
    return f"{things[n % 5]} {doings[(n // 5) % 5]} ({n})"


# -- the run ----------------------------------------------------------------------


def _serve(proc: subprocess.Popen[str], proxy: Any, counting_hold_s: float) -> dict[str, Any]:
    """Answer the measuring process's requests until it prints its result."""
    assert proc.stdout is not None and proc.stdin is not None
    for line in proc.stdout:
        asked = json.loads(line)
        if "hold_ms" in asked:
            hold = asked["hold_ms"]
            proxy.hold_s = counting_hold_s if hold is None else hold / 1000
            time.sleep(2 * counting_hold_s)  # answers on their way are let through
            answer: Any = True
        elif "count" in asked:
            answer = proxy.count
        else:
            return dict(asked)
        proc.stdin.write(json.dumps(answer) + "\n")
        proc.stdin.flush()
    raise RuntimeError("the measuring process ended without a result")


def run_round_trips(
    *,
    index: str | None = None,
    turns: int = 2_000,
    calls: int = 20,
    counted: int = 5,
    delay_ms: float = 1.0,
    before: str | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> dict[str, Any]:
    """Count and time the calls of :data:`CALLS` in team mode (``index``:
    ``postgres`` or ``postgres=URL``), with the tree at ``before`` too."""
    from kronika import InvalidInput, KronikaError
    from kronika.bench.postgres import PostgresSite, parse_index
    from kronika.bench.team_writes import _RUN, own_src
    from kronika.testing import COUNTING_HOLD_S, RoundTripProxy

    kind, url = parse_index(index or "postgres")
    if kind != "postgres":
        raise InvalidInput("round-trips measures team mode: --index postgres[=URL]")
    trees = [("after", own_src())] + ([("before", before)] if before else [])
    rows: list[dict[str, Any]] = []
    site = PostgresSite(url)
    try:
        for n, (label, src) in enumerate(trees):
            if progress:
                progress(f"round trips ({label})", n, len(trees))
            with site.database() as db, RoundTripProxy(db, hold_s=0.0) as proxy:
                job = [proxy.url, turns, calls, counted, delay_ms]
                env = {k: v for k, v in os.environ.items() if not k.startswith("KRONIKA_")}
                proc = subprocess.Popen(
                    [sys.executable, "-c", _RUN, __file__, json.dumps(job)],
                    env={**env, "PYTHONPATH": src},
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
                try:
                    row = _serve(proc, proxy, COUNTING_HOLD_S)
                finally:
                    _, err = proc.communicate(timeout=600)
                if proc.returncode != 0:
                    raise KronikaError(f"a benchmark process failed: {err.strip()[-2000:]}")
                rows.append({"tree": label, **row})
    finally:
        site.close()
    return _results(rows, turns=turns, calls=calls, counted=counted, delay_ms=delay_ms)


def _results(
    rows: Sequence[dict[str, Any]], *, turns: int, calls: int, counted: int, delay_ms: float
) -> dict[str, Any]:
    from kronika.bench.fixed import FixedVectors
    from kronika.bench.report import table

    order = sorted(rows, key=lambda r: r["tree"] != "before")
    return {
        "benchmark": "round-trips",
        "dataset": f"synthetic chat, {turns:,} turns, keyed facts",
        "embedder": FixedVectors.model_id,
        "settings": {"turns": turns, "calls": calls, "counted": counted, "delay_ms": delay_ms},
        "rows": list(rows),
        "headline": {
            f"{what}_{kind}_{r['tree']}": value
            for r in rows
            for what, kind, value in [
                *(("waits", k, r["waits"][k]) for k in CALLS),
                *(("ms_away", k, r["ms_away"][k]) for k in CALLS),
            ]
        },
        "tables": [
            table(
                f"Waits for PostgreSQL per call (median of {counted}), and ms per call (median"
                f" of {calls}) with the server on this machine and {delay_ms:g} ms away",
                [
                    "call",
                    "code",
                    "round trips",
                    "ms, same machine",
                    f"ms, {delay_ms:g} ms away",
                    "added by the distance, ms",
                ],
                [
                    [
                        LABELS.get(kind, kind),
                        r["tree"],
                        f"{r['waits'][kind]:g}",
                        f"{r['ms_near'][kind]:.2f}",
                        f"{r['ms_away'][kind]:.2f}",
                        f"{r['ms_away'][kind] - r['ms_near'][kind]:.2f}",
                    ]
                    for kind in CALLS
                    for r in order
                ],
            )
        ],
    }


def _main(argv: Sequence[str]) -> int:
    print(json.dumps(measure(*json.loads(argv[0]))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
