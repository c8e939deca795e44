"""Forgetting a subject on PostgreSQL leaves none of its bytes in the database: not in
what ``pg_dump`` writes, not in the table files of the data directory (the record's and
the index's tables are rewritten), and not in the WAL with the server's default
``wal_recycle = on`` (the segment files that logged it, kept for reuse with their
bytes, are written over)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from kronika import build_memory, load_settings
from kronika.workflows.session import Session

pytest.importorskip("psycopg", reason="the postgres extra is not installed")

FORMS = (b"Zhabotynsk", "Жаботинськ".encode())


def _files_holding(root: Path, others: tuple[str, ...] = ()) -> dict[str, list[bytes]]:
    """The files under ``root`` that hold a form of the name, but for those under
    ``others`` (the folders of the server's other databases, which never saw it: a
    server shared by a whole test run holds hundreds)."""
    found = {}
    for path in root.rglob("*"):
        if path.is_file() and not path.relative_to(root).as_posix().startswith(others):
            data = path.read_bytes()
            hit = [f for f in FORMS if f in data]
            if hit:
                found[path.relative_to(root).as_posix()] = hit
    return found


def _other_databases(conn: Any) -> tuple[str, ...]:
    """The folders of the server's databases but ``conn``'s (which never saw the name:
    a server shared by a whole test run holds hundreds), for :func:`_files_holding`."""
    return tuple(
        f"base/{oid}/"
        for (oid,) in conn.execute(
            "SELECT oid FROM pg_database WHERE datname <> current_database()"
        )
    )


def test_a_forgotten_subject_leaves_no_byte_in_pg_dump_table_files_or_wal(
    postgres_server: object, postgres_url: str, tmp_path: Path
) -> None:
    import psycopg

    from kronika.stores.postgres.embedded import LocalPostgres, binaries

    assert isinstance(postgres_server, LocalPostgres)
    with psycopg.connect(postgres_server.url(), autocommit=True) as conn:
        assert conn.execute("SHOW wal_recycle").fetchone() == ("on",)  # the default
    _forget_and_look(postgres_server, postgres_url, tmp_path, binaries())


def _forget_and_look(
    server: object, postgres_url: str, tmp_path: Path, bin: Path, *, kept: tuple[str, ...] = ()
) -> None:
    import psycopg

    from kronika.stores.postgres.embedded import LocalPostgres

    assert isinstance(server, LocalPostgres)
    admin = server.url(postgres_url.rsplit("/", 1)[1])  # the superuser, in that database
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
        with psycopg.connect(admin, autocommit=True) as conn:
            # autovacuum does this on its own once enough rows changed: the planner's
            # statistics then sample the values, the name among them
            conn.execute("ANALYZE")
            assert _in_statistics(conn) != []
            conn.execute("CHECKPOINT")  # the table files hold it too
            others = _other_databases(conn)
        before = _files_holding(server.data, others)
        assert any(p.startswith("pg_wal/") for p in before)
        assert any(p.startswith("base/") for p in before)
        receipt = memory.forget(topic="Dmytro Zhabotynsky")
        assert receipt.applied
        receipt = memory.forget(topic="Дмитро Жаботинський")
        assert receipt.applied
        assert "I also like jazz." in memory.load_session(session.session_id or "")[0].content

    with psycopg.connect(admin, autocommit=True) as conn:
        assert _in_statistics(conn) == []
        statistics = conn.execute("SELECT pg_relation_filepath('pg_statistic')").fetchone()
    out = subprocess.run(dump, capture_output=True, check=True).stdout
    assert [f for f in FORMS if f in out] == []
    # what a role without the grants could not reach, and the log said so
    may_keep = [(statistics or ("",))[0] if k == "statistics" else k for k in kept]
    left = _files_holding(server.data, others)
    left = {p: f for p, f in left.items() if not p.startswith(tuple(may_keep))}
    assert left == {}  # table files and WAL segments alike
    assert _files_holding(tmp_path / "ws") == {}  # the working copy and its files


_roles = iter(range(1, 1_000_000))


@pytest.mark.parametrize(
    ("grants", "warned", "kept"),
    [
        (["pg_checkpoint", "pg_monitor", "pg_maintain"], [], ()),
        (["pg_checkpoint", "pg_maintain"], ["without seeing it"], ("pg_wal/",)),
        ([], ["pg_statistic not rewritten", "WAL not written over"], ("pg_wal/", "statistics")),
    ],
    ids=["documented-grants", "no-pg_monitor", "no-grants"],
)
def test_a_forget_by_a_role_that_is_not_superuser(
    postgres_server: object,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    grants: list[str],
    warned: list[str],
    kept: tuple[str, ...],
) -> None:
    """An owner role with the grants docs/deployment.md lists forgets as cleanly as a
    superuser; without them what it could not do is said in the log."""
    import psycopg

    from kronika.stores.postgres.embedded import LocalPostgres, binaries

    assert isinstance(postgres_server, LocalPostgres)
    role = f"app{next(_roles)}"
    with psycopg.connect(postgres_server.url(), autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN")
        for grant in grants:
            conn.execute(f"GRANT {grant} TO {role}")
        conn.execute(f"CREATE DATABASE {role} OWNER {role}")
    with psycopg.connect(postgres_server.url(role), autocommit=True) as conn:
        if "pg_checkpoint" in grants:  # a function's grant holds in its database only
            conn.execute(f"GRANT EXECUTE ON FUNCTION pg_switch_wal() TO {role}")
        for extension in ("vector", "unaccent", "pg_trgm"):  # what the superuser installs
            conn.execute(f"CREATE EXTENSION {extension}")
    url = postgres_server.url(role).replace("postgres@", f"{role}@", 1)
    with caplog.at_level("WARNING"):
        _forget_and_look(postgres_server, url, tmp_path, binaries(), kept=kept)
    logged = " ".join(r.getMessage() for r in caplog.records if r.levelname == "WARNING")
    assert [w for w in warned if w not in logged] == []
    if not warned:
        assert "after a forget" not in logged


def _in_statistics(conn: Any) -> list[tuple[str, str]]:
    """The columns whose statistics (``pg_stats``, readable by the tables' owner) show
    one of the forms."""
    rows = conn.execute(
        "SELECT tablename, attname FROM pg_stats"
        " WHERE schemaname NOT IN ('pg_catalog', 'information_schema')"
        " AND concat(most_common_vals::text, histogram_bounds::text) ~ %s",
        ("Zhabotynsk|Жаботинськ",),
    ).fetchall()
    return [(str(t), str(a)) for t, a in rows]


def test_a_forget_builds_the_vector_graph_again_in_the_background(
    postgres_url: str, tmp_path: Path
) -> None:
    """The HNSW index is dropped before the tables are rewritten (``VACUUM FULL`` would
    build it again under the table's lock) and built again from the rows left."""
    import psycopg

    from kronika.stores.postgres.index import PostgresIndex

    settings = load_settings(
        tmp_path / "ws",
        environ={},
        embedder="hashing",
        database_url=postgres_url,
        postgres_ann_threshold=2,
    )
    with build_memory(settings) as memory:
        for n, value in enumerate(("Dmytro Zhabotynsky", "the garden wants water", "jazz")):
            memory.remember(key=f"k{n}", value=value)
        index = getattr(memory.index, "inner", memory.index)
        assert isinstance(index, PostgresIndex)
        assert index.wait_for_vector_graph(120)
        graph = "SELECT indexrelid FROM pg_index WHERE indexrelid::regclass::text LIKE '%hnsw%'"
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            (before,) = conn.execute(graph).fetchall()
        memory.forget(key="k0")
        assert index.wait_for_vector_graph(120)
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            after = conn.execute(graph).fetchall()
        assert len(after) == 1 and after != [before]  # a new index, not the old one kept
        found = [hit.item.content for hit in memory.recall("garden water").hits]
        assert any("garden" in text for text in found)
        assert not any("Zhabotynsky" in text for text in found)


def test_a_forget_does_not_wait_forever_for_an_index_build(
    postgres_url: str, tmp_path: Path
) -> None:
    """A graph build (``CREATE INDEX CONCURRENTLY``) waits for every older transaction,
    another worker's write waiting for the forget's team lock among them, while it holds
    a lock ``VACUUM FULL`` waits for: the forget cancels the build and finishes."""
    import threading

    import psycopg

    settings = load_settings(
        tmp_path / "ws", environ={}, embedder="hashing", database_url=postgres_url
    )
    with build_memory(settings) as memory:
        memory.remember(key="neighbour", value="Dmytro Zhabotynsky")
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            (schema,) = conn.execute(
                "SELECT schemaname FROM pg_tables WHERE tablename = 'idx_items'"
            ).fetchone() or ("",)
        older = psycopg.connect(postgres_url)  # a snapshot the build must wait for
        older.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        older.execute("SELECT 1")
        build_error: list[str] = []

        def build() -> None:
            with psycopg.connect(postgres_url, autocommit=True) as conn:
                try:
                    conn.execute(
                        f'CREATE INDEX CONCURRENTLY stuck ON "{schema}".idx_items (content)'
                    )
                except psycopg.Error as exc:
                    build_error.append(str(exc))

        builder = threading.Thread(target=build, daemon=True)
        builder.start()
        forgetting = threading.Thread(target=lambda: memory.forget(key="neighbour"))
        try:
            waiting = "SELECT 1 FROM pg_stat_activity WHERE wait_event = 'virtualxid'"
            _wait_for(postgres_url, waiting)  # the build holds its lock and waits
            forgetting.start()
            forgetting.join(90)
            assert not forgetting.is_alive()  # before: waited as long as the build did
        finally:
            older.rollback()
            older.close()
            builder.join(30)
            forgetting.join(30)
        assert build_error and "cancel" in build_error[0]
        assert memory.recall("Zhabotynsky").hits == ()


def _wait_for(url: str, query: str, timeout: float = 30) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        _until(lambda: conn.execute(query).fetchall(), timeout, query)


def test_another_worker_writes_while_a_forget_rewrites_the_tables(
    postgres_url: str, tmp_path: Path
) -> None:
    """The rewrite after a forget runs once the team's write lock is released: a second
    worker's remember goes through while the forget still waits to rewrite a table."""
    import threading

    import psycopg

    def open_memory(home: str) -> Any:
        return build_memory(
            load_settings(
                tmp_path / home, environ={}, embedder="hashing", database_url=postgres_url
            )
        )

    with open_memory("a") as first, open_memory("b") as second:
        first.remember(key="neighbour", value="Dmytro Zhabotynsky")
        reader = psycopg.connect(postgres_url)  # holds off the rewrite of record_audit
        reader.execute("LOCK TABLE record_audit IN ACCESS SHARE MODE")
        forgetting = threading.Thread(target=lambda: first.forget(key="neighbour"))
        try:
            forgetting.start()
            _wait_for(
                postgres_url,
                "SELECT 1 FROM pg_stat_activity WHERE query LIKE 'VACUUM%record_audit'",
            )
            began = time.monotonic()
            second.remember(key="pet", value="a cat called Mruczek")
            assert time.monotonic() - began < 20
            assert forgetting.is_alive()  # the forget is still waiting to rewrite
        finally:
            reader.rollback()
            reader.close()
            forgetting.join(60)
        assert not forgetting.is_alive()
        assert any("Mruczek" in h.item.content for h in second.recall("Mruczek").hits)
        assert not any("Zhabotynsky" in h.item.content for h in first.recall("Dmytro").hits)


def test_a_replication_slot_holding_the_wal_is_named_in_the_log(
    postgres_server: object, postgres_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """What the server must keep for a replication slot cannot be written over: the
    forget is done and the log says which files still hold the bytes, and why."""
    import psycopg

    from kronika.stores.postgres.embedded import LocalPostgres

    assert isinstance(postgres_server, LocalPostgres)
    settings = load_settings(
        tmp_path / "ws", environ={}, embedder="hashing", database_url=postgres_url
    )
    with psycopg.connect(postgres_server.url(), autocommit=True) as conn:
        conn.execute("SELECT pg_create_physical_replication_slot('standby_one', true)")
    try:
        with build_memory(settings) as memory, caplog.at_level("WARNING"):
            memory.remember(key="neighbour", value="Dmytro Zhabotynsky")
            assert memory.forget(key="neighbour").applied
    finally:
        with psycopg.connect(postgres_server.url(), autocommit=True) as conn:
            conn.execute("SELECT pg_drop_replication_slot('standby_one')")
    logged = " ".join(r.getMessage() for r in caplog.records if r.levelname == "WARNING")
    assert "still keeps hold the forgotten bytes" in logged
    assert "standby_one" in logged


_FORGETTER = textwrap.dedent(
    """
    import sys
    from kronika import build_memory, load_settings

    settings = load_settings(sys.argv[1], environ={}, embedder="hashing", database_url=sys.argv[2])
    with build_memory(settings) as memory:
        memory.forget(topic="Dmytro Zhabotynsky")
    """
)


def test_a_worker_killed_before_the_rewrite_after_its_forget_leaves_it_due(
    postgres_server: object, postgres_url: str, tmp_path: Path
) -> None:
    """A worker killed after its forget was written and before the table files were
    rewritten (its ``VACUUM FULL`` waiting for a table another session reads) leaves
    the forgotten bytes in them; the next worker to open the memory runs the rewrite
    the killed one had noted as due, and no byte of the name is left."""
    import psycopg

    from kronika.stores.postgres.embedded import LocalPostgres

    assert isinstance(postgres_server, LocalPostgres)
    admin = postgres_server.url(postgres_url.rsplit("/", 1)[1])
    settings = load_settings(
        tmp_path / "ws", environ={}, embedder="hashing", database_url=postgres_url
    )
    with build_memory(settings) as memory:
        memory.note("Dmytro Zhabotynsky owes me 200 euro")
        memory.remember(key="neighbour", value="Dmytro Zhabotynsky")
        memory.remember(key="pet", value="a cat called Mruczek")
    with psycopg.connect(admin, autocommit=True) as conn:
        (schema,) = conn.execute(
            "SELECT table_schema FROM information_schema.tables WHERE table_name = 'idx_items'"
        ).fetchone()
        others = _other_databases(conn)
    reader = psycopg.connect(admin)  # holds off the rewrite of the first table
    reader.execute(f'LOCK TABLE "{schema}".idx_items IN ACCESS SHARE MODE')
    worker = subprocess.Popen(
        [sys.executable, "-c", _FORGETTER, str(tmp_path / "ws"), postgres_url],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for(admin, "SELECT 1 FROM pg_stat_activity WHERE query LIKE 'VACUUM%idx_items'")
    finally:
        worker.kill()
        worker.communicate()
        reader.rollback()
        reader.close()
    _wait_for(  # the killed worker's sessions have ended
        admin,
        "SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE datname ="
        " current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid())",
    )
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute("CHECKPOINT")
    assert any(p.startswith("base/") for p in _files_holding(postgres_server.data, others))

    later = load_settings(
        tmp_path / "next", environ={}, embedder="hashing", database_url=postgres_url
    )
    with build_memory(later) as other:  # another worker, another folder
        assert not any("Zhabotynsky" in h.item.content for h in other.recall("Dmytro").hits)
        assert any("Mruczek" in h.item.content for h in other.recall("Mruczek").hits)
        with psycopg.connect(admin, autocommit=True) as conn:
            assert (
                conn.execute(
                    f"SELECT key FROM \"{schema}\".idx_meta WHERE starts_with(key, 'forget_due:')"
                ).fetchall()
                == []
            )
    assert _files_holding(postgres_server.data, others) == {}  # table files and WAL alike


def test_a_forget_approved_in_team_mode_leaves_no_byte(
    postgres_server: object, postgres_url: str, tmp_path: Path
) -> None:
    """At autonomy 1 an agent's forget waits for the person's approval; approved, it is
    written as every forget is: the record's documents and the table files, the
    planner's statistics and the WAL that held the name are rewritten."""

    from kronika.stores.postgres.embedded import LocalPostgres
    from kronika.workflows.tools import call_tool

    assert isinstance(postgres_server, LocalPostgres)
    admin = postgres_server.url(postgres_url.rsplit("/", 1)[1])
    home = tmp_path / "ws"
    home.mkdir()
    (home / "kronika.toml").write_text("[agents.default]\nautonomy = 1\n")
    settings = load_settings(home, environ={}, embedder="hashing", database_url=postgres_url)
    with build_memory(settings) as memory:
        memory.note("Dmytro Zhabotynsky owes me 200 euro")
        memory.remember(key="neighbour", value="Dmytro Zhabotynsky")
        memory.remember(key="pet", value="a cat called Mruczek")
        done = call_tool(memory, "default", "forget", {"topic": "Dmytro Zhabotynsky"})
        assert done["outcome"] == "proposed"
        [proposal] = memory.proposals()
        memory.approve(proposal.id)
        assert memory.proposals() == []
        _forgotten_and_kept(memory)
    assert _left_in_database(postgres_server, admin) == {}  # table files and WAL alike


def test_distilled_turns_cleared_in_team_mode_leave_no_byte(
    postgres_server: object, postgres_url: str, tmp_path: Path
) -> None:
    """``kronika jobs run distill --clear`` removes the turns a session's facts and
    summary were distilled from; on PostgreSQL that is a forget as any other: the
    record's documents and parts, the table files and the WAL that held them are
    rewritten, and the turns said after the distillation stay."""
    import json

    from kronika.app import build_llm
    from kronika.stores.postgres.embedded import LocalPostgres
    from kronika.testing import ScriptedChatServer
    from kronika.workflows.jobs import run_job

    assert isinstance(postgres_server, LocalPostgres)
    admin = postgres_server.url(postgres_url.rsplit("/", 1)[1])
    extraction = {
        "facts": [{"tag": "CORE", "key": "bike", "value": "A neighbour fixed the bike."}],
        "summary": "The user talked about a bike.",
    }
    with ScriptedChatServer([json.dumps(extraction)]) as server:
        settings = load_settings(
            tmp_path / "ws",
            environ={},
            embedder="hashing",
            database_url=postgres_url,
            llm_base_url=server.base_url,
            llm_model="m",
            llm_retries=0,
        )
        with build_memory(settings) as memory:
            memory.remember(key="pet", value="a cat called Mruczek")
            talk = Session(memory, llm=None)
            talk.user("Dmytro Zhabotynsky fixed my bike yesterday.")
            talk.user("Дмитро Жаботинський живе поруч.")
            talk.close()  # no model at hand: queued
            llm = build_llm(settings, minion=True)
            report = run_job(memory, "distill", llm=llm, clear=True)
            assert any("cleared 2 message(s)" in line for line in report.done), report
            assert [f.value for f in memory.facts() if f.key == "bike"] == [
                "A neighbour fixed the bike."
            ]
            _forgotten_and_kept(memory)
    assert _left_in_database(postgres_server, admin) == {}  # table files and WAL alike
    assert _files_holding(tmp_path / "ws") == {}  # the working copy and its files


@pytest.mark.parametrize("said", ["don't remember this", "forget that"])
def test_a_message_taken_back_in_team_mode_leaves_no_byte(
    postgres_server: object, postgres_url: str, tmp_path: Path, said: str
) -> None:
    """ "Don't remember this" (or "forget that" with nothing stored to forget) takes the
    previous message and its answer out of the transcript; on PostgreSQL that is a
    forget as any other: the record's documents and parts, the table files and the WAL
    that held them are rewritten, the messages before it stay, and another worker's
    folder drops them too."""
    from kronika.stores.postgres.embedded import LocalPostgres

    assert isinstance(postgres_server, LocalPostgres)
    admin = postgres_server.url(postgres_url.rsplit("/", 1)[1])

    def settings(folder: str) -> Any:
        return load_settings(
            tmp_path / folder, environ={}, embedder="hashing", database_url=postgres_url
        )

    with build_memory(settings("ws")) as memory, build_memory(settings("other")) as other:
        memory.remember(key="pet", value="a cat called Mruczek")
        talk = Session(memory, llm=None)
        talk.user("I was at the market this morning.")
        talk.user("Dmytro Zhabotynsky owes me 200 euro, Дмитро Жаботинський.")
        other.recall("market")  # the other worker's folder holds the session
        assert _files_holding(tmp_path / "other") != {}
        taken = talk.user(said)
        assert taken.command is not None
        kept = [t.content for t in memory.load_session(talk.session_id or "")]
        assert kept[0] == "I was at the market this morning." and len(kept) <= 2, kept
        _forgotten_and_kept(memory)
        _until(lambda: _files_holding(tmp_path / "other") == {})  # no call of its own
    assert _left_in_database(postgres_server, admin) == {}  # table files and WAL alike
    assert _files_holding(tmp_path / "ws") == {}  # the working copy and its files


def _until(done: Any, seconds: float = 30, what: str = "not within the time") -> None:
    """Until ``done()`` is true, at most ``seconds`` (else fail, saying ``what``)."""
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def _forgotten_and_kept(memory: Any) -> None:
    """Recall finds nothing of the forgotten name, and still the cat it was not about."""
    assert not any("Zhabotynsky" in h.item.content for h in memory.recall("Dmytro").hits)
    assert any("Mruczek" in h.item.content for h in memory.recall("Mruczek").hits)


def _left_in_database(server: Any, admin: str) -> dict[str, list[bytes]]:
    """After a checkpoint, the files of the server's data directory holding the name
    (but for other databases' folders)."""
    import psycopg

    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute("CHECKPOINT")
        others = _other_databases(conn)
    return _files_holding(server.data, others)


@pytest.mark.parametrize("taking_over", [False, True], ids=["alone", "taken-over-meanwhile"])
def test_a_rewrite_noted_due_stays_due_when_its_worker_lost_the_connection(
    postgres_server: object, postgres_url: str, tmp_path: Path, taking_over: bool
) -> None:
    """A lost connection loses the lock that says a worker's note of a rewrite due is
    alive. The worker takes it again with its next call, so another worker opening the
    memory meanwhile does not take the note over and end it with a rewrite run before
    the forget's edits; the note goes only with the rewrite of the worker it is for.
    When another worker is taking the note over just then (its lock held), the worker
    notes the rewrite anew, and its forget's token stands for the new note."""
    import psycopg

    from kronika.errors import StoreError
    from kronika.stores.postgres.embedded import LocalPostgres

    assert isinstance(postgres_server, LocalPostgres)
    admin = postgres_server.url(postgres_url.rsplit("/", 1)[1])
    settings = load_settings(
        tmp_path / "ws", environ={}, embedder="hashing", database_url=postgres_url
    )
    with build_memory(settings) as memory, psycopg.connect(admin, autocommit=True) as conn:
        memory.remember(key="pet", value="a cat called Mruczek")
        index: Any = getattr(memory.index, "inner", memory.index)
        (schema,) = conn.execute(
            "SELECT table_schema FROM information_schema.tables WHERE table_name = 'idx_items'"
        ).fetchone()

        def due() -> list[str]:
            return [
                key
                for (key,) in conn.execute(
                    f"SELECT key FROM \"{schema}\".idx_meta WHERE starts_with(key, 'forget_due:')"
                )
            ]

        token = index.rewrite_due()  # as a forget does before its first edit
        conn.execute("SELECT pg_terminate_backend(%s)", (index.state.conn.info.backend_pid,))
        lock = ("SELECT pg_advisory_{}(%s, hashtext(%s))", (0x6B64, token))
        if taking_over:  # another worker holds the note's lock, about to end it
            conn.execute(lock[0].format("lock"), lock[1])
        for _ in range(3):  # the call that finds the connection lost fails; the next opens it
            try:
                assert memory.recall("Mruczek").hits
                break
            except StoreError:
                continue
        if taking_over:  # its rewrite ran, before the forget's edits: it ends the note
            conn.execute(f'DELETE FROM "{schema}".idx_meta WHERE key = %s', (token,))
            conn.execute(lock[0].format("unlock"), lock[1])
            [anew] = due()
            assert anew != token
        later = load_settings(
            tmp_path / "next", environ={}, embedder="hashing", database_url=postgres_url
        )
        with build_memory(later) as other:  # opening takes over the notes of workers gone
            assert any("Mruczek" in h.item.content for h in other.recall("Mruczek").hits)
        assert len(due()) == 1  # still the live worker's
        index.rewrite_written(token)  # its edits written: its own rewrite ends the note
        assert index.compact_after_forget() == []
        assert due() == []


def test_kronika_doctor_names_the_rewrites_after_a_forget_still_due(
    postgres_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Until the rewrite after a forget runs, PostgreSQL keeps the forgotten text in its
    files: ``kronika doctor`` says so, as a warning, with whose forget it waits for; a
    note of its own (a rewrite that met a table locked) ``--fix`` runs again."""
    import json

    from kronika.cli import main
    from kronika.cli.health import _examine, _repair

    settings = load_settings(
        tmp_path / "ws", environ={}, embedder="hashing", database_url=postgres_url
    )
    for name, value in (("HOME", tmp_path / "doctor"), ("EMBEDDER", "hashing")):
        monkeypatch.setenv(f"KRONIKA_{name}", str(value))
    monkeypatch.setenv("KRONIKA_DATABASE_URL", postgres_url)
    build_memory(load_settings(), create=True).close()  # another worker's folder

    def doctor() -> list[dict[str, Any]]:
        capsys.readouterr()
        assert main(["doctor", "--json"]) == 0  # warnings only
        found = json.loads(capsys.readouterr().out)["findings"]
        return [f for f in found if f["check"] == "forget"]

    with build_memory(settings) as memory:
        memory.remember(key="pet", value="a cat called Mruczek")
        index: Any = getattr(memory.index, "inner", memory.index)
        token = index.rewrite_due()  # a forget of this worker, begun
        [running] = doctor()
        assert running["where"] == token and running["severity"] == "warning"
        assert "a forget by a running worker" in running["what"]
        assert "table files and WAL" in running["what"] and running["repair"] is None
        index.rewrite_written(token)  # its edits written; the worker stops before its rewrite
    assert doctor() == []  # the doctor's own opening took the note over and ran the rewrite

    with build_memory(settings) as memory:  # a note of its own, as a rewrite kept locked
        index = getattr(memory.index, "inner", memory.index)
        index.rewrite_written(index.rewrite_due())
        found = _examine(memory, settings.home)
        [own] = [f for f in found.findings if f.check == "forget"]
        assert own.repair and "has not run whole" in own.what
        with memory.lock:
            done = _repair(memory, found, settings.home)
        assert "forget: ran the rewrite after 1 forget(s)" in done
        assert [f for f in _examine(memory, settings.home).findings if f.check == "forget"] == []


@pytest.mark.parametrize("listener", ["listening", "connection-ended", "many-files-open"])
def test_a_forget_leaves_the_folders_of_the_other_workers_at_once(
    postgres_server: object, postgres_url: str, tmp_path: Path, listener: str
) -> None:
    """Each worker keeps the tenant's Markdown in a folder of its own. When one forgets,
    another that is open and idle (no call of its own) has the forgotten text gone from
    its folder within moments, not at its next call, and keeps what was not forgotten;
    also when the connection it listens on was ended just before the forget (it opens
    another and brings the folder up to date for what it may have missed), and in a
    process with more than 1,024 files open (a busy server: ``select`` cannot watch
    such a connection)."""
    import resource

    from kronika.stores.postgres.embedded import LocalPostgres

    assert isinstance(postgres_server, LocalPostgres)
    admin = postgres_server.url(postgres_url.rsplit("/", 1)[1])
    held: list[int] = []
    if listener == "many-files-open":
        if resource.getrlimit(resource.RLIMIT_NOFILE)[0] < 1_200:
            pytest.skip("this process may not open 1,200 files (ulimit -n)")
        held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1_100)]
    try:
        _forget_seen_by_an_idle_worker(admin, postgres_url, tmp_path, listener)
    finally:
        for fd in held:
            os.close(fd)


def _forget_seen_by_an_idle_worker(
    admin: str, postgres_url: str, tmp_path: Path, listener: str
) -> None:
    import psycopg

    def settings(folder: str) -> Any:
        return load_settings(
            tmp_path / folder, environ={}, embedder="hashing", database_url=postgres_url
        )

    with build_memory(settings("a")) as first, build_memory(settings("b")) as second:
        first.remember(key="neighbour", value="Dmytro Zhabotynsky")
        first.remember(key="pet", value="a cat called Mruczek")
        assert any("Zhabotynsky" in h.item.content for h in second.recall("Dmytro").hits)
        assert _files_holding(tmp_path / "b")  # the second worker's folder holds it
        if listener == "connection-ended":
            with psycopg.connect(admin, autocommit=True) as conn:
                ended = conn.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                    " WHERE datname = current_database() AND query LIKE 'LISTEN%'"
                ).fetchall()
            assert len(ended) == 2  # each worker's listener
        assert first.forget(topic="Dmytro Zhabotynsky").applied
        _until(lambda: _files_holding(tmp_path / "b") == {}, 20)  # the second made no call
        brain = (tmp_path / "b" / "agents" / "default" / "brain.md").read_text("utf-8")
        assert "Mruczek" in brain
        _forgotten_and_kept(second)
    assert _files_holding(tmp_path / "a") == {}
