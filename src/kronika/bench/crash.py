"""Crash trials: writers killed with SIGKILL at random moments, then the workspace checked.

Each trial makes a fresh workspace whose key ``city`` holds one value, and starts
``writers`` processes (``python -m kronika.bench.crash``) on it. Each writer loops
over random writes through the public API: a new value of the shared key ``city``
(half of the writes, so several writers race on one key), a value of its own key,
forgetting its own key, a note, a conversation turn, a new value for one of its
archived facts (:data:`ARCHIVED` of each writer are in the archive when the trial
starts). Before each call it prints a
``begin`` line and after the call returns an ``ack`` line (flushed, so a line printed
survives the kill). The trial waits until every writer has finished its first write
(so a loaded machine still gives each trial acknowledged writes), lets each run for a
random time, kills it with SIGKILL wherever it is, then opens the workspace and
checks that:

* **opens** — opening it and syncing the index raises nothing;
* **one value** — ``city`` has exactly one current value (in the Brain and in the
  index), and each writer's own key
  at most one, which is its last acknowledged value or the value of the write the
  kill interrupted (none after a forget); each archived fact exactly one, its new value
  once acknowledged and its first one when no write touched it;
* **acknowledged** — every acknowledged write is there: each value of ``city`` (now
  or in its history), each own value no later forget removed, each note, each turn;
* **intervals** — the values of ``city`` form one timeline: each ends exactly where
  the next begins, none runs backwards, only the last is open, and ``--as-of`` at the
  start of each finds exactly one;
* **reindex** — ``kronika index rebuild`` (the index rebuilt from the Markdown alone) gives
  the same answers, and the checks above hold on it too;
* **batch whole** — with ``batches``, writers also write batches (:data:`BATCH_KINDS`:
  ``remember_many`` of several keyed facts, ``import_sessions`` of several sessions),
  every item carrying its batch's marker; each batch is then on disk entirely or not at
  all (an acknowledged one entirely).

With ``agents``, each writer writes its own key, forgets, notes, turns and batches into
an agent of its own (``w<n>``, made when the writer starts) and only the shared key into
the default agent: in team mode writers of different agents then write at once while
the shared key's writers, and every forget, still take turns.

In team mode each killed worker's working copy is opened again before the checks (a
restarted worker), so what a kill left in it reaches the record if it ever would.

Trials are independent and seeded (``seed + trial``), so a failure can be rerun.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kronika import KronikaError, NotFound, Settings
from kronika.bench.report import table

if TYPE_CHECKING:
    from kronika import Memory, MemoryItem, WriteReceipt

Progress = Callable[[str, int, int], None]

SHARED_KEY = "city"
CHECKS = ("opens", "one value", "acknowledged", "intervals", "reindex", "batch whole")
_OPS = ("shared", "own", "forget", "note", "turn", "archived")
_WEIGHTS = (50, 15, 5, 15, 15, 10)
ARCHIVED = 40
"""Archived facts of each writer (keys ``o<writer>_<j>`` of the default agent) the trial
starts with; each ``archived`` write gives the next one a new value, taking it out of
the archive (its lines become a mark: in team mode, a part that goes over them)."""
_BATCH_WEIGHT = 20  # each batch kind's weight among the ops, with ``batches``
_TURNS_PER_SESSION = 3
_START_TIMEOUT_S = 120.0


@dataclass(frozen=True, slots=True)
class Event:
    """One line a writer printed: ``begin`` before a call, ``ack`` after it returned."""

    writer: int
    ev: str
    op: str
    value: str
    id: str | None = None
    size: int = 0
    """A batch's item count (its marker is ``value``)."""
    agent: str | None = None
    """The agent of the writer's own writes (``None``: the default agent)."""


# ------------------------------------------------------------------------- batches
def _remember_many(memory: Memory, writer: int, marker: str, size: int, agent: str | None) -> None:
    """``size`` keyed facts, each superseding the last batch's value of its key (so the
    batch moves facts to the history as well as writing the Brain)."""
    memory.remember_many(
        [{"key": f"b{writer}-{j}", "value": f"{marker} #{j}"} for j in range(size)], agent=agent
    )


def _facts_found(memory: Memory, writer: int, marker: str, size: int, agent: str | None) -> int:
    """How many of a :func:`_remember_many` batch's facts are stored (current or past)."""
    return sum(
        f"{marker} #{j}" in {h.value for h in memory.history(f"b{writer}-{j}", agent=agent)}
        for j in range(size)
    )


