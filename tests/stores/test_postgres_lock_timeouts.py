"""A team worker whose statements meet the database's ``lock_timeout`` (a role or
database setting many deployments have) fails those calls with kronika's error, or
leaves the search index behind for a moment, and goes on working once the lock is
free: a statement skipped after the one that timed out leaves nothing behind on the
worker's connections, and a write the record refused is not in the worker's folder
either (its next write would otherwise send it after all)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from kronika import build_memory, load_settings
from kronika.errors import KronikaError

psycopg = pytest.importorskip("psycopg", reason="the postgres extra is not installed")


# a table the record's write touches after others in one stream, and one the search
# index's write does (a write the index misses is made by the next one)
@pytest.mark.parametrize("table", ["record_agents", "idx_terms"])
def test_calls_that_time_out_on_a_lock_leave_the_worker_working(
    postgres_url: str, tmp_path: Path, table: str
) -> None:
    database = postgres_url.rsplit("/", 1)[1]
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute(f"ALTER DATABASE {database} SET lock_timeout = '300ms'")
    settings = load_settings(
        tmp_path / "h", environ={}, embedder="hashing", database_url=postgres_url
    )
    with build_memory(settings, create=True) as memory:
        memory.remember("the garden needs water", key="garden")
        # psycopg prepares a statement on its sixth run: every count is met once
        for n in range(8):
            with psycopg.connect(postgres_url) as blocker:
                (schema,) = blocker.execute(
                    "SELECT table_schema FROM information_schema.tables WHERE table_name = %s",
                    (table,),
                ).fetchone()
                blocker.execute(f'LOCK TABLE "{schema}".{table} IN ACCESS EXCLUSIVE MODE')
                if table.startswith("record_"):
                    with pytest.raises(KronikaError):
                        memory.remember(f"a blocked fact {n}", key=f"blocked_{n}")
                    # refused by the record: not in this worker's memory either
                    assert f"blocked_{n}" not in {fact.key for fact in memory.facts()}
                else:  # kept in the record; the index catches up with a later write
                    memory.remember(f"a late fact {n}", key=f"late_{n}")
                blocker.rollback()  # the lock is free again
            memory.remember(f"the plan number {n} is ready", key=f"plan_{n}")
            memory.save_turn("talk", "user", f"turn {n}: the plan is on its way")
            found = [hit.item.content for hit in memory.recall(f"plan number {n}", k=3).hits]
            assert f"plan_{n}: the plan number {n} is ready" in found
        keys = {fact.key for fact in memory.facts()}
        late = [hit.item.key for hit in memory.recall("a late fact", k=20).hits]
    assert {f"plan_{n}" for n in range(8)} <= keys
    if table.startswith("record_"):
        assert not {f"blocked_{n}" for n in range(8)} & keys
    else:
        assert {f"late_{n}" for n in range(8)} <= keys
        assert {f"late_{n}" for n in range(8)} <= set(late)


def test_a_refused_write_is_undone_by_the_next_call_when_the_record_was_gone(
    postgres_url: str, tmp_path: Path
) -> None:
    """The worker's connection dies while its write waits for a lock: the record cannot
    be read to undo the write at once, so the next call that reaches it, a read or a
    write, undoes it before anything else."""
    settings = load_settings(
        tmp_path / "h", environ={}, embedder="hashing", database_url=postgres_url
    )
    with build_memory(settings, create=True) as memory:
        memory.remember("the garden needs water", key="garden")
        with (
            psycopg.connect(postgres_url) as blocker,
            psycopg.connect(postgres_url, autocommit=True) as admin,
        ):
            (schema,) = blocker.execute(
                "SELECT table_schema FROM information_schema.tables"
                " WHERE table_name = 'record_agents'"
            ).fetchone()
            blocker.execute(f'LOCK TABLE "{schema}".record_agents IN ACCESS EXCLUSIVE MODE')

            def end_the_waiting_connection() -> None:
                for _ in range(500):
                    waiting = admin.execute(
                        "SELECT pid FROM pg_locks WHERE NOT granted AND pid <> %s",
                        (blocker.info.backend_pid,),
                    ).fetchall()
                    if waiting:
                        admin.execute("SELECT pg_terminate_backend(%s)", waiting[0])
                        return
                    time.sleep(0.01)

            ender = threading.Thread(target=end_the_waiting_connection)
            ender.start()
            with pytest.raises(KronikaError):
                memory.remember("a fact whose connection died", key="orphan")
            ender.join()
            blocker.rollback()
        # a read reaches the record again: the refused write is undone before it
        assert "orphan" not in {fact.key for fact in memory.facts()}
        memory.remember("the plan is ready", key="plan")  # undoes the refused write first
        keys = {fact.key for fact in memory.facts()}
        notes = memory.notes
    assert {"garden", "plan"} <= keys
    assert "orphan" not in keys
    assert any("refused a write" in note for note in notes)
    with psycopg.connect(postgres_url) as conn:
        (held,) = conn.execute("SELECT count(*) FROM record_items WHERE key = 'orphan'").fetchone()
    assert held == 0
