"""The PostgreSQL foundation: a real local server on loopback, migrations, the pool."""

from __future__ import annotations

import os
import pwd
import threading

import numpy as np
import pytest

from kronika.errors import StoreError
from kronika.stores.postgres.connect import (
    connect,
    index_schema,
    is_index_migration,
    known_migrations,
    migrate,
    migrate_index,
    open_pool,
    redact_url,
    schema_version,
)

SHARED = [f"{m.version:04d}_{m.name}" for m in known_migrations() if not is_index_migration(m)]
INDEX = [f"{m.version:04d}_{m.name}" for m in known_migrations() if is_index_migration(m)]


def test_the_server_listens_on_loopback_and_is_not_run_by_root(postgres_url: str) -> None:
    with connect(postgres_url) as conn:
        row = conn.execute(
            "SELECT host(inet_server_addr()), current_setting('data_directory')"
        ).fetchone()
        assert row is not None
        assert row[0] == "127.0.0.1"
    assert pwd.getpwuid(os.stat(row[1]).st_uid).pw_name != "root"


def test_migrations_apply_once_and_the_vector_type_works(postgres_url: str) -> None:
    with connect(postgres_url) as conn:
        applied = migrate(conn)
        assert applied[0] == "0001_extensions"
        assert applied == SHARED
        assert migrate(conn) == []
        assert schema_version(conn) == int(SHARED[-1][:4])
        assert "0400_server_jobs" in SHARED  # the server's job records are every tenant's
        assert migrate_index(conn, "acme") == (index_schema("acme"), INDEX)
        assert migrate_index(conn, "acme") == (index_schema("acme"), [])
        assert migrate_index(conn, "globex") == (index_schema("globex"), INDEX)
        conn.execute(f"SET search_path TO {index_schema('globex')}, public")
        assert schema_version(conn) == int(INDEX[-1][:4])
        conn.execute("RESET search_path")
        conn.execute("CREATE TEMP TABLE v (e vector(3))")
        conn.execute("INSERT INTO v VALUES (%s)", (np.array([1, 0, 0], dtype=np.float32),))
        got = conn.execute("SELECT e <=> %s FROM v", (np.array([0, 1, 0], np.float32),))
        distance = got.fetchone()
        assert distance is not None
        assert distance[0] == pytest.approx(1.0)


def test_workers_starting_together_apply_each_migration_exactly_once(postgres_url: str) -> None:
    results: list[list[str]] = []
    errors: list[BaseException] = []

    def worker(tenant: str) -> None:
        try:
            with connect(postgres_url) as conn:
                results.append(migrate(conn) + migrate_index(conn, tenant)[1])
        except BaseException as err:  # noqa: BLE001 - reported below
            errors.append(err)

    threads = [threading.Thread(target=worker, args=(t,)) for t in ("a", "b", "a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    flat = [name for r in results for name in r]
    assert sorted(flat) == sorted(SHARED + INDEX + INDEX)  # the index once per tenant


def test_a_database_from_a_newer_kronika_or_an_edited_migration_is_refused(
    postgres_url: str,
) -> None:
    with connect(postgres_url) as conn:
        migrate(conn)
        conn.execute("UPDATE kronika_migrations SET checksum = 'x' WHERE version = 1")
        conn.commit()
        with pytest.raises(StoreError, match="changed after it was applied"):
            migrate(conn)
        conn.execute(
            "INSERT INTO kronika_migrations (version, name, checksum) VALUES (9999, 'f', 'c')"
        )
        conn.commit()
        with pytest.raises(StoreError, match="newer kronika"):
            migrate(conn)


def test_an_unreachable_server_is_a_clear_error_without_the_password() -> None:
    from kronika.stores.postgres.embedded import free_port

    url = f"postgresql://kronika:s3cret@127.0.0.1:{free_port()}/x"
    with pytest.raises(StoreError, match="cannot connect") as caught:
        connect(url)
    assert "s3cret" not in str(caught.value)
    with pytest.raises(StoreError, match="cannot connect") as caught:
        open_pool(url)
    assert "s3cret" not in str(caught.value)
    assert redact_url(url) == url.replace("s3cret", "***")


def test_the_pool_serves_several_threads(postgres_url: str) -> None:
    with connect(postgres_url) as conn:
        migrate(conn)
    pool = open_pool(postgres_url, max_size=4)
    try:
        seen: list[int] = []

        def work(n: int) -> None:
            with pool.connection() as conn:
                row = conn.execute("SELECT %s::int + 1", (n,)).fetchone()
                assert row is not None
                seen.append(row[0])

        threads = [threading.Thread(target=work, args=(n,)) for n in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(seen) == list(range(1, 17))
    finally:
        pool.close()
