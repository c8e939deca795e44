"""``remember()`` in team mode (PostgreSQL) as memory grows: ``kronika bench team-writes``.

For each size N a fresh database (on the server of ``--index postgres[=URL]``) gets one
agent with N stored facts: written into ``brain_archive.md`` as kronika lays it out and
synced into the record and the index (setup, not timed; ``remember_many`` would move
them there one trim of the Brain at a time, which takes hours at 100k), then
:data:`BRAIN_FACTS` facts remembered so the Brain is at its budget. Then
``remember()`` of new keyed facts is timed one call at a time, each durable when it
returns, ``calls`` of them or as many as ``budget_s`` allows. Embedding is excluded:
:class:`~kronika.bench.fixed.FixedVectors` makes a text's vector from its hash.

Beside the time per call, the run reports what each call did to the store of record,
read from the tables themselves (rows inserted, updated and deleted in ``record_items``
and ``record_documents``, and in the search index's ``idx_items``, per call: each row's
key and the transaction that wrote its version, before and after each call), and a
profile
(``cProfile``) of a part of the calls: the share of the time spent in each step of the
write path.

``--before PATH`` runs the same measurement, in the same run and on the same server,
with the kronika package found under ``PATH`` (a ``src`` folder of another checkout):
each size is measured with one tree, then the other, the first of the two alternating
from size to size and round to round (:func:`alternating`), so drift of a shared
machine hits both alike. The measurement itself lives in this file and uses only the
public API, so it runs unchanged against an older kronika.

A second part measures writers side by side: ``writers`` processes, each with a
working copy of its own, writing ``remember()`` into one tenant for a fixed time,
first each into an agent of its own, then all into one agent (different keys), then
one alone: whether writes of different agents wait for each other; and, at each size,
two workers calling ``remember()`` on one agent in turn (:mod:`kronika.bench.team_turns`),
each call pulling what the other wrote.
"""

from __future__ import annotations

import cProfile
import json
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

BRAIN_FACTS = 60
"""Facts remembered before the timed calls: past its budget, so that the timed calls
move facts to the archive as a Brain in use does."""
PROFILED = 20
"""Calls profiled after the timed ones (a profile slows the calls it watches)."""
ARCHIVED = 20
"""Calls of each kind on archived facts: a new value, the same value again."""
SESSION_TURNS = 4
"""Turns in each conversation ``--sessions`` stores (a short chat)."""
IN_TURN = 30
"""Calls of each worker when two take turns on one agent (:mod:`.team_turns`)."""
TURNS = str(Path(__file__).with_name("team_turns.py"))
WORKERS = ("first", "second")

STEPS: tuple[tuple[str, str], ...] = (
    ("lock + pull", "working_copy.py:_take"),
    ("Markdown written", "factfiles.py:_write_facts|facts/write.py:write"),
    ("push (release)", "working_copy.py:push"),
    ("push: parse", "factfiles.py:parse_source|facts/reads.py:parse_source"),
    ("record write", "record.py:write"),
    ("index sync", "sync.py:sync_agent|indexer/indexer.py:sync_agent"),
    ("index: replace a file", "index_sources.py:replace_source"),
    ("index: append to a file", "index_sources.py:append_to_source"),
)
"""Steps of a write as ``(label, "file:function")`` found in the profile (cumulative
time per call; steps nest, so they do not add up); ``|`` parts name the same step in
another layout of the code (an older kronika measured with ``--before``)."""


# ----------------------------------------------------------------------- one size
_KEYS = {
    "record_documents": "agent, path",
    "record_items": "agent, path, id",
    "idx_items": "source_agent, source_path, id",
}
"""What names a row of each table of the record (an item by its id in its document),
and of the search index's items."""


def _tables(conn: Any) -> dict[str, str]:
    """Where each table of :data:`_KEYS` is, schema included: the search index's tables
    are in the tenant's schema (the bench's one tenant). A table not there is left out."""
    out: dict[str, str] = {}
    for table in _KEYS:
        found = conn.execute(
            "SELECT quote_ident(schemaname) || '.' || quote_ident(tablename) FROM pg_tables"
            " WHERE tablename = %s ORDER BY schemaname LIMIT 1",
            (table,),
        ).fetchone()
        if found is not None:
            out[table] = found[0]
    return out


