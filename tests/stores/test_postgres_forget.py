"""Forgetting a subject on PostgreSQL leaves none of its bytes in the database: not in
what ``pg_dump`` writes, not in the table files of the data directory (the record's and
the index's tables are rewritten), and — with ``wal_recycle = off``, as
docs/reliability.md advises — not in the WAL (the segments that logged it are switched
away from and deleted)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from kronika import build_memory, load_settings
from kronika.engine.session import Session

pytest.importorskip("psycopg", reason="the postgres extra is not installed")

FORMS = (b"Zhabotynsk", "Жаботинськ".encode())


def _files_holding(root: Path) -> dict[str, list[bytes]]:
    found = {}
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            hit = [f for f in FORMS if f in data]
            if hit:
                found[path.relative_to(root).as_posix()] = hit
    return found


def test_a_forgotten_subject_leaves_no_byte_in_pg_dump_table_files_or_wal(
    postgres_server: object, postgres_url: str, tmp_path: Path
) -> None:
    from kronika.stores.postgres.embedded import LocalPostgres, binaries

    assert isinstance(postgres_server, LocalPostgres)
    _wal_recycle(postgres_server, "off")  # the segments that logged it are deleted, not kept
    try:
        _forget_and_look(postgres_server, postgres_url, tmp_path, binaries())
    finally:
        _wal_recycle(postgres_server, "on")


def _wal_recycle(server: object, value: str) -> None:
    import psycopg

    from kronika.stores.postgres.embedded import LocalPostgres

    assert isinstance(server, LocalPostgres)
    with psycopg.connect(server.url(), autocommit=True) as conn:
        conn.execute(f"ALTER SYSTEM SET wal_recycle = {value}")
        conn.execute("SELECT pg_reload_conf()")


def _forget_and_look(server: object, postgres_url: str, tmp_path: Path, bin: Path) -> None:
    from kronika.stores.postgres.embedded import LocalPostgres

    assert isinstance(server, LocalPostgres)
    settings = load_settings(
        tmp_path / "ws", environ={}, embedder="hashing", database_url=postgres_url
    )
    with build_memory(settings) as memory:
        memory.note("Dmytro Zhabotynsky owes me 200 euro")
        memory.remember(key="neighbour", value="Dmytro Zhabotynsky")
        session = Session(memory)
        session.user("Wczoraj widziałam Dmytra Zhabotynskiego. I also like jazz.")
        session.user("Дмитро Жаботинський живе поруч.")
        dump = [str(bin / "pg_dump"), "--data-only", postgres_url]
        assert any(f in subprocess.run(dump, capture_output=True, check=True).stdout for f in FORMS)
        receipt = memory.forget(topic="Dmytro Zhabotynsky")
        assert receipt.applied
        receipt = memory.forget(topic="Дмитро Жаботинський")
        assert receipt.applied
        assert "I also like jazz." in memory.load_session(session.session_id or "")[0].content

    out = subprocess.run(dump, capture_output=True, check=True).stdout
    assert [f for f in FORMS if f in out] == []
    assert _files_holding(server.data) == {}  # table files and WAL segments alike
    assert _files_holding(tmp_path / "ws") == {}  # the working copy and its files
