"""Forgetting a subject on PostgreSQL leaves none of its bytes in the database: not in
what ``pg_dump`` writes, not in the table files of the data directory (the record's and
the index's tables are rewritten); the WAL that logged it is switched away from."""

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


def test_a_forgotten_subject_leaves_no_byte_in_pg_dump_or_table_files(
    postgres_server: object, postgres_url: str, tmp_path: Path
) -> None:
    from kronika.stores.postgres.embedded import LocalPostgres, binaries

    assert isinstance(postgres_server, LocalPostgres)
    settings = load_settings(
        tmp_path / "ws", environ={}, embedder="hashing", database_url=postgres_url
    )
    with build_memory(settings) as memory:
        memory.note("Dmytro Zhabotynsky owes me 200 euro")
        memory.remember(key="neighbour", value="Dmytro Zhabotynsky")
        session = Session(memory)
        session.user("Wczoraj widziałam Dmytra Zhabotynskiego. I also like jazz.")
        session.user("Дмитро Жаботинський живе поруч.")
        dump = [str(binaries() / "pg_dump"), "--data-only", postgres_url]
        assert any(f in subprocess.run(dump, capture_output=True, check=True).stdout for f in FORMS)
        receipt = memory.forget(topic="Dmytro Zhabotynsky")
        assert receipt.applied
        receipt = memory.forget(topic="Дмитро Жаботинський")
        assert receipt.applied
        assert "I also like jazz." in memory.load_session(session.session_id or "")[0].content

    out = subprocess.run(dump, capture_output=True, check=True).stdout
    assert [f for f in FORMS if f in out] == []
    left = _files_holding(postgres_server.data)
    tables = {p: f for p, f in left.items() if not p.startswith("pg_wal/")}
    assert tables == {}
    # The WAL: the segments that logged the text are switched away from and recycled at
    # the checkpoint, but PostgreSQL reuses a recycled segment's file as it is, so its
    # bytes stay until it is written over (docs/reliability.md says what remains).
    assert set(left) - set(tables) <= {p for p in left if p.startswith("pg_wal/")}
    assert _files_holding(tmp_path / "ws") == {}  # the working copy and its files
