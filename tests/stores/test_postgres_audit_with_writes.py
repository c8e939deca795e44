"""In team mode a write and its audit entry commit together: one transaction, so a
reader never sees one without the other, and an entry audited with no write (a refusal)
or by a thread that does not hold the lock is still kept."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kronika import build_memory, load_settings
from kronika.errors import PermissionDenied
from kronika.ports import AuditEntry
from kronika.settings import Settings

psycopg = pytest.importorskip("psycopg", reason="the postgres extra is not installed")


def _settings(home: Path, url: str) -> Settings:
    return load_settings(home, environ={}, embedder="hashing", database_url=url)


def _transaction_of_audit(url: str, summary_part: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT xmin::text::bigint FROM record_audit WHERE summary LIKE %s",
            (f"%{summary_part}%",),
        ).fetchone()
    assert row is not None, f"no audit entry says {summary_part!r}"
    return int(row[0])


def test_a_remembered_fact_and_its_audit_entry_are_one_commit(
    postgres_url: str, tmp_path: Path
) -> None:
    with build_memory(_settings(tmp_path / "w", postgres_url)) as memory:
        memory.remember("Lisbon", key="city")
        memory.remember_many(
            [{"content": "Porto", "key": "trip"}, {"content": "cello", "key": "instrument"}]
        )
    with psycopg.connect(postgres_url) as conn:
        written = {
            int(x)
            for (x,) in conn.execute(
                "SELECT xmin::text::bigint FROM record_items WHERE content LIKE 'city:%'"
                " OR content LIKE 'trip:%'"
            ).fetchall()
        }
    assert _transaction_of_audit(postgres_url, "Lisbon") in written
    assert _transaction_of_audit(postgres_url, "Porto") in written


def test_an_entry_with_no_write_is_kept_when_the_lock_is_let_go(
    postgres_url: str, tmp_path: Path
) -> None:
    home = tmp_path / "w"
    home.mkdir()
    (home / "kronika.toml").write_text("[agents.readonly]\nautonomy = 0\n")
    with build_memory(_settings(home, postgres_url)) as memory:
        memory.create_agent("readonly")
        with pytest.raises(PermissionDenied, match="read-only"):
            memory.remember_many(["a", "b"], agent="readonly", source_agent="readonly")
    with build_memory(_settings(tmp_path / "other", postgres_url)) as other:
        assert [e.outcome for e in other.audit(agent="readonly")] == ["denied"]


def test_another_threads_entry_is_not_held_back_by_a_hold(
    postgres_url: str, tmp_path: Path
) -> None:
    entry = AuditEntry(
        datetime(2026, 11, 29, tzinfo=UTC),
        "note",
        "default",
        "user",
        "Notes",
        None,
        "from the other thread",
        "applied",
    )
    with build_memory(_settings(tmp_path / "w", postgres_url)) as memory, memory.lock:
        # this thread holds the record's lock; the other thread's entry is no part of it
        other = threading.Thread(target=memory.audit_log.append, args=(entry,))
        other.start()
        other.join(30)
        assert _transaction_of_audit(postgres_url, "from the other thread") > 0
