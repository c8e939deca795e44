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
proposals, tenants), 0200-0299 the search index, 0300-0399 additions to it, 0400 on the
server's shared tables (job records).

One database holds many tenants. The base, the records and the server's tables (all
but 0200-0399) live in the shared schema (the connection's default, ``public`` on a
stock server), keyed by tenant in their rows, with their ledger there. 0200-0399 are
the search index, whose tables tell sources apart by agent alone: each tenant gets a
schema of its own
(:func:`index_schema`), with those migrations applied in it and a ledger of its own,
and the index's connections put that schema first on their ``search_path``
(:func:`scoped_url`), the shared schema after it (where the extensions and their
types live). Objects of the index are named ``idx_*``; a database written before
tenants had schemas holds them in the shared schema, and :func:`migrate_index` moves
them into the schema of the tenant whose memory they were.
"""

from __future__ import annotations

import hashlib
import re
import select
import socket
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from kronika.errors import StoreError

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

MIGRATIONS_PACKAGE = "kronika.stores.postgres.migrations"
_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")
_LOCK_KEY = 0x6B726F6E  # "kron": the advisory lock migrations hold
INDEX_FROM, INDEX_UNTIL = 200, 400  # the search index's migrations, applied per tenant
_SCHEMA_PREFIX = "kronika_idx_"
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


def gone(conn: psycopg.Connection[Any]) -> bool:
    """Whether an idle connection is known dead, without a round trip to the server.

    An idle connection is sent nothing but notices, notifications and parameter
    changes; a server that stopped or restarted closed its end, often after a last
    error message ("terminating connection"). So a socket that is readable with an
    error message first, or with nothing left (closed), is dead. A connection in a
    transaction, or one whose socket cannot be polled, is taken as alive: the next
    statement tells."""
    if conn.closed or conn.broken:
        return True
    from psycopg import pq

    if conn.pgconn.transaction_status != pq.TransactionStatus.IDLE:
        return False
    try:
        fd = conn.fileno()
        watch = select.poll()  # not select.select: a busy server's descriptors pass 1,024
        watch.register(fd, select.POLLIN)
        if not watch.poll(0):
            return False
        with socket.fromfd(fd, socket.AF_INET, socket.SOCK_STREAM) as peer:
            first = peer.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
    except BlockingIOError:
        return False
    except OSError:
        return True  # reset by the peer
    except ValueError:
        return False
    return first in (b"", b"E")


def _check(conn: psycopg.Connection[Any]) -> None:
    """The pool's check of a connection it hands out: a dead one is replaced."""
    if gone(conn):
        conn.close()  # so the pool drops it and opens a new one at once
        raise StoreError("the connection died with the server")


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
        check=_check,  # a connection that died with a restarted server is not handed out
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
    """Apply every shared migration (all but 0200-0399: the base, the store of record,
    the server's tables) not applied yet, in the connection's default schema; returns
    the names applied now."""
    shared = [m for m in known_migrations() if not is_index_migration(m)]
    return _locked(conn, lambda: _apply(conn, "kronika_migrations", shared, None))


def migrate_index(conn: psycopg.Connection[Any], tenant: str) -> tuple[str, list[str]]:
    """Bring ``tenant``'s search index up to date in its own schema: the migrations
    0200-0399, with their ledger there. A database whose index still lies in the
    shared schema (written before tenants had schemas) has it moved, under the same
    lock, into the schema of the tenant the store of record names first (the one
    opening it when the record names none). Returns the schema and the names applied
    now. Call on a connection with the default ``search_path``, after :func:`migrate`.
    """
    schema = index_schema(tenant)
    shared = shared_schema(conn)
    index = [m for m in known_migrations() if is_index_migration(m)]

    def work() -> list[str]:
        if _exists(conn, f'"{shared}".idx_meta'):
            _move_shared_index(conn, shared, tenant)
        _make_schema(conn, schema)
        conn.execute(
            "INSERT INTO record_index_schemas (tenant, schema_name) VALUES (%s, %s)"
            " ON CONFLICT DO NOTHING",
            (tenant, schema),
        )
        conn.commit()
        return _apply(conn, f'"{schema}".kronika_migrations', index, f'"{schema}", "{shared}"')

    return schema, _locked(conn, work)


def _locked(conn: psycopg.Connection[Any], work: Callable[[], list[str]]) -> list[str]:
    conn.commit()
    conn.execute("SELECT pg_advisory_lock(%s)", (_LOCK_KEY,))
    try:
        applied_now = work()
        conn.commit()  # before the lock goes: the next holder must see every change
    except BaseException:
        conn.rollback()
        raise
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (_LOCK_KEY,))
        conn.commit()
    if applied_now:
        configure(conn)
    return applied_now