def _snapshot(conn: Any, tables: dict[str, str]) -> dict[str, Counter[tuple[Any, ...]]]:
    """Each table's rows as (key, transaction that wrote the row's version): a row
    inserted or rewritten since carries a newer transaction. Read from the tables
    themselves, not from the statistics views, which a busy backend reports late."""
    out: dict[str, Counter[tuple[Any, ...]]] = {}
    for table, keys in _KEYS.items():
        rows = (
            conn.execute(f"SELECT {keys}, xmin::text FROM {tables[table]}")
            if table in tables
            else []
        )
        out[table] = Counter(tuple(row) for row in rows)
    return out


def _changes(
    before: dict[str, Counter[tuple[Any, ...]]], after: dict[str, Counter[tuple[Any, ...]]]
) -> dict[str, int]:
    """Rows inserted, updated and deleted between two snapshots, per table: a key whose
    row version changed was updated; a key only after inserted, only before deleted."""
    out: dict[str, int] = {}
    for table in _KEYS:
        gone = before[table] - after[table]  # row versions no longer there
        new = after[table] - before[table]  # row versions written since
        old_keys = Counter(version[:-1] for version in gone.elements())
        new_keys = Counter(version[:-1] for version in new.elements())
        updated = sum((old_keys & new_keys).values())
        out[f"{table}_ins"] = sum(new_keys.values()) - updated
        out[f"{table}_upd"] = updated
        out[f"{table}_del"] = sum(old_keys.values()) - updated
    return out


def steps_ms(
    profile: cProfile.Profile | str,
    calls: int,
    steps: Sequence[tuple[str, str]] = STEPS,
) -> dict[str, float]:
    """Milliseconds per call spent in each of ``steps`` (cumulative), from a profile or
    the file it was dumped to."""
    stats = pstats.Stats(profile)
    table: dict[tuple[str, int, str], tuple[Any, ...]] = stats.stats  # type: ignore[attr-defined]
    out: dict[str, float] = {}
    for label, where in steps:
        places = [place.partition(":")[::2] for place in where.split("|")]
        total = sum(
            v[3]
            for (path, _line, name), v in table.items()
            if any(name == func and path.endswith(file) for file, func in places)
        )
        out[label] = 1000 * total / calls
    return out


