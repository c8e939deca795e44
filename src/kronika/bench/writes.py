"""Write speed as memory grows, with a naive store beside kronika in the same run.

For each size N a fresh workspace is given N stored facts (written to
``brain_archive.md`` directly and indexed: setup, not measured). Then, one call at a
time and each durable when it returns:

* ``remember()`` of new keyed facts, ``calls`` of them or as many as ``budget_s``
  seconds allow, whichever comes first (a slow write path must not take hours);
* ``remember()`` of a new value for the key of a stored (archived) fact, which moves
  it to the history, and of a stored fact's own value again, which refreshes it where
  it stands: as many calls, each on another stored fact;
* ``forget()`` of another stored fact, as many calls (its bullet taken out, its words
  redacted in every file of the agent, its rows gone from the index);
* ``forget()`` of a key beside a long history: N earlier values of N /
  :data:`VALUES_PER_KEY` keys added to ``history.md`` at once (setup), each key's values
  spread over the whole file; each call forgets another key, its values taken out of
  the history and redacted everywhere;
* ``save_turn()`` into a session that already holds N turns (capped at 1,000), as
  many calls;
* ``forget()`` of the turns ``save_turn()`` wrote, one per call, once the batch of
  ``save_turns`` followed them and N more turns were imported in other sessions (the
  turn's line taken out of its session, its words redacted in every file of the
  agent, the index updated);
* ``forget()`` of notes written before the audit trail was given an entry for each
  stored fact (N, capped at :data:`TRAIL_CAP`, by one ``remember_many``), as many calls
  (the note's words redacted in every file of the agent and every entry of the trail);
* the batch paths: ``remember_many`` of ``batch`` new keyed facts in one call,
  ``save_turns`` of ``batch`` turns into that session in one call (turns per second,
  beside ``save_turn()`` one per call), and ``import_sessions`` of N turns in one call.

The naive floor (:func:`~kronika.bench.floors.sqlite_floor`) does the same writes, on
the same stored texts, into one SQLite file holding an FTS5 table and a vectors table
(``synchronous=FULL``, one transaction per call, and one for the batch of ``batch``
texts ``remember_many`` is given): what any store pays for durable text + vector
writes, and nothing more. The tables give kronika/floor for ``remember()`` against
the floor's single writes and for ``remember_many`` against its batch.

End to end, with the configured embedder (the default one unless set) and its model
in memory, ``remember()`` one per call and ``remember_many`` of ``batch`` facts are
timed on a fresh workspace, beside the embedder alone embedding the same number of
texts one at a time and in one batch: what embedding by itself allows.

Embedding is excluded for everyone else: :class:`FixedVectors` gives each text a vector
made from its hash (a few microseconds), so kronika and the floor pay the same.
Cold command-line start is timed as fresh processes (``kronika <command>`` against a
workspace of the smallest size), median of ``cli_repeats``; it includes the model
load, as a user's command does.

The machine is shared and noisy: rates are per-call medians turned into calls/s, and
the floor is measured in the same run so ratios hold even when absolute times drift.
A second table gives the CPU time the same writes took in this process (SQLite's and
the sync threads' included), which waiting for other programs' work inflates less.
"""

from __future__ import annotations

import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from kronika import MemoryItem, Provenance, Settings, Status
from kronika.bench._runtime import Progress, settings_summary, timed_calls
from kronika.bench.fixed import FixedVectors, long_session
from kronika.bench.floors import sqlite_floor
from kronika.bench.report import table
from kronika.bench.scale import synthetic_sentence, synthetic_sessions
from kronika.bench.turns import concurrency_table, save_turn_concurrency
from kronika.testing import archived_fact, history_document

SESSION_CAP = 1_000
TRAIL_CAP = 20_000
"""Audit entries the trail holds, at most, when a note is forgotten beside it."""
VALUES_PER_KEY = 20
"""Earlier values each key of the long history has (a key forgotten takes them all)."""
CLI_COMMANDS: tuple[tuple[str, ...], ...] = (
    ("remember", "--key", "bench_city", "Kraków"),
    ("list", "--limit", "5"),
    ("show", "brain"),
    ("history", "bench_city"),
    ("forget", "--key", "bench_city"),
    ("recall", "what did Ada repair?", "--limit", "5"),
)


