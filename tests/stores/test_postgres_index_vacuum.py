"""When the PostgreSQL index vacuums its tables after a sync (``docs/postgres-index.md``):
when an item or a text is gone for good, so its dead rows are pruned at once, and not
when a fact only moved from one file to another (the archive to the history), whose
id and text are still held."""

from __future__ import annotations

from pathlib import Path

import pytest

from kronika import build_memory, load_settings

psycopg = pytest.importorskip("psycopg", reason="the postgres extra is not installed")


def _vacuums(url: str) -> int:
    """How many times ``idx_items`` was vacuumed by hand (autovacuum counted apart)."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT vacuum_count FROM pg_stat_user_tables WHERE relname = 'idx_items'"
        ).fetchone()
    assert row is not None
    return int(row[0])


def test_a_fact_moved_to_the_history_runs_no_vacuum_and_a_fact_removed_does(
    postgres_url: str, tmp_path: Path
) -> None:
    settings = load_settings(
        tmp_path / "home",
        environ={},
        embedder="hashing",
        database_url=postgres_url,
        brain_max=60,
        brain_budget=40,
    )
    with build_memory(settings, create=True) as memory:
        memory.remember_many([{"key": f"k{n}", "value": f"value number {n}"} for n in range(90)])
        archived = sorted(f.key for f in memory.workspace.archived_facts("default") if f.key)
        assert len(archived) > 30, "the Brain's budget archived most facts"
        before = _vacuums(postgres_url)
        for key in archived[:3]:  # each leaves the archive, its old value kept as history
            memory.remember(f"a new value of {key}", key=key)
        assert {f.key: f.value for f in memory.facts()}[archived[0]] == (
            f"a new value of {archived[0]}"
        )
        assert [v.value for v in memory.history(archived[0])] == [
            f"value number {archived[0][1:]}",
            f"a new value of {archived[0]}",
        ]
        assert _vacuums(postgres_url) == before
        # a fact taken out of the archive by hand: its id and text are gone for good
        archive = memory.workspace.agent_dir("default") / "brain_archive.md"
        lines = archive.read_text(encoding="utf-8").splitlines(keepends=True)
        gone = next(n for n, line in enumerate(lines) if line.startswith(f"- **{archived[5]}**"))
        archive.write_text("".join(lines[:gone] + lines[gone + 1 :]), encoding="utf-8")
        memory.sync("default")
        assert archived[5] not in {f.key for f in memory.workspace.archived_facts("default")}
        assert _vacuums(postgres_url) > before
        # a note line removed by hand whose text another line still holds: its id is gone
        # for good, though no vector went
        notes = memory.workspace.agent_dir("default") / "memory" / "2026-01-05.md"
        notes.write_text("# 2026-01-05\n\n- the boiler was serviced\n- the boiler was serviced\n")
        memory.sync("default")
        twice = [i.id for i in memory.index.source_items("default", "memory/2026-01-05.md")]
        assert len(set(twice)) == 2
        before = _vacuums(postgres_url)
        notes.write_text("# 2026-01-05\n\n- the boiler was serviced\n")
        memory.sync("default")
        assert len(memory.index.source_items("default", "memory/2026-01-05.md")) == 1
        assert _vacuums(postgres_url) > before