def measure_size(
    url: str,
    size: int,
    calls: int,
    budget_s: float,
    questions: Sequence[str] = (),
    batch: int = 0,
    sessions: int = 0,
) -> dict[str, Any]:
    """One size on the empty database at ``url`` (the package on ``sys.path``), with
    ``sessions`` conversations of :data:`SESSION_TURNS` turns stored in the agent too
    (a session file each, as many chats leave): the timed ``remember()`` calls, then,
    once the vector graph is built (the floor's HNSW index is built as its setup),
    ``recall`` of each of ``questions`` (``k`` 10, the query's vector made before the
    clock starts, access not recorded, as ``bench scale`` asks; the first one untimed),
    the profile, and one ``remember_many`` of ``batch`` new facts (0: none)."""
    import psycopg

    import kronika
    from kronika import build_memory, load_settings
    from kronika.bench.fixed import FixedVectors
    from kronika.bench.writes import _stored_facts

    # not kronika.testing.archive_document: this runs against an older kronika too
    try:
        from kronika.stores.markdown.facts.brain import ARCHIVE, render_fact
    except ImportError:  # before the fact files had a package of their own
        from kronika.stores.markdown.brain import (  # type: ignore[import-not-found,no-redef]
            ARCHIVE,
            render_fact,
        )

    with tempfile.TemporaryDirectory(prefix="kronika-team-writes-") as tmp:
        settings = load_settings(Path(tmp) / "home", environ={}, database_url=url)
        with build_memory(settings, create=True, embedder=FixedVectors()) as memory:
            memory.create_agent("bench")
            archive = memory.workspace.agent_dir("bench") / "brain_archive.md"
            # the stored facts all in one section of the archive, as kronika lays them
            # out, made at once (remember_many moves them there one trim at a time)
            now = datetime(2025, 1, 1, tzinfo=UTC)
            stored = _stored_facts(size, now)
            bullets = (line for fact in stored for line in render_fact(fact))
            archive.write_text(
                f"# {ARCHIVE.title}\n\n## User\n{''.join(bullets)}", encoding="utf-8"
            )
            began = time.perf_counter()
            memory.sync("bench")  # into the record and the index
            if sessions:
                memory.import_sessions("bench", _short_sessions(sessions, now))
            for n in range(BRAIN_FACTS):  # a Brain at its budget: new facts push old out
                memory.remember(f"brain fact {n}: {n * 13}", key=f"brain_{n}", agent="bench")
            setup_s = time.perf_counter() - began
            memory.remember("the first fact of this process", key="first_call", agent="bench")
            with psycopg.connect(url, autocommit=True) as conn:
                rows: Counter[str] = Counter()
                tables = _tables(conn)
                seen = _snapshot(conn, tables)
                spent: list[float] = []
                cpu_s = 0.0
                began = time.perf_counter()
                for n in range(calls):
                    at, cpu = time.perf_counter(), time.process_time()
                    memory.remember(f"new fact {n}: {n * 31}", key=f"new_{n}", agent="bench")
                    spent.append(time.perf_counter() - at)
                    cpu_s += time.process_time() - cpu
                    # what this call wrote, read between calls (not timed)
                    now_rows = _snapshot(conn, tables)
                    rows.update(_changes(seen, now_rows))
                    seen = now_rows
                    if time.perf_counter() - began > budget_s and len(spent) >= 3:
                        break
                archived = _archived_writes(memory, stored, min(calls, ARCHIVED), conn, tables)
                docs = conn.execute(
                    "SELECT path, length(body), (SELECT count(*) FROM record_items i WHERE"
                    " i.tenant = d.tenant AND i.agent = d.agent AND i.path = d.path)"
                    " FROM record_documents d WHERE agent = 'bench' AND body IS NOT NULL"
                    " ORDER BY 3 DESC LIMIT 4"
                ).fetchall()
                counted = conn.execute(
                    "SELECT count(*) FROM record_documents WHERE agent = 'bench'"
                ).fetchone()
                documents = counted[0] if counted else 0
            # the floor's HNSW index is built as its setup: kronika's graph too, first
            wait = getattr(memory.index, "wait_for_vector_graph", None)
            graph_s = time.perf_counter()
            if questions and wait is not None:
                wait()
            graph_s = time.perf_counter() - graph_s
            asked, hits = _recalls(memory, FixedVectors(), questions)
            profile = cProfile.Profile()
            profile.enable()
            for n in range(PROFILED):
                memory.remember(f"profiled fact {n}: {n * 17}", key=f"prof_{n}", agent="bench")
            profile.disable()
            many = [
                {"key": f"many_{n}", "value": f"batch fact {n}: {n * 7919 % 10007}"}
                for n in range(batch)
            ]
            began = time.perf_counter()
            if many:
                memory.remember_many(many, agent="bench")
            many_s = time.perf_counter() - began
            turns_s = _save_turns(memory, batch)
    done = len(spent)
    per_call = {
        f"{t}_{op}": rows[f"{t}_{op}"] / done for t in _KEYS for op in ("ins", "upd", "del")
    }
    return {
        "size": size,
        "sessions": sessions,
        "documents": int(documents),
        "kronika": str(Path(kronika.__file__).parent),
        "setup_s": setup_s,
        "calls": done,
        "per_s": 1.0 / statistics.median(spent),
        "median_ms": 1000 * statistics.median(spent),
        "p95_ms": 1000 * sorted(spent)[max(0, int(0.95 * done) - 1)],
        "cpu_ms": 1000 * cpu_s / done,
        "rows_per_call": per_call,
        "largest_documents": [[p, int(b), int(c)] for p, b, c in docs],
        "steps_ms": steps_ms(profile, PROFILED),
        "questions": len(asked),
        "graph_wait_s": graph_s,
        "recall_p50_ms": 1000 * statistics.median(asked) if asked else 0.0,
        "recall_hits": statistics.fmean(hits) if hits else 0.0,
        **archived,
        "batch": batch,
        "remember_many_per_s": batch / many_s if batch and many_s > 0 else 0.0,
        "save_turns_per_s": batch / turns_s if batch and turns_s > 0 else 0.0,
    }