def _ledger_sql(ledger: str) -> str:
    return (
        f"CREATE TABLE IF NOT EXISTS {ledger} ("
        " version integer PRIMARY KEY, name text NOT NULL,"
        " checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
    )


def _apply(
    conn: psycopg.Connection[Any], ledger: str, migrations: list[Migration], path: str | None
) -> list[str]:
    """Apply what ``ledger`` does not list of ``migrations`` (with ``search_path`` set to
    ``path`` while each runs), after checking what it lists against them."""
    conn.execute(_ledger_sql(ledger))
    conn.commit()
    done = {
        row[0]: (row[1], row[2])
        for row in conn.execute(f"SELECT version, name, checksum FROM {ledger}")
    }
    conn.commit()  # so that each migration below is a transaction, not a savepoint
    everything = {m.version for m in known_migrations()}
    unknown = sorted(set(done) - everything)
    if unknown:
        raise StoreError(
            f"the database has migrations this kronika does not know ({unknown}):"
            " it was written by a newer kronika; upgrade kronika"
        )
    applied_now: list[str] = []
    for migration in migrations:
        if migration.version in done:
            name, checksum = done[migration.version]
            if checksum != migration.checksum:
                raise StoreError(
                    f"migration {migration.version:04d}_{name} was changed after it was"
                    " applied to this database"
                )
            continue
        with conn.transaction():
            if path is not None:
                conn.execute(f"SET LOCAL search_path TO {path}")
            conn.execute(migration.sql)
            conn.execute(
                f"INSERT INTO {ledger} (version, name, checksum) VALUES (%s, %s, %s)",
                (migration.version, migration.name, migration.checksum),
            )
        applied_now.append(f"{migration.version:04d}_{migration.name}")
    return applied_now


def _exists(conn: psycopg.Connection[Any], relation: str) -> bool:
    row = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (relation,)).fetchone()
    return bool(row and row[0])


def _make_schema(conn: psycopg.Connection[Any], schema: str) -> None:
    conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
    conn.execute(_ledger_sql(f'"{schema}".kronika_migrations'))


_MOVE = {"r": "TABLE", "p": "TABLE", "S": "SEQUENCE", "v": "VIEW", "m": "MATERIALIZED VIEW"}


def _move_shared_index(conn: psycopg.Connection[Any], shared: str, opening: str) -> None:
    """Move the ``idx_*`` tables, sequences, views and functions of the shared schema
    (a database written when it held one tenant) into their tenant's schema, with
    their ledger rows, in one transaction. Indexes, triggers and the sequences a
    column owns move with their tables."""
    row = conn.execute(
        f'SELECT tenant FROM "{shared}".record_tenants ORDER BY created_at, tenant LIMIT 1'
    ).fetchone()
    owner = str(row[0]) if row else opening
    target = index_schema(owner)
    with conn.transaction():
        _make_schema(conn, target)
        if _exists(conn, f'"{target}".idx_meta'):
            raise StoreError(
                f"the search index of tenant {owner!r} is both in schema {shared!r} and in"
                f" {target!r}; drop one of them (`kronika index rebuild` rebuilds it)"
            )
        relations = conn.execute(
            "SELECT c.relname, c.relkind FROM pg_class AS c"
            " WHERE c.relnamespace = %s::regnamespace AND c.relname LIKE 'idx\\_%%'"
            " AND c.relkind IN ('r', 'p', 'S', 'v', 'm') AND NOT EXISTS (SELECT 1"
            " FROM pg_depend AS d WHERE d.classid = 'pg_class'::regclass"
            " AND d.objid = c.oid AND d.deptype IN ('a', 'i'))",
            (f'"{shared}"',),
        ).fetchall()
        for name, kind in relations:
            conn.execute(f'ALTER {_MOVE[kind]} "{shared}"."{name}" SET SCHEMA "{target}"')
        functions = conn.execute(
            "SELECT p.proname, pg_get_function_identity_arguments(p.oid) FROM pg_proc AS p"
            " WHERE p.pronamespace = %s::regnamespace AND p.proname LIKE 'idx\\_%%'",
            (f'"{shared}"',),
        ).fetchall()
        for name, arguments in functions:
            conn.execute(f'ALTER FUNCTION "{shared}"."{name}"({arguments}) SET SCHEMA "{target}"')
        conn.execute(
            f'INSERT INTO "{target}".kronika_migrations (version, name, checksum, applied_at)'
            f' SELECT version, name, checksum, applied_at FROM "{shared}".kronika_migrations'
            " WHERE version >= %s AND version < %s ON CONFLICT DO NOTHING",
            (INDEX_FROM, INDEX_UNTIL),
        )
        conn.execute(
            f'DELETE FROM "{shared}".kronika_migrations WHERE version >= %s AND version < %s',
            (INDEX_FROM, INDEX_UNTIL),
        )
        conn.execute(
            "INSERT INTO record_index_schemas (tenant, schema_name) VALUES (%s, %s)"
            " ON CONFLICT DO NOTHING",
            (owner, target),
        )