def _import(memory: Memory, writer: int, marker: str, size: int, agent: str | None) -> None:
    """``size`` sessions of :data:`_TURNS_PER_SESSION` turns in one import."""
    from kronika.testing import conversation

    at = datetime.now(UTC)
    memory.import_sessions(
        agent or memory.settings.default_agent,
        [
            conversation(
                f"imp-{marker}-{j}",
                at,
                [
                    (f"{marker}-{j}-{t}", "user", f"turn {t} of {marker}")
                    for t in range(_TURNS_PER_SESSION)
                ],
            )
            for j in range(size)
        ],
    )


def _turns_found(memory: Memory, writer: int, marker: str, size: int, agent: str | None) -> int:
    """How many of an :func:`_import` batch's sessions are stored whole; a session
    stored in part counts as none (so the batch is not whole)."""
    whole = 0
    for j in range(size):
        turns = memory.load_session(f"imp-{marker}-{j}", agent=agent)
        whole += len(turns) == _TURNS_PER_SESSION
        if 0 < len(turns) < _TURNS_PER_SESSION:
            return -1
    return whole


@dataclass(frozen=True, slots=True)
class BatchKind:
    """A batch call of the workload: ``write`` makes a batch of ``size`` items marked
    ``marker``, ``found`` counts how many of them the memory holds."""

    name: str
    write: Callable[[Memory, int, str, int, str | None], None]
    found: Callable[[Memory, int, str, int, str | None], int]


BATCH_KINDS: tuple[BatchKind, ...] = (
    BatchKind("remember_many", _remember_many, _facts_found),
    BatchKind("import", _import, _turns_found),
)
"""The batch calls writers make with ``batches`` (one line each)."""
_BATCHES = {kind.name: kind for kind in BATCH_KINDS}


@dataclass(slots=True)
class TrialResult:
    trial: int
    acknowledged: int = 0
    interrupted: dict[str, int] = field(default_factory=dict)
    leftovers: int = 0
    failures: dict[str, list[str]] = field(default_factory=dict)

    def fail(self, check: str, message: str) -> None:
        self.failures.setdefault(check, []).append(message)


# ------------------------------------------------------------------------- writer
def writer_main(argv: Sequence[str]) -> int:
    """A writer process: ``<home> <writer number> <seed> <embedder> <flags>
    [<database URL>]`` (flags: ``b`` batches, ``a`` an agent of its own, ``-`` none);
    runs until killed."""
    from kronika import build_memory, load_settings

    home, number, seed, embedder = argv[0], int(argv[1]), int(argv[2]), argv[3]
    batches, agent = "b" in argv[4], f"w{number}" if "a" in argv[4] else None
    team = {"database_url": argv[5]} if len(argv) > 5 else {}
    rng = random.Random(seed)
    settings = load_settings(Path(home), environ={}, embedder=embedder, **team)
    own = f"k{number}"
    ops = (*_OPS, *(_BATCHES if batches else ()))
    weights = (*_WEIGHTS, *((_BATCH_WEIGHT,) * len(_BATCHES) if batches else ()))
    with build_memory(settings) as memory:
        if agent is not None:
            memory.create_agent(agent)
        n = archived = 0
        while True:
            n += 1
            op = rng.choices(ops, weights)[0]
            if op == "archived" and archived == ARCHIVED:
                op = "own"  # every archived fact of this writer has a new value
            value = f"w{number}-{n}"
            size = rng.randint(2, 6) if op in _BATCHES else 0
            _say({"ev": "begin", "op": op, "value": value, "size": size, "agent": agent})
            made: str | None = None
            if op in _BATCHES:
                _BATCHES[op].write(memory, number, value, size, agent)
            elif op == "shared":
                made = _fact_id(memory.remember(value, key=SHARED_KEY))
            elif op == "own":
                made = _fact_id(memory.remember(value, key=own, agent=agent))
            elif op == "archived":  # the default agent's, where the trial put them
                made = _fact_id(memory.remember(value, key=f"o{number}_{archived}"))
                archived += 1
            elif op == "forget":
                if any(f.key == own for f in memory.facts(agent=agent)):
                    memory.forget(key=own, agent=agent)
            elif op == "note":
                made = _fact_id(memory.note(f"note {value}", agent=agent))
            else:
                turn = f"turn {value}"
                made = memory.save_turn(f"s{number}", "user", turn, turn_id=value, agent=agent)
            _say({"ev": "ack", "op": op, "value": value, "id": made, "size": size, "agent": agent})
    return 0