def _save_turns(memory: Any, batch: int) -> float:
    """Seconds one ``save_turns`` of ``batch`` turns into a new session took (0: none
    made, or a kronika without ``save_turns``)."""
    save = getattr(memory, "save_turns", None)
    if not batch or save is None:
        return 0.0
    said = [("user", f"batched turn {n} of the bench: {n * 7919 % 10007}") for n in range(batch)]
    began = time.perf_counter()
    save("bench-batch", said, agent="bench")
    return time.perf_counter() - began


def _stored(row: dict[str, Any]) -> str:
    """The table's *stored* cell: the facts, and the conversations when there are any."""
    sessions = int(row.get("sessions", 0))
    return f"{row['size']:,}" + (f" + {sessions:,} chats" if sessions else "")


def _short_sessions(count: int, start: datetime) -> list[Any]:
    """``count`` conversations of :data:`SESSION_TURNS` turns, one a day before ``start``."""
    from kronika import SessionRecord, TurnRecord

    return [
        SessionRecord(
            f"chat-{n:06d}",
            start - timedelta(days=count - n),
            tuple(
                TurnRecord(
                    turn_id=f"chat-{n:06d}_{t + 1}",
                    speaker="user" if t % 2 == 0 else "assistant",
                    content=f"chat {n} turn {t}: about the {('garden', 'trip', 'book')[t % 3]}",
                )
                for t in range(SESSION_TURNS)
            ),
            source="bench",
        )
        for n in range(count)
    ]


def _archived_writes(
    memory: Any, stored: Sequence[Any], calls: int, conn: Any, tables: dict[str, str]
) -> dict[str, Any]:
    """``remember()`` of a new value for the key of an archived fact, and of the same
    value again, ``calls`` of each (facts spread over the archive): the median time of
    each kind, and the rows each call of the first kind wrote (read between calls)."""
    out: dict[str, Any] = {}
    rows: Counter[str] = Counter()
    for kind in ("change", "refresh"):
        spent = []
        seen = _snapshot(conn, tables)
        for n in range(calls):
            fact = stored[(n * 7919 + (0 if kind == "change" else 3)) % len(stored)]
            value = f"a new value {n}" if kind == "change" else fact.value
            at = time.perf_counter()
            memory.remember(value, key=fact.key, agent="bench")
            spent.append(time.perf_counter() - at)
            if kind == "change":
                now_rows = _snapshot(conn, tables)
                rows.update(_changes(seen, now_rows))
                seen = now_rows
        out[f"archived_{kind}_ms"] = 1000 * statistics.median(spent) if spent else 0.0
    ops = ("ins", "upd", "del")
    done = max(calls, 1)
    out["archived_rows_per_call"] = {
        f"{t}_{op}": rows[f"{t}_{op}"] / done for t in _KEYS for op in ops
    }
    return out


def _recalls(memory: Any, vectors: Any, questions: Sequence[str]) -> tuple[list[float], list[int]]:
    """Seconds of each ``recall`` of ``questions`` but the first (it warms the
    caches), and the hits each found."""
    asked: list[float] = []
    hits: list[int] = []
    for n, question in enumerate(questions):
        vector = vectors.embed_query(question)
        at = time.perf_counter()
        result = memory.recall(
            question, agent="bench", k=10, record_access=False, query_vector=vector
        )
        if n:
            asked.append(time.perf_counter() - at)
            hits.append(len(result.hits))
    return asked, hits