def is_index_migration(migration: Migration) -> bool:
    """Whether ``migration`` is the search index's (applied in each tenant's schema)."""
    return INDEX_FROM <= migration.version < INDEX_UNTIL


def index_schema(tenant: str) -> str:
    """The schema of ``tenant``'s search index: ``kronika_idx_<slug>_<hash>``, where the
    slug is the tenant's name folded to ``[a-z0-9_]`` (24 characters at most, for a
    person reading the catalog) and the hash the first 10 hex digits of the SHA-256 of
    the exact name, so two tenants never share a schema and no name needs quoting."""
    folded = unicodedata.normalize("NFKD", tenant).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "_", folded.lower()).strip("_")[:24].rstrip("_")
    digest = hashlib.sha256(tenant.encode("utf-8")).hexdigest()[:10]
    return f"{_SCHEMA_PREFIX}{slug}_{digest}" if slug else f"{_SCHEMA_PREFIX}{digest}"


def shared_schema(conn: psycopg.Connection[Any]) -> str:
    """The schema of the store of record: the connection's default (``public`` on a
    stock server). It must be a plain name: it goes into every index connection's
    ``search_path``."""
    row = conn.execute("SELECT current_schema()").fetchone()
    name = str(row[0]) if row and row[0] else ""
    if not _PLAIN.match(name):
        raise StoreError(
            f"the default schema of this database is {name!r}: kronika needs a plain"
            " lower-case one (set the role's search_path, e.g. to public)"
        )
    return name


_PLAIN = re.compile(r"^[a-z_][a-z0-9_]*$")


def scoped_url(url: str, schema: str, shared: str) -> str:
    """``url`` whose connections search ``schema`` first, then ``shared`` (libpq's
    ``options``: ``-c search_path=…``, added to any the URL gives)."""
    setting = f"-c search_path={schema},{shared}"
    if not is_postgres_url(url):
        from psycopg.conninfo import conninfo_to_dict, make_conninfo

        given = conninfo_to_dict(url)
        before = str(given.pop("options", "") or "")
        return make_conninfo(url, options=f"{before} {setting}".strip())
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "options"]
    before = " ".join(v for k, v in parse_qsl(parts.query) if k == "options")
    query.append(("options", f"{before} {setting}".strip()))
    return urlunsplit(parts._replace(query=urlencode(query, quote_via=quote)))


_SCOPED = re.compile(r"\s*-c\s*search_path=kronika_idx_\S*")


def unscoped_url(url: str) -> str:
    """``url`` without the ``search_path`` :func:`scoped_url` gave it: an index's URL,
    given back to open the index (or a database next to it) again."""

    def bare(options: str) -> str:
        return _SCOPED.sub("", options).strip()

    if not is_postgres_url(url):
        from psycopg.conninfo import conninfo_to_dict, make_conninfo

        given = conninfo_to_dict(url)
        if "options" not in given:
            return url
        given["options"] = bare(str(given["options"] or "")) or None
        return make_conninfo("", **{k: v for k, v in given.items() if v is not None})
    parts = urlsplit(url)
    query = []
    for k, v in parse_qsl(parts.query, keep_blank_values=True):
        if k == "options":
            v = bare(v)
            if not v:
                continue
        query.append((k, v))
    return urlunsplit(parts._replace(query=urlencode(query, quote_via=quote)))


def schema_version(conn: psycopg.Connection[Any]) -> int:
    """The newest applied migration (0 for an empty database)."""
    row = conn.execute("SELECT to_regclass('kronika_migrations') IS NOT NULL").fetchone()
    if not row or not row[0]:
        return 0
    latest = conn.execute("SELECT coalesce(max(version), 0) FROM kronika_migrations").fetchone()
    return int(latest[0]) if latest else 0