def _fact_id(receipt: WriteReceipt) -> str | None:
    return None if receipt.item is None else str(receipt.item.id)


def _say(record: dict[str, Any]) -> None:
    print(json.dumps(record), flush=True)


# ------------------------------------------------------------------------- trials
def run_crash(
    trials: int,
    *,
    writers: int = 1,
    settings: Settings | None = None,
    seed: int = 0,
    max_run_s: float = 2.0,
    progress: Progress | None = None,
    index: str | None = None,
    batches: bool = False,
    agents: bool = False,
) -> dict[str, Any]:
    """Run ``trials`` crash trials of ``writers`` processes each; each writer is killed
    after a random time in ``[0, max_run_s)`` of running. Results as a benchmark dict.
    ``batches``: the writers also make batch calls (:data:`BATCH_KINDS`); ``agents``:
    each writes its own items into an agent of its own (see the module).

    ``index`` ``postgres`` or ``postgres=URL`` (:mod:`kronika.bench.postgres`): team mode,
    each trial on a fresh database, each writer with a working copy of its own, and the
    checks made from the first copy."""
    from kronika.bench.postgres import postgres_site

    base = settings or Settings()
    embedder = base.embedder
    results: list[TrialResult] = []
    started = time.perf_counter()
    with postgres_site(index) as site:
        for trial in range(trials):
            with tempfile.TemporaryDirectory(prefix="kronika-crash-") as tmp:
                home = Path(tmp) / "home"
                with contextlib.ExitStack() as stack:
                    url = "" if site is None else stack.enter_context(site.database())
                    trial_settings = base.with_overrides(home=home, database_url=url)
                    results.append(
                        run_trial(
                            trial,
                            trial_settings,
                            writers,
                            seed + trial,
                            max_run_s,
                            embedder,
                            batches=batches,
                            agents=agents,
                        )
                    )
            if progress is not None:
                progress(f"crash x{writers}", trial + 1, trials)
    summary = _summary(results, writers, seed, max_run_s, embedder, time.perf_counter() - started)
    summary["settings"]["store"] = "postgres" if index else "markdown"
    summary["settings"]["batches"] = batches
    summary["settings"]["agents"] = agents
    return summary


def run_trial(
    trial: int,
    settings: Settings,
    writers: int,
    seed: int,
    max_run_s: float,
    embedder: str,
    *,
    batches: bool = False,
    agents: bool = False,
) -> TrialResult:
    """One trial on a fresh workspace at ``settings.home``."""
    from kronika import build_memory

    with build_memory(settings, create=True) as memory:
        memory.remember("start", key=SHARED_KEY)
        _seed_archive(memory, writers)
    rng = random.Random(seed)
    logs = [settings.home.parent / f"writer-{n}.jsonl" for n in range(writers)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("KRONIKA_")}
    procs = []
    url = settings.database_url
    # in team mode each writer is a worker with a working copy of its own
    homes = [settings.home.parent / f"writer-{n}" if url else settings.home for n in range(writers)]
    for n, (log, home) in enumerate(zip(logs, homes, strict=True)):
        with log.open("w", encoding="utf-8") as out:
            flags = ("b" if batches else "") + ("a" if agents else "") or "-"
            args = [str(home), str(n), str(seed * 1000 + n), embedder, flags]
            args += [url] if url else []
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-m", "kronika.bench.crash", *args],
                    stdout=out,
                    stderr=subprocess.DEVNULL,
                    env=env,
                )
            )
    try:
        _wait_first_ack(logs, procs)
        deadlines = sorted((rng.uniform(0.0, max_run_s), n) for n in range(writers))
        began = time.monotonic()
        for at, n in deadlines:
            time.sleep(max(0.0, began + at - time.monotonic()))
            procs[n].send_signal(signal.SIGKILL)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
    events = [e for n, log in enumerate(logs) for e in _read_events(n, log)]
    reopened = _reopen_copies(settings, homes) if url else None
    result = check_workspace(trial, settings, events)
    if reopened:
        result.fail("opens", reopened)
    return result