def measure_floor(
    url: str, size: int, calls: int, budget_s: float, questions: Sequence[str], batch: int
) -> dict[str, Any]:
    """The plain psycopg floor (:func:`~kronika.bench.floors.postgres_floor`) on the
    empty database at ``url``: the texts :func:`measure_size` stores, remembers and
    gives ``remember_many``, the same questions."""
    from kronika.bench.floors import postgres_floor
    from kronika.bench.writes import _stored_facts

    stored = [fact.content for fact in _stored_facts(size, datetime(2025, 1, 1, tzinfo=UTC))]
    new = [f"new fact {n}: {n * 31}" for n in range(calls)]
    many = [f"batch fact {n}: {n * 7919 % 10007}" for n in range(batch)]
    return postgres_floor(url, stored, new, many, questions, budget_s=budget_s)


# ----------------------------------------------------------------------- writers
def writer(url: str, home: str, agent: str, key_prefix: str, seconds: float) -> dict[str, Any]:
    """One writer process: ``remember()`` into ``agent`` for ``seconds``."""
    from kronika import build_memory, load_settings
    from kronika.bench.fixed import FixedVectors

    settings = load_settings(Path(home), environ={}, database_url=url)
    with build_memory(settings, create=True, embedder=FixedVectors()) as memory:
        memory.remember("warm up", key=f"{key_prefix}_warm", agent=agent)
        Path(home, "ready").write_text("1", encoding="utf-8")
        while not Path(home).parent.joinpath("go").exists():
            time.sleep(0.005)
        done = 0
        began = time.perf_counter()
        while time.perf_counter() - began < seconds:
            memory.remember(f"{key_prefix} value {done}", key=f"{key_prefix}_{done}", agent=agent)
            done += 1
        took = time.perf_counter() - began
    return {"writes": done, "seconds": took}


def make_agents(url: str, home: str, agents: Sequence[str]) -> dict[str, Any]:
    """Make ``agents`` in the tenant at ``url`` (before the writers start)."""
    from kronika import build_memory, load_settings
    from kronika.bench.fixed import FixedVectors

    settings = load_settings(Path(home), environ={}, database_url=url)
    with build_memory(settings, create=True, embedder=FixedVectors()) as memory:
        for agent in agents:
            memory.create_agent(agent)
    return {"agents": list(agents)}


def measure_writers(
    url: str, python_path: str, agents: Sequence[str], seconds: float
) -> dict[str, Any]:
    """``len(agents)`` writer processes (agent ``agents[n]`` each) at once: writes/s."""
    with tempfile.TemporaryDirectory(prefix="kronika-team-writers-") as tmp:
        collect(
            spawn(python_path, {"agents": [url, str(Path(tmp) / "setup"), sorted(set(agents))]})
        )
        procs = []
        for n, agent in enumerate(agents):
            home = Path(tmp) / f"w{n}"
            job = {"writer": [url, str(home), agent, f"w{n}", seconds]}
            procs.append(spawn(python_path, job))
        deadline = time.monotonic() + 300
        while not all((Path(tmp) / f"w{n}" / "ready").exists() for n in range(len(agents))):
            if any(p.poll() is not None for p in procs) or time.monotonic() > deadline:
                break
            time.sleep(0.01)
        (Path(tmp) / "go").write_text("1", encoding="utf-8")
        results = [collect(p) for p in procs]
    writes = sum(r["writes"] for r in results)
    return {
        "writers": len(agents),
        "agents": len(set(agents)),
        "writes": writes,
        "per_s": writes / max(r["seconds"] for r in results),
    }


# ----------------------------------------------------------------------- processes
_RUN = (
    "import runpy, sys; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')"
)
"""Runs this file as a script without putting its folder on ``sys.path``."""