def _rate(seconds: list[float]) -> float:
    """Calls per second from per-call times: 1 / median."""
    return 1.0 / statistics.median(seconds) if seconds else 0.0


def _ratio(kronika: float, floor: float) -> str:
    """kronika's rate as a share of the floor's (``-`` when the floor has none)."""
    return f"{kronika / floor:.3f}×" if floor else "-"


def _stored_facts(size: int, now: datetime) -> list[MemoryItem]:
    rng = random.Random(size)
    facts = []
    for n in range(size):
        value = synthetic_sentence(rng)
        at = now - timedelta(minutes=size - n)
        facts.append(archived_fact(f"fact_{n}", value, at, id=f"f-bench{n:08d}", agent="bench"))
    return facts


def _history_values(size: int, now: datetime) -> tuple[int, list[MemoryItem]]:
    """``size`` earlier values of ``size // VALUES_PER_KEY`` keys (``hist_0``…), each
    key's values one after another in time and spread over the whole history, as the
    history holds them; and the number of keys."""
    keys = max(1, size // VALUES_PER_KEY)
    rng = random.Random(size + 2)
    values = []
    for n in range(size):
        at = now - timedelta(minutes=2 * (size - n))
        fact = archived_fact(
            f"hist_{n % keys}", synthetic_sentence(rng), at, id=f"f-hist{n:08d}", agent="bench"
        )
        later = f"f-hist{n + keys:08d}" if n + keys < size else None
        values.append(
            replace(
                fact,
                provenance=Provenance("history.md"),  # docs/workspace.md
                status=Status.SUPERSEDED,
                valid_to=at + timedelta(minutes=1),
                superseded_by=later,
            )
        )
    return keys, values


def _kronika_size(
    size: int,
    calls: int,
    budget_s: float,
    settings: Settings,
    progress: Progress | None,
    batch: int = 1_000,
) -> dict[str, Any]:
    from kronika import build_memory
    from kronika.testing import archive_document

    now = datetime(2025, 1, 1, tzinfo=UTC)
    with tempfile.TemporaryDirectory(prefix="kronika-writes-") as tmp:
        home = Path(tmp) / "home"
        used = settings.with_overrides(home=home)
        with build_memory(used, create=True, embedder=FixedVectors()) as memory:
            memory.create_agent("bench")
            archive = home / "agents" / "bench" / "brain_archive.md"  # docs/workspace.md
            # the facts all in one section, written at once (remembering them inserts
            # one by one, a cost that grows with the square of the size)
            stored = _stored_facts(size, now)
            archive.write_text(archive_document(stored), encoding="utf-8")
            setup = time.perf_counter()
            memory.sync("bench")
            setup_s = time.perf_counter() - setup
            if progress:
                progress(f"remember @{size:,}", 0, calls)
            rng_sentences = [f"new fact {n}: {n * 7919 % 10007}" for n in range(calls)]
            # the first call of a process builds the archive's lookups (by key, concept
            # and form of every archived fact): a cost once per process, shown apart
            began = time.perf_counter()
            memory.remember("the first fact of this process", key="first_call", agent="bench")
            first_s = time.perf_counter() - began
            cpu: list[float] = []
            remember = timed_calls(
                lambda n: memory.remember(rng_sentences[n], key=f"new_{n}", agent="bench"),
                calls,
                budget_s,
                cpu,
            )
            # a fact of the archive given a new value (it leaves the archive for the
            # history), and another said again as stored (refreshed where it stands)
            picked = random.Random(size).sample(stored, min(len(stored), 2 * calls))
            changed = timed_calls(
                lambda n: memory.remember(f"changed {n}", key=picked[2 * n].key, agent="bench"),
                min(calls, len(picked) // 2),
                budget_s,
            )
            refreshed = timed_calls(
                lambda n: memory.remember(
                    picked[2 * n + 1].value or "", key=picked[2 * n + 1].key, agent="bench"
                ),
                min(calls, len(picked) // 2),
                budget_s,
            )
            # a fact of the archive forgotten: its bullet taken out, the words it held
            # redacted in every file of the agent, its rows gone from the index
            others = [fact for fact in stored if fact not in picked]
            gone = random.Random(size + 1).sample(others, min(len(others), calls))
            forgotten = timed_calls(
                lambda n: memory.forget(gone[n].id, agent="bench"), len(gone), budget_s
            )
            # a key forgotten beside a long history: `size` earlier values added to the
            # history at once (setup, not measured), a key's values spread all over it;
            # each forget takes one key's values out and redacts them everywhere
            keys, values = _history_values(size, now)
            history = home / "agents" / "bench" / "history.md"  # docs/workspace.md
            held = history.read_text(encoding="utf-8") if history.exists() else None
            history.write_text(history_document(values, after=held), encoding="utf-8")
            memory.sync("bench")
            if progress:
                progress(f"forget a key @{size:,} earlier values", 0, min(calls, keys))
            key_cpu: list[float] = []
            keys_forgotten = timed_calls(
                lambda n: memory.forget(key=f"hist_{n}", agent="bench"),
                min(calls, keys),
                budget_s,
                key_cpu,
            )
            if progress:
                progress(f"remember_many @{size:,}", 0, 1)
            many = [
                {"key": f"many_{n}", "value": f"batch fact {n}: {n * 7919 % 10007}"}
                for n in range(batch)
            ]
            began, cpu_at = time.perf_counter(), time.process_time()
            memory.remember_many(many, agent="bench")
            many_s = time.perf_counter() - began
            many_cpu = time.process_time() - cpu_at
            length = min(size, SESSION_CAP)
            session = f"bench-{length}"
            memory.import_sessions("bench", [long_session(session, length, size)])
            if progress:
                progress(f"save_turn @{length:,} turns", 0, calls)
            turn_cpu: list[float] = []
            saved: list[str] = []
            turns = timed_calls(
                lambda n: saved.append(
                    memory.save_turn(session, "user", f"turn {n} of the bench", agent="bench")
                ),
                calls,
                budget_s,
                turn_cpu,
            )
            if progress:
                progress(f"save_turns @{length:,} turns", 0, 1)
            said = [("user", f"batched turn {n} of the bench") for n in range(batch)]
            began, cpu_at = time.perf_counter(), time.process_time()
            memory.save_turns(session, said, agent="bench")
            turns_s = time.perf_counter() - began
            turns_cpu = time.process_time() - cpu_at
            if progress:
                progress(f"import {size:,}", 0, 1)
            # made before the clock starts: the import's time is kronika's alone
            sessions = list(synthetic_sessions(size, seed=size + 1))
            began, cpu_at = time.perf_counter(), time.process_time()
            report = memory.import_sessions("bench", sessions)
            batch_s = time.perf_counter() - began
            batch_cpu = time.process_time() - cpu_at
            # a turn of the long session forgotten, the imported sessions beside it: its
            # line taken out, its words redacted in every file of the agent
            if progress:
                progress(f"forget a turn @{length:,} turns", 0, len(saved))
            forget_cpu: list[float] = []
            turns_forgotten = timed_calls(
                lambda n: memory.forget(saved[n], agent="bench"), len(saved), budget_s, forget_cpu
            )
            # a note forgotten once the audit trail holds an entry for each stored fact
            # (capped), as a memory that was written fact by fact has: its words redacted
            # in every file of the agent and in every entry of the trail
            trail = min(size, TRAIL_CAP)
            errands = [
                memory.note(f"errand {n}: collect parcel {n * 7919 % 10007}", agent="bench")
                for n in range(calls)
            ]
            notes = [receipt.item.id for receipt in errands if receipt.item is not None]
            if progress:
                progress(f"forget a note @{trail:,} audit entries", 0, len(notes))
            memory.remember_many(
                [{"key": f"trail_{n}", "value": f"audited fact {n}"} for n in range(trail)],
                agent="bench",
            )
            trail_cpu: list[float] = []
            trail_forgotten = timed_calls(
                lambda n: memory.forget(notes[n], agent="bench"), len(notes), budget_s, trail_cpu
            )
    return {
        "size": size,
        "setup_s": setup_s,
        "remember_per_s": _rate(remember),
        "remember_calls": len(remember),
        "remember_p95_ms": 1000 * float(np.percentile(remember, 95)),
        "remember_cpu_ms": 1000 * cpu[0] / len(remember),
        "remember_mean_ms": 1000 * statistics.fmean(remember),
        "first_remember_s": first_s,
        "archived_change_per_s": _rate(changed),
        "archived_refresh_per_s": _rate(refreshed),
        "archived_forget_per_s": _rate(forgotten),
        "history_values": len(values),
        "key_forget_per_s": _rate(keys_forgotten),
        "key_forget_calls": len(keys_forgotten),
        "key_forget_cpu_ms": 1000 * key_cpu[0] / len(keys_forgotten),
        "remember_many_cpu_per_s": batch / many_cpu if many_cpu else 0.0,
        "import_cpu_items_per_s": report.turns / batch_cpu if batch_cpu else 0.0,
        "remember_many_per_s": batch / many_s if many_s else 0.0,
        "remember_many_batch": batch,
        "save_turn_per_s": _rate(turns),
        "save_turn_cpu_ms": 1000 * turn_cpu[0] / len(turns),
        "save_turn_calls": len(turns),
        "save_turn_loop_per_s": len(turns) / sum(turns),
        "save_turns_per_s": batch / turns_s if turns_s else 0.0,
        "save_turns_cpu_per_s": batch / turns_cpu if turns_cpu else 0.0,
        "save_turns_batch": batch,
        "session_turns": length,
        "turn_forget_per_s": _rate(turns_forgotten),
        "turn_forget_calls": len(turns_forgotten),
        "turn_forget_cpu_ms": 1000 * forget_cpu[0] / len(turns_forgotten),
        "import_items_per_s": report.turns / batch_s if batch_s else 0.0,
        "trail_entries": trail,
        "trail_forget_per_s": _rate(trail_forgotten),
        "trail_forget_cpu_ms": 1000 * trail_cpu[0] / len(trail_forgotten),
        "settings": settings_summary(used),
    }


def _floor_size(size: int, calls: int, budget_s: float, batch: int) -> dict[str, Any]:
    """The SQLite floor (:func:`~kronika.bench.floors.sqlite_floor`) at ``size``: the
    same stored texts, ``calls`` single writes of the texts ``remember()`` is given, and
    one batch of the ``batch`` texts ``remember_many`` is given."""
    now = datetime(2025, 1, 1, tzinfo=UTC)
    stored = [fact.content for fact in _stored_facts(size, now)]
    new = [f"new fact {n}: {n * 7919 % 10007}" for n in range(calls)]
    many = [f"batch fact {n}: {n * 7919 % 10007}" for n in range(batch)]
    with tempfile.TemporaryDirectory(prefix="kronika-floor-") as tmp:
        return sqlite_floor(Path(tmp), stored, new, many, budget_s=budget_s)


def _cold_cli(settings: Settings, repeats: int) -> list[dict[str, Any]]:
    """Median wall time of each command as a fresh process on a small workspace."""
    from kronika import build_memory

    rows = []
    with tempfile.TemporaryDirectory(prefix="kronika-cli-") as tmp:
        home = Path(tmp) / "home"
        with build_memory(settings.with_overrides(home=home), create=True) as memory:
            memory.remember("Warszawa", key="bench_city")
        env = {**os.environ, "KRONIKA_HOME": str(home)}
        for command in CLI_COMMANDS:
            spent = []
            for _ in range(repeats):
                began = time.perf_counter()
                subprocess.run(
                    [sys.executable, "-m", "kronika", *command],
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    check=False,
                )
                spent.append(time.perf_counter() - began)
            rows.append({"command": " ".join(command[:2]), "median_s": statistics.median(spent)})
    return rows


def _end_to_end(settings: Settings, calls: int, batch: int, budget_s: float) -> dict[str, Any]:
    """Writes with the configured embedder, its model loaded (a recall first), so each
    call makes its vectors before it returns; and the embedder alone, timed the same
    way, for what embedding by itself allows."""
    from kronika import build_memory

    with tempfile.TemporaryDirectory(prefix="kronika-e2e-") as tmp:
        used = settings.with_overrides(home=Path(tmp) / "home")
        with build_memory(used, create=True) as memory:
            memory.recall("what does the user drink?", k=1)  # the model in memory
            probes = [f"a probe of the embedder, {n}: tea kind {n * 7}" for n in range(calls)]
            texts = [f"end to end fact {n}: tea kind {n * 7919 % 10007}" for n in range(calls)]
            embed_one = timed_calls(
                lambda n: memory.embedder.embed_documents([probes[n]]), calls, budget_s
            )
            began = time.perf_counter()
            memory.embedder.embed_documents([f"batch text {n}: tea kind {n}" for n in range(batch)])
            embed_batch_s = time.perf_counter() - began
            one = timed_calls(lambda n: memory.remember(texts[n], key=f"e2e_{n}"), calls, budget_s)
            many = [
                {"key": f"e2e_many_{n}", "value": f"end to end batch fact {n}: tea {n * 31}"}
                for n in range(batch)
            ]
            began = time.perf_counter()
            memory.remember_many(many)
            many_s = time.perf_counter() - began
            model = memory.embedder.model_id
    return {
        "embedder": model,
        "remember_per_s": _rate(one),
        "remember_calls": len(one),
        "remember_many_per_s": batch / many_s if many_s else 0.0,
        "embed_one_per_s": _rate(embed_one),
        "embed_batch_per_s": batch / embed_batch_s if embed_batch_s else 0.0,
        "batch": batch,
    }


def run_writes(
    sizes: Sequence[int] = (1_000, 10_000, 100_000),
    *,
    calls: int = 200,
    budget_s: float = 60.0,
    batch: int = 1_000,
    cli_repeats: int = 5,
    turn_writers: tuple[int, ...] = (1, 4, 8),
    end_to_end: bool = True,
    settings: Settings | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Per-call and batch write rates at each size, the naive floor beside them, writes
    with the configured embedder end to end, and cold command-line start (see the
    module docstring)."""
    base = settings or Settings()
    rows, floors = [], []
    for index, size in enumerate(sizes):
        if progress:
            progress(f"size {size:,}", index, len(sizes))
        rows.append(_kronika_size(size, calls, budget_s, base, progress, batch))
        floors.append(_floor_size(size, calls, budget_s, batch))
    if progress and end_to_end:
        progress("end to end with the embedder", len(sizes), len(sizes) + 1)
    e2e = _end_to_end(base, calls, batch, budget_s) if end_to_end else None
    cli = _cold_cli(base, cli_repeats) if cli_repeats else []
    if progress and turn_writers:
        progress("save_turn with several writers", len(sizes), len(sizes) + 1)
    turns = save_turn_concurrency(base, turn_writers, min(calls, 200)) if turn_writers else None
    results: dict[str, Any] = {
        "benchmark": "writes",
        "dataset": "synthetic facts and chat turns (seeded)",
        "embedder": FixedVectors.model_id,
        "calls": calls,
        "budget_s": budget_s,
        "batch": batch,
        "settings": rows[0]["settings"] if rows else {},
        "sizes": rows,
        "floor": floors,
        "cli": cli,
        "turn_writers": turns,
        "end_to_end": e2e,
    }
    results["headline"] = {
        f"{key}@{row['size']}": float(row[key])
        for row in rows
        for key in (
            "remember_per_s",
            "archived_change_per_s",
            "archived_refresh_per_s",
            "archived_forget_per_s",
            "key_forget_per_s",
            "turn_forget_per_s",
            "trail_forget_per_s",
            "remember_many_per_s",
            "save_turn_per_s",
            "save_turns_per_s",
            "import_items_per_s",
        )
    } | {f"cli_{row['command'].replace(' ', '_')}_s": row["median_s"] for row in cli}
    for row, floor in zip(rows, floors, strict=True):
        for mine, theirs, name in (
            ("remember_per_s", "per_call_per_s", "remember_vs_floor"),
            ("remember_many_per_s", "batch_items_per_s", "remember_many_vs_floor"),
            ("save_turns_per_s", "batch_items_per_s", "save_turns_vs_floor"),
        ):
            if floor[theirs]:
                results["headline"][f"{name}@{row['size']}"] = row[mine] / floor[theirs]
    results["tables"] = [
        table(
            f"Writes per second, embedding excluded (median of up to {calls} calls each)",
            [
                "stored",
                "remember() /s",
                "remember p95 ms",
                "archived fact changed /s",
                "archived fact refreshed /s",
                "archived fact forgotten /s",
                "history values",
                "key forgotten /s",
                f"remember_many({batch:,}) /s",
                "save_turn() /s",
                f"save_turns({batch:,}) turns/s",
                "session turns",
                "turn forgotten /s",
                "audit entries",
                "note forgotten /s",
                "import items/s",
                "floor per call /s",
                f"floor batch({batch:,}) items/s",
                "remember vs floor",
                "remember_many vs floor batch",
                "save_turns vs floor batch",
            ],
            [
                [
                    f"{row['size']:,}",
                    f"{row['remember_per_s']:,.1f}",
                    f"{row['remember_p95_ms']:,.1f}",
                    f"{row['archived_change_per_s']:,.1f}",
                    f"{row['archived_refresh_per_s']:,.1f}",
                    f"{row['archived_forget_per_s']:,.2f}",
                    f"{row['history_values']:,}",
                    f"{row['key_forget_per_s']:,.2f}",
                    f"{row['remember_many_per_s']:,.1f}",
                    f"{row['save_turn_per_s']:,.1f}",
                    f"{row['save_turns_per_s']:,.1f}",
                    f"{row['session_turns']:,}",
                    f"{row['turn_forget_per_s']:,.2f}",
                    f"{row['trail_entries']:,}",
                    f"{row['trail_forget_per_s']:,.2f}",
                    f"{row['import_items_per_s']:,.0f}",
                    f"{floor['per_call_per_s']:,.0f}",
                    f"{floor['batch_items_per_s']:,.0f}",
                    _ratio(row["remember_per_s"], floor["per_call_per_s"]),
                    _ratio(row["remember_many_per_s"], floor["batch_items_per_s"]),
                    _ratio(row["save_turns_per_s"], floor["batch_items_per_s"]),
                ]
                for row, floor in zip(rows, floors, strict=True)
            ],
        )
    ]
    results["tables"].append(
        table(
            "CPU time of the same writes (this process; less inflated by other work),"
            " past a process's first remember()",
            [
                "stored",
                "first remember() s",
                "remember() mean ms",
                "remember() CPU ms",
                "save_turn() CPU ms",
                "key forgotten CPU ms",
                "turn forgotten CPU ms",
                "note forgotten CPU ms",
                "floor per call CPU ms",
                "remember_many items/s of CPU",
                "save_turns turns/s of CPU",
                "import items/s of CPU",
                "floor batch items/s of CPU",
            ],
            [
                [
                    f"{row['size']:,}",
                    f"{row['first_remember_s']:.3f}",
                    f"{row['remember_mean_ms']:.2f}",
                    f"{row['remember_cpu_ms']:.2f}",
                    f"{row['save_turn_cpu_ms']:.2f}",
                    f"{row['key_forget_cpu_ms']:.1f}",
                    f"{row['turn_forget_cpu_ms']:.1f}",
                    f"{row['trail_forget_cpu_ms']:.1f}",
                    f"{floor['per_call_cpu_ms']:.2f}",
                    f"{row['remember_many_cpu_per_s']:,.0f}",
                    f"{row['save_turns_cpu_per_s']:,.0f}",
                    f"{row['import_cpu_items_per_s']:,.0f}",
                    f"{floor['batch_cpu_items_per_s']:,.0f}",
                ]
                for row, floor in zip(rows, floors, strict=True)
            ],
        )
    )
    if e2e:
        results["headline"] |= {
            "e2e_remember_per_s": e2e["remember_per_s"],
            "e2e_remember_many_per_s": e2e["remember_many_per_s"],
        }
        results["tables"].append(
            table(
                f"End to end with {e2e['embedder']} (its model loaded; vectors made in the call)",
                ["write", "kronika /s", "the embedder alone /s"],
                [
                    [
                        "remember(), one per call",
                        f"{e2e['remember_per_s']:,.1f}",
                        f"{e2e['embed_one_per_s']:,.1f}",
                    ],
                    [
                        f"remember_many({e2e['batch']:,})",
                        f"{e2e['remember_many_per_s']:,.1f}",
                        f"{e2e['embed_batch_per_s']:,.1f}",
                    ],
                ],
            )
        )
    if turns:
        results["tables"].append(concurrency_table(turns))
    if cli:
        results["tables"].append(
            table(
                f"Cold command-line start (fresh process, median of {cli_repeats})",
                ["command", "seconds"],
                [[row["command"], f"{row['median_s']:.2f}"] for row in cli],
            )
        )
    return results