def _seed_archive(memory: Memory, writers: int) -> None:
    """:data:`ARCHIVED` archived facts of each writer in the default agent's archive."""
    from kronika.testing import archive_document, archived_fact

    now = datetime.now(UTC).replace(microsecond=0)
    facts = [
        archived_fact(f"o{n}_{j}", _seeded(n, j), now, id=f"f-o{n}x{j:03d}")
        for n in range(writers)
        for j in range(ARCHIVED)
    ]
    archive = memory.workspace.agent_dir("default") / "brain_archive.md"
    archive.write_text(archive_document(facts), encoding="utf-8")
    memory.sync("default")


def _seeded(writer: int, j: int) -> str:
    return f"seeded {writer}-{j}"


def _reopen_copies(settings: Settings, homes: list[Path]) -> str | None:
    """Open each killed worker's working copy again, as a restarted worker would (what
    the kill left in it is pushed to the record, or put right); what failed, if any."""
    from kronika import build_memory

    for home in homes:
        try:
            with build_memory(settings.with_overrides(home=home)) as memory:
                memory.sync()
        except Exception as exc:
            return f"the working copy {home.name}: {type(exc).__name__}: {exc}"
    return None


def _wait_first_ack(logs: list[Path], procs: list[subprocess.Popen[bytes]]) -> None:
    deadline = time.monotonic() + _START_TIMEOUT_S
    pending = set(range(len(logs)))
    while pending:
        for n in list(pending):
            if '"ack"' in logs[n].read_text(encoding="utf-8"):
                pending.discard(n)
            elif procs[n].poll() is not None:
                raise KronikaError(f"crash writer {n} exited with {procs[n].returncode}")
        if time.monotonic() > deadline:
            raise KronikaError("crash writers did not start in time")
        time.sleep(0.01)


def _read_events(writer: int, log: Path) -> list[Event]:
    events = []
    for line in log.read_text(encoding="utf-8").splitlines(keepends=True):
        if not line.endswith("\n"):
            continue  # cut by the kill: never acknowledged
        record = json.loads(line)
        if record["ev"] in ("begin", "ack"):
            events.append(
                Event(
                    writer,
                    record["ev"],
                    record["op"],
                    record["value"],
                    record.get("id"),
                    record.get("size", 0),
                    record.get("agent"),
                )
            )
    return events


# ------------------------------------------------------------------------- checks
def check_workspace(trial: int, settings: Settings, events: list[Event]) -> TrialResult:
    """Open the workspace the writers left and check every invariant (see the module)."""
    from kronika import build_memory

    result = TrialResult(trial)
    acks = [e for e in events if e.ev == "ack"]
    result.acknowledged = len(acks)
    for writer in {e.writer for e in events}:
        last = [e for e in events if e.writer == writer][-1:]
        if last and last[0].ev == "begin":
            result.interrupted[last[0].op] = result.interrupted.get(last[0].op, 0) + 1
    try:
        memory = build_memory(settings)
        memory.sync()
    except Exception as exc:
        result.fail("opens", f"{type(exc).__name__}: {exc}")
        return result
    with memory:
        before = _answers(memory, events)
        _check_state(memory, events, result)
        report = memory.reindex()
        result.leftovers = sum("interrupted update" in w for w in report.warnings)
        after = _answers(memory, events)
        for name in sorted(set(before) | set(after)):
            if before.get(name) != after.get(name):
                result.fail("reindex", _difference(name, before.get(name), after.get(name)))
        _check_state(memory, events, result, label=" (after reindex)")
    return result


def _current(memory: Memory, key: str, agent: str | None = None) -> list[MemoryItem]:
    return [f for f in memory.facts(agent=agent) if f.key == key]


def _check_state(memory: Memory, events: list[Event], result: TrialResult, label: str = "") -> None:
    shared = _current(memory, SHARED_KEY)
    if len(shared) != 1:
        result.fail("one value", f"{SHARED_KEY} has {len(shared)} current values{label}")
    recalled = _as_of(memory, None)
    if len(recalled) != 1:
        result.fail("one value", f"the index holds {recalled} as {SHARED_KEY}{label}")
    history = memory.history(SHARED_KEY)
    known = {h.value for h in history}
    for e in events:
        if e.ev != "ack":
            continue
        if e.op == "shared" and (e.value not in known or not _indexed(memory, e.id)):
            result.fail("acknowledged", f"{SHARED_KEY}={e.value} is missing{label}")
        elif e.op == "note" and not _indexed(memory, e.id, e.agent):
            result.fail("acknowledged", f"note {e.value} is missing{label}")
        elif e.op == "turn":
            session = memory.load_session(f"s{e.writer}", agent=e.agent)
            if e.value not in {tid for turn in session for tid in turn.provenance.turn_ids}:
                result.fail("acknowledged", f"turn {e.value} is missing{label}")
    for writer in sorted({e.writer for e in events}):
        _check_own_key(memory, [e for e in events if e.writer == writer], writer, result, label)
        _check_archived(memory, [e for e in events if e.writer == writer], writer, result, label)
    _check_intervals(memory, history, result, label)
    _check_batches(memory, events, result, label)