def spawn(python_path: str, job: dict[str, Any], script: str = __file__) -> subprocess.Popen[str]:
    """``script`` (a bench module's file) run as a process with kronika found under
    ``python_path``, given ``job``; its answer is read by :func:`collect`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KRONIKA_")}
    env["PYTHONPATH"] = python_path
    return subprocess.Popen(
        [sys.executable, "-c", _RUN, script, json.dumps(job)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def collect(proc: subprocess.Popen[str]) -> dict[str, Any]:
    out, err = proc.communicate(timeout=7200)
    if proc.returncode != 0:
        from kronika import KronikaError

        raise KronikaError(f"a benchmark process failed: {err.strip()[-2000:]}")
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return result


def own_src() -> str:
    return str(Path(__file__).resolve().parents[2])


def alternating(trees: Sequence[tuple[str, str]], turn: int) -> list[tuple[str, str]]:
    """``trees`` in the order measurement ``turn`` (0, 1, …) runs them: as given on even
    turns, reversed on odd ones (A B, B A, A B, …), so that a machine growing faster or
    slower through a run favours neither tree."""
    return list(trees) if turn % 2 == 0 else list(reversed(trees))


def run_team_writes(
    sizes: Sequence[int] = (1_000, 10_000),
    *,
    index: str = "postgres",
    calls: int = 200,
    budget_s: float = 60.0,
    before: str | None = None,
    writers: int = 2,
    writer_s: float = 15.0,
    queries: int = 50,
    batch: int = 1_000,
    floor: bool = True,
    rounds: int = 1,
    sessions: int = 0,
    progress: Callable[[str, int, int], None] | None = None,
) -> dict[str, Any]:
    """Time ``remember()`` in team mode at each size, ``sessions`` short conversations
    stored beside the facts (with the tree at ``before`` too, interleaved), ``recall``
    of ``queries`` questions and ``remember_many`` of ``batch`` facts, the plain psycopg
    floor beside them (unless ``floor`` is false), then ``writers`` processes side by
    side (see the module), in ``rounds`` rounds that interleave the trees; with no
    ``sizes``, the writers side by side alone."""
    from kronika.bench.postgres import postgres_site
    from kronika.bench.report import table
    from kronika.bench.scale import synthetic_queries

    trees = [("after", own_src())] + ([("before", before)] if before else [])
    questions = synthetic_queries(queries + 1) if queries else []  # the first warms up
    rows: list[dict[str, Any]] = []
    floors: list[dict[str, Any]] = []
    concurrency: list[dict[str, Any]] = []
    turns: list[dict[str, Any]] = []
    with postgres_site(index) as site:
        if site is None:
            from kronika import InvalidInput

            raise InvalidInput("bench team-writes needs --index postgres or postgres=URL")
        for n, size in enumerate(sizes):
            for label, src in alternating(trees, n):
                if progress:
                    progress(f"remember @{size:,} ({label})", n, len(sizes))
                with site.database() as url:
                    job = {"size": [url, size, calls, budget_s, questions, batch, sessions]}
                    rows.append({"tree": label, "at": n, **collect(spawn(src, job))})
            if floor:  # beside the rows of this size's turn (a size may come again)
                if progress:
                    progress(f"psycopg floor @{size:,}", n, len(sizes))
                with site.database() as url:
                    job = {"floor": [url, size, calls, budget_s, questions, batch]}
                    floors.append({"at": n, **collect(spawn(own_src(), job))})
        if writers > 1:
            layouts = [
                ("one agent each", [f"agent{n}" for n in range(writers)]),
                ("one agent, own keys", ["shared"] * writers),
                ("one writer", ["agent0"]),
            ]
            for turn in range(rounds):
                for label, src in alternating(trees, turn):
                    for what, agents in layouts:
                        if progress:
                            progress(f"{writers} writers, {what} ({label})", turn, rounds)
                        with site.database() as url:
                            row = measure_writers(url, src, agents, writer_s)
                        concurrency.append({"tree": label, "layout": what, "round": turn, **row})
            for n, size in enumerate(sizes):  # two workers in turn on one agent
                for label, src in alternating(trees, n):
                    if progress:
                        progress(f"two workers in turn @{size:,} ({label})", n, len(sizes))
                    with site.database() as url:
                        job = {"turns": [url, size, min(calls, IN_TURN)]}
                        turns.append({"tree": label, **collect(spawn(src, job, TURNS))})
    return _results(rows, floors, concurrency, calls, table, turns)


def _results(
    rows: list[dict[str, Any]],
    floors: list[dict[str, Any]],
    concurrency: list[dict[str, Any]],
    calls: int,
    table: Callable[[str, list[str], list[list[str]]], dict[str, Any]],
    turns: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    from kronika.bench.fixed import FixedVectors

    tables = [
        table(
            f"remember() in team mode, embedding excluded (median of up to {calls} calls)",
            [
                "stored",
                "code",
                "remember() /s",
                "median ms",
                "p95 ms",
                "CPU ms",
                "record_items rows ins/upd/del per call",
                "record_documents ins/upd/del",
                "idx_items rows ins/upd/del",
                "largest documents (path, bytes, items)",
                "archived fact changed / refreshed, ms",
                "rows per archived change: record_items, idx_items ins/upd/del",
            ],
            [
                [
                    _stored(r),
                    r["tree"],
                    f"{r['per_s']:.1f}",
                    f"{r['median_ms']:.1f}",
                    f"{r['p95_ms']:.1f}",
                    f"{r['cpu_ms']:.1f}",
                    _rows_of(r["rows_per_call"], "record_items"),
                    _rows_of(r["rows_per_call"], "record_documents"),
                    _rows_of(r["rows_per_call"], "idx_items"),
                    "; ".join(f"{p} {b:,} B {c}" for p, b, c in r["largest_documents"][:3]),
                    _archived(r),
                    _archived_rows(r),
                ]
                for r in rows
            ],
        ),
        table(
            f"Where a remember() spends its time (ms per call, cProfile of {PROFILED} calls;"
            " steps nest)",
            ["stored", "code", *(label for label, _ in STEPS)],
            [
                [f"{r['size']:,}", r["tree"], *(f"{r['steps_ms'][s]:.1f}" for s, _ in STEPS)]
                for r in rows
            ],
        ),
    ]
    tables = tables if rows else []  # none with the writers side by side alone
    floor_at = {f["at"]: f for f in floors}
    beside = [(r, floor_at[r["at"]]) for r in rows if r.get("at") in floor_at]
    if beside:
        tables.insert(0, _floor_table(beside, table))
    if concurrency:
        tables.append(
            table(
                "Writers side by side in one tenant (remember() per second, all writers;"
                " against one writer of the same code in the same round)",
                ["round", "code", "layout", "writers", "writes", "writes /s", "× one writer"],
                [
                    [
                        str(c.get("round", 0)),
                        c["tree"],
                        c["layout"],
                        str(c["writers"]),
                        str(c["writes"]),
                        f"{c['per_s']:.1f}",
                        _against_one(c, concurrency),
                    ]
                    for c in concurrency
                ],
            )
        )
    if turns:
        tables.append(_in_turn(turns, table))
    return {
        "benchmark": "team-writes",
        "dataset": "synthetic keyed facts (seeded)",
        "embedder": FixedVectors.model_id,
        "sizes": rows,
        "writers": concurrency,
        "in_turn": list(turns),
        "floors": floors,
        "headline": {f"remember_per_s@{r['size']}_{r['tree']}": r["per_s"] for r in rows}
        | {
            f"{name}@{r['size']}_{r['tree']}": value
            for r, f in beside
            for name, value in _ratios(r, f).items()
            if value is not None
        },
        "tables": tables,
    }


def _archived(row: dict[str, Any]) -> str:
    if "archived_change_ms" not in row:
        return "–"
    return f"{row['archived_change_ms']:.1f} / {row['archived_refresh_ms']:.1f}"


def _archived_rows(row: dict[str, Any]) -> str:
    got = row.get("archived_rows_per_call")
    if not got:
        return "–"
    return ", ".join(_rows_of(got, t) for t in ("record_items", "idx_items"))


def _rows_of(got: dict[str, float], what: str) -> str:
    """Rows of table ``what`` inserted/updated/deleted per call, from ``got``."""
    return "/".join(f"{got.get(f'{what}_{k}', 0):.1f}" for k in ("ins", "upd", "del"))


def _against_one(row: dict[str, Any], rows: Sequence[dict[str, Any]]) -> str:
    """``row``'s writes per second against one writer's of its code and round."""
    alone = [
        r["per_s"]
        for r in rows
        if r["writers"] == 1 and r["tree"] == row["tree"] and r.get("round") == row.get("round")
    ]
    return f"{row['per_s'] / alone[0]:.2f}" if alone and alone[0] else "–"


def _in_turn(
    turns: Sequence[dict[str, Any]],
    table: Callable[[str, list[str], list[list[str]]], dict[str, Any]],
) -> dict[str, Any]:
    """The table of two workers in turn on one agent (:mod:`kronika.bench.team_turns`)."""
    return table(
        "Two workers in turn on one agent (remember(), mean per call; each call first"
        " pulls what the other wrote)",
        ["stored", "code", "calls each", "first CPU ms", "second CPU ms", "first ms", "second ms"],
        [
            [f"{t['size']:,}", t["tree"], str(t["calls"])]
            + (
                [f"{t[f'{w}_{what}']:.1f}" for what in ("cpu_ms", "mean_ms") for w in WORKERS]
                if "skipped" not in t
                else ["–"] * 4
            )
            for t in turns
        ],
    )


def _ratios(row: dict[str, Any], floor: dict[str, Any]) -> dict[str, float | None]:
    """kronika/floor, each a rate over a rate (1 = as fast as the floor): ``remember()``
    against single inserts, recall (p50 times, the floor's over kronika's) and
    ``remember_many`` and ``save_turns`` against the batch insert."""

    def share(mine: float, theirs: float) -> float | None:
        return mine / theirs if mine > 0 and theirs > 0 else None

    return {
        "remember_vs_floor": share(row["per_s"], floor["per_call_per_s"]),
        "recall_vs_floor": share(floor.get("recall_p50_ms", 0.0), row.get("recall_p50_ms", 0.0)),
        "remember_many_vs_floor": share(
            row.get("remember_many_per_s", 0.0), floor.get("batch_items_per_s", 0.0)
        ),
        "save_turns_vs_floor": share(
            row.get("save_turns_per_s", 0.0), floor.get("batch_items_per_s", 0.0)
        ),
    }


def _floor_table(
    beside: list[tuple[dict[str, Any], dict[str, Any]]],
    table: Callable[[str, list[str], list[list[str]]], dict[str, Any]],
) -> dict[str, Any]:
    """kronika beside the plain psycopg floor, size by size, with kronika/floor."""

    def ratio(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}×"

    def measured(value: float, form: str) -> str:  # 0: the part was skipped
        return format(value, form) if value > 0 else "-"

    out = []
    for r, f in beside:
        got = _ratios(r, f)
        out.append(
            [
                f"{r['size']:,}",
                r["tree"],
                f"{r['per_s']:.1f}",
                f"{f['per_call_per_s']:.1f}",
                ratio(got["remember_vs_floor"]),
                measured(r.get("recall_p50_ms", 0.0), ".2f"),
                measured(f["recall_p50_ms"], ".2f"),
                ratio(got["recall_vs_floor"]),
                measured(r.get("remember_many_per_s", 0.0), ",.0f"),
                measured(f["batch_items_per_s"], ",.0f"),
                ratio(got["remember_many_vs_floor"]),
                measured(r.get("save_turns_per_s", 0.0), ",.0f"),
                ratio(got["save_turns_vs_floor"]),
            ]
        )
    batch = beside[0][1]["batch"]
    return table(
        "kronika beside the plain psycopg floor (same server, same run; embedding excluded;"
        " kronika/floor as rates, 1 = the floor's speed)",
        [
            "stored",
            "code",
            "remember() /s",
            "floor INSERT+COMMIT /s",
            "remember vs floor",
            "recall p50 ms",
            "floor recall p50 ms",
            "recall vs floor",
            f"remember_many({batch:,}) items/s",
            "floor batch items/s",
            "remember_many vs floor",
            f"save_turns({batch:,}) turns/s",
            "save_turns vs floor",
        ],
        out,
    )


def _main(argv: Sequence[str]) -> int:
    job = json.loads(argv[0])
    if "size" in job:
        result = measure_size(*job["size"])
    elif "floor" in job:
        result = measure_floor(*job["floor"])
    elif "agents" in job:
        result = make_agents(*job["agents"])
    else:
        result = writer(*job["writer"])
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
