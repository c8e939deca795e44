"""Connections to the PostgreSQL store of record, and its versioned schema.

``open_pool(url)`` gives a psycopg 3 connection pool whose connections know pgvector's
``vector`` type; ``migrate(conn)`` brings the schema up to date. Migrations are the SQL
files of :mod:`kronika.stores.postgres.migrations`, named ``NNNN_what.sql`` and applied in
the order of their number, each in its own transaction, under an advisory lock so that
several workers starting at once apply each exactly once. The table
``kronika_migrations`` records each applied file with the SHA-256 of its text: a file
changed after it was applied, or a database that has migrations this kronika does not
know (a newer kronika wrote it), is an error rather than a guess.

Numbering: 0001-0099 the base, 0100-0199 the records (items, facts, sessions, audit,
proposals, tenants), 0200-0299 the search index, 0300-0399 links and other additions.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any

from kronika.errors import StoreError

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

MIGRATIONS_PACKAGE = "kronika.stores.postgres.migrations"
_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")
_LOCK_KEY = 0x6B726F6E  # "kron": the advisory lock migrations hold
EXTRA_HINT = "PostgreSQL needs the postgres extra: pip install 'kronika[postgres]'"


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError as err:
        raise StoreError(EXTRA_HINT) from err
    return psycopg


def is_postgres_url(url: str) -> bool:
    """Whether ``url`` names a PostgreSQL database (``postgresql://`` or ``postgres://``)."""
    return url.startswith(("postgresql://", "postgres://"))


def configure(conn: psycopg.Connection[Any]) -> None:
    """Teach a fresh connection pgvector's types (when the extension exists yet)."""
    from pgvector.psycopg import register_vector

    try:
        register_vector(conn)
    except Exception:  # noqa: BLE001 - before migration 0001 the type does not exist
        conn.rollback()
    else:
        conn.commit()


def connect(url: str, *, autocommit: bool = False) -> psycopg.Connection[Any]:
    """One connection (scripts, migrations, tests); errors say which server failed."""
    pg = _psycopg()
    try:
        conn: psycopg.Connection[Any] = pg.connect(url, autocommit=autocommit, connect_timeout=10)
    except pg.OperationalError as err:
        raise StoreError(
            f"cannot connect to PostgreSQL at {redact_url(url)}: {one_line(err)}"
        ) from err
    configure(conn)
    return conn


def open_pool(url: str, *, min_size: int = 1, max_size: int = 8) -> ConnectionPool:
    """A pool of connections, opened and checked before it is returned."""
    connect(url).close()  # fail at once, with a clear message, when the server is not there
    try:
        from psycopg_pool import ConnectionPool
    except ImportError as err:
        raise StoreError(EXTRA_HINT) from err
    pool = ConnectionPool(
        url,
        min_size=min_size,
        max_size=max_size,
        configure=configure,
        kwargs={"connect_timeout": 10},
        open=False,
    )
    try:
        pool.open(wait=True, timeout=15)
    except Exception as err:
        pool.close()
        raise StoreError(f"cannot connect to PostgreSQL at {redact_url(url)}: {err}") from err
    return pool


def one_line(err: BaseException) -> str:
    """A driver's message on one line (psycopg's span several, with hints)."""
    return " ".join(str(err).split())


def redact_url(url: str) -> str:
    """``url`` without its password (for messages and logs)."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", url)


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode("utf-8")).hexdigest()


def known_migrations() -> list[Migration]:
    """The migration files shipped with kronika, in order."""
    found: list[Migration] = []
    for entry in resources.files(MIGRATIONS_PACKAGE).iterdir():
        match = _NAME.match(entry.name)
        if match:
            found.append(Migration(int(match[1]), match[2], entry.read_text(encoding="utf-8")))
    found.sort(key=lambda m: m.version)
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions):
        raise StoreError(f"two migrations share a number: {versions}")
    return found


def migrate(conn: psycopg.Connection[Any]) -> list[str]:
    """Apply every migration not applied yet; returns the names applied now."""
    applied_now: list[str] = []
    conn.commit()
    conn.execute("SELECT pg_advisory_lock(%s)", (_LOCK_KEY,))
    try:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS kronika_migrations ("
            " version integer PRIMARY KEY, name text NOT NULL,"
            " checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        conn.commit()
        done = {
            row[0]: (row[1], row[2])
            for row in conn.execute("SELECT version, name, checksum FROM kronika_migrations")
        }
        known = known_migrations()
        unknown = sorted(set(done) - {m.version for m in known})
        if unknown:
            raise StoreError(
                f"the database has migrations this kronika does not know ({unknown}):"
                " it was written by a newer kronika; upgrade kronika"
            )
        for migration in known:
            if migration.version in done:
                name, checksum = done[migration.version]
                if checksum != migration.checksum:
                    raise StoreError(
                        f"migration {migration.version:04d}_{name} was changed after it was"
                        " applied to this database"
                    )
                continue
            with conn.transaction():
                conn.execute(migration.sql)
                conn.execute(
                    "INSERT INTO kronika_migrations (version, name, checksum) VALUES (%s, %s, %s)",
                    (migration.version, migration.name, migration.checksum),
                )
            applied_now.append(f"{migration.version:04d}_{migration.name}")
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (_LOCK_KEY,))
        conn.commit()
    if applied_now:
        configure(conn)
    return applied_now


def schema_version(conn: psycopg.Connection[Any]) -> int:
    """The newest applied migration (0 for an empty database)."""
    row = conn.execute("SELECT to_regclass('kronika_migrations') IS NOT NULL").fetchone()
    if not row or not row[0]:
        return 0
    latest = conn.execute("SELECT coalesce(max(version), 0) FROM kronika_migrations").fetchone()
    return int(latest[0]) if latest else 0