def _check_batches(memory: Memory, events: list[Event], result: TrialResult, label: str) -> None:
    """Each batch begun is stored whole or not at all; each acknowledged one whole."""
    acked = {(e.writer, e.value) for e in events if e.ev == "ack"}
    for e in events:
        if e.ev != "begin" or e.op not in _BATCHES:
            continue
        found = _BATCHES[e.op].found(memory, e.writer, e.value, e.size, e.agent)
        if found not in (0, e.size):
            shown = "a session in part" if found < 0 else f"{found} of {e.size} items"
            result.fail("batch whole", f"{e.op} {e.value} holds {shown}{label}")
        elif (e.writer, e.value) in acked and found != e.size:
            result.fail("acknowledged", f"{e.op} {e.value} is missing{label}")


def _indexed(memory: Memory, item_id: str | None, agent: str | None = None) -> bool:
    if item_id is None:
        return False
    try:
        memory.get(item_id, agent=agent)
    except NotFound:
        return False
    return True


def _check_own_key(
    memory: Memory, events: list[Event], writer: int, result: TrialResult, label: str
) -> None:
    own = [e for e in events if e.op in ("own", "forget")]
    if not own:
        return
    acked = [e for e in own if e.ev == "ack"]
    allowed: set[str | None] = {None}
    if acked:
        allowed = {acked[-1].value if acked[-1].op == "own" else None}
    if own[-1].ev == "begin":  # the kill interrupted this one: either outcome is fine
        allowed.add(own[-1].value if own[-1].op == "own" else None)
    agent = own[0].agent
    values = [f.value for f in _current(memory, f"k{writer}", agent)]
    if len(values) > 1 or (values[0] if values else None) not in allowed:
        result.fail("one value", f"k{writer} holds {values}, expected one of {allowed}{label}")
    kept = {h.value for h in memory.history(f"k{writer}", agent=agent)}
    last_forget = max((i for i, e in enumerate(own) if e.op == "forget"), default=-1)
    for e in acked:
        if e.op == "own" and own.index(e) > last_forget and e.value not in kept:
            result.fail("acknowledged", f"k{writer}={e.value} is missing{label}")


def _check_archived(
    memory: Memory, events: list[Event], writer: int, result: TrialResult, label: str
) -> None:
    """Each archived fact of ``writer`` holds one value: the new one its write gave it
    when acknowledged, either one when the kill interrupted that write, and the one it
    started with when no write touched it, whatever the other facts' writes did to the
    archive around it."""
    if not any(e.op == "archived" for e in events):
        return
    current: dict[str, list[str | None]] = {}
    for fact in memory.facts():
        if fact.key is not None and fact.key.startswith(f"o{writer}_"):
            current.setdefault(fact.key, []).append(fact.value)
    begun = [e for e in events if e.op == "archived" and e.ev == "begin"]
    acked = {e.value: e.id for e in events if e.op == "archived" and e.ev == "ack"}
    for j in range(ARCHIVED):
        key = f"o{writer}_{j}"
        allowed = {_seeded(writer, j)}
        if j < len(begun):
            value = begun[j].value
            allowed = {value} if value in acked else allowed | {value}
            if value in acked and not _indexed(memory, acked[value]):
                result.fail("acknowledged", f"{key}={value} is not in the index{label}")
        values = current.get(key, [])
        if len(values) != 1 or values[0] not in allowed:
            result.fail("one value", f"{key} holds {values}, expected one of {allowed}{label}")


def _check_intervals(
    memory: Memory, history: list[MemoryItem], result: TrialResult, label: str
) -> None:
    starts = [h.valid_from or h.created_at for h in history]
    for older, newer in zip(history, history[1:], strict=False):
        if older.valid_to is None or older.valid_to != (newer.valid_from or newer.created_at):
            result.fail(
                "intervals",
                f"{older.value} ends {older.valid_to}, {newer.value} starts {newer.valid_from}"
                f"{label}",
            )
    for item, start in zip(history, starts, strict=True):
        if item.valid_to is not None and item.valid_to < start:
            result.fail("intervals", f"{item.value} runs backwards{label}")
    for moment in sorted(set(starts)):
        found = _as_of(memory, moment)
        if len(found) != 1:
            result.fail("intervals", f"as of {moment.isoformat()}: {found}{label}")


def _as_of(memory: Memory, moment: datetime | None) -> list[str]:
    """The values of the shared key the index holds as current (at ``moment``)."""
    hits = memory.recall(
        SHARED_KEY, k=50, keys=[SHARED_KEY], as_of=moment, record_access=False
    ).hits
    return sorted(str(h.item.value) for h in hits if h.item.key == SHARED_KEY)


def _difference(name: str, before: Any, after: Any) -> str:
    """One answer that a rebuilt index gives otherwise: only the entries that differ."""
    if isinstance(before, list) and isinstance(after, list):
        gone = [entry for entry in before if entry not in after]
        new = [entry for entry in after if entry not in before]
        if gone or new:
            return f"{name}: only before the rebuild {gone}, only after it {new}"
    return f"{name}: before the rebuild {before}, after it {after}"


def _answers(memory: Memory, events: list[Event]) -> dict[str, Any]:
    """What the index answers: current and past values of every key, and what it holds."""
    own = sorted({(f"k{e.writer}", e.agent or "") for e in events})
    agents = sorted({agent for _, agent in own if agent})
    out: dict[str, Any] = {"count": [memory.count(agent=a or None) for a in ["", *agents]]}
    for key, agent in [(SHARED_KEY, ""), *own]:
        hits = memory.recall(
            key, k=50, keys=[key], include_superseded=True, record_access=False, agent=agent or None
        ).hits
        out[f"{agent}/{key}"] = sorted(
            (str(h.item.value), h.item.status.value, str(h.item.valid_from), str(h.item.valid_to))
            for h in hits
        )
    return out


# ------------------------------------------------------------------------- summary
def _summary(
    results: list[TrialResult],
    writers: int,
    seed: int,
    max_run_s: float,
    embedder: str,
    seconds: float,
) -> dict[str, Any]:
    failed = {check: sum(check in r.failures for r in results) for check in CHECKS}
    interrupted: dict[str, int] = {}
    for r in results:
        for op, count in r.interrupted.items():
            interrupted[op] = interrupted.get(op, 0) + count
    acked = sum(r.acknowledged for r in results)
    in_batch = sum(n for op, n in interrupted.items() if op in _BATCHES)
    leftovers = sum(r.leftovers for r in results)
    summary_rows = [
        ["trials", str(len(results))],
        ["writers per trial", str(writers)],
        ["acknowledged writes", str(acked)],
        ["writers killed inside a write", str(sum(interrupted.values()))],
        *([f"  … inside {op}", str(n)] for op, n in sorted(interrupted.items())),
        ["writers killed inside a batch", str(in_batch)],
        ["interrupted updates found on disk", str(leftovers)],
    ]
    check_rows = [[check, str(failed[check]), str(len(results))] for check in CHECKS]
    examples = [
        {"trial": r.trial, "seed": seed + r.trial, "failures": r.failures}
        for r in results
        if r.failures
    ][:20]
    return {
        "dataset": f"crash trials, {writers} writer(s), seed {seed}",
        "embedder": embedder,
        "settings": {
            "trials": len(results),
            "writers": writers,
            "seed": seed,
            "max_run_s": max_run_s,
            "embedder": embedder,
            "seconds": round(seconds, 1),
        },
        "tables": [
            table(f"Crash trials ({writers} writer(s))", ["", "count"], summary_rows),
            table("Invariants", ["check", "trials failing", "trials"], check_rows),
        ],
        "headline": {
            "trials": len(results),
            "acknowledged_writes": acked,
            "killed_inside_a_write": sum(interrupted.values()),
            "killed_inside_a_batch": in_batch,
            "trials_failing": sum(bool(r.failures) for r in results),
        },
        "failures": examples,
    }


if __name__ == "__main__":
    sys.exit(writer_main(sys.argv[1:]))
