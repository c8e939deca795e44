"""Where the server's job records live, so they outlast the process that ran the job.

* Local workspace: ``server-jobs.sqlite`` in the workspace folder (beside
  ``keys.sqlite``), shared by every worker process on that workspace.
* PostgreSQL (``KRONIKA_DATABASE_URL``): the table ``server_jobs`` of the store of
  record (migration ``0400_server_jobs.sql``), shared by every server on that database.

A record names its ``owner`` (host, process id and a random part) and carries a
``heartbeat`` (seconds since the epoch) that the owner renews while the job is queued or
running. :class:`~kronika.server.jobs.JobBook` reads a queued or running job whose owner
stopped renewing it, or whose owner process on this host is gone, as ``interrupted``.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from kronika.errors import StoreError
from kronika.settings import Settings
from kronika.stores import held
from kronika.stores.private import touch_private
from kronika.stores.sqlite.recovery import is_corruption, move_aside, small_file_problem

log = logging.getLogger("kronika")

JOBS_FILE = "server-jobs.sqlite"
COLUMNS = (
    "id, kind, tenant, agent, params, status, created_at, started_at, finished_at,"
    " message, result, owner, heartbeat"
)
_DDL = (
    "CREATE TABLE IF NOT EXISTS server_jobs ("
    " id TEXT PRIMARY KEY, kind TEXT NOT NULL, tenant TEXT NOT NULL, agent TEXT NOT NULL,"
    " params TEXT NOT NULL, status TEXT NOT NULL, created_at TEXT NOT NULL,"
    " started_at TEXT, finished_at TEXT, message TEXT NOT NULL DEFAULT '',"
    " result TEXT NOT NULL DEFAULT '{}', owner TEXT NOT NULL,"
    " heartbeat DOUBLE PRECISION NOT NULL)",
    "CREATE INDEX IF NOT EXISTS server_jobs_by_tenant ON server_jobs (tenant, created_at)",
)
_CHANGEABLE = frozenset({"status", "started_at", "finished_at", "message", "result"})


@dataclass(frozen=True, slots=True)
class Record:
    """One stored job: its fields as :class:`~kronika.server.jobs.Job` has them, and
    who runs it."""

    fields: dict[str, Any]
    owner: str
    heartbeat: float


class JobRecords(Protocol):
    def insert(self, fields: dict[str, Any], owner: str, heartbeat: float) -> None: ...

    def update(self, job_id: str, changes: dict[str, Any], *, only_if: str = "") -> bool:
        """Change ``job_id``'s fields; with ``only_if`` (an owner), only while that owner
        still has it queued or running. True when a record changed."""
        ...

    def beat(self, owner: str, now: float) -> None: ...

    def get(self, job_id: str) -> Record | None: ...

    def newest(self, tenant: str, limit: int) -> list[Record]: ...

    def prune(self, keep: int) -> None: ...

    def close(self) -> None: ...


class _SqlRecords:
    """The SQL both stores share; ``_run`` is the dialect's (``?`` placeholders)."""

    def _run(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def _changed(self, sql: str, params: Sequence[Any]) -> int:
        raise NotImplementedError

    def insert(self, fields: dict[str, Any], owner: str, heartbeat: float) -> None:
        values = [_stored(name, fields.get(name)) for name in _names()[:-2]]
        marks = ", ".join("?" * (len(values) + 2))
        self._run(
            f"INSERT INTO server_jobs ({COLUMNS}) VALUES ({marks})", [*values, owner, heartbeat]
        )

    def update(self, job_id: str, changes: dict[str, Any], *, only_if: str = "") -> bool:
        names = [name for name in changes if name in _CHANGEABLE]
        if not names:
            return False
        sql = f"UPDATE server_jobs SET {', '.join(f'{n} = ?' for n in names)} WHERE id = ?"
        params = [_stored(n, changes[n]) for n in names] + [job_id]
        if only_if:
            sql += " AND owner = ? AND status IN ('queued', 'running')"
            params.append(only_if)
        return self._changed(sql, params) > 0

    def beat(self, owner: str, now: float) -> None:
        self._run(
            "UPDATE server_jobs SET heartbeat = ? WHERE owner = ? AND status IN"
            " ('queued', 'running')",
            (now, owner),
        )

    def get(self, job_id: str) -> Record | None:
        rows = self._run(f"SELECT {COLUMNS} FROM server_jobs WHERE id = ?", (job_id,))
        return _record(rows[0]) if rows else None

    def newest(self, tenant: str, limit: int) -> list[Record]:
        rows = self._run(
            f"SELECT {COLUMNS} FROM server_jobs WHERE tenant = ?"
            " ORDER BY created_at DESC, id DESC LIMIT ?",
            (tenant, limit),
        )
        return [_record(row) for row in rows]

    def prune(self, keep: int) -> None:
        """Forget finished records past the newest ``keep`` (never a queued or running one)."""
        self._run(
            "DELETE FROM server_jobs WHERE status NOT IN ('queued', 'running') AND id NOT IN"
            " (SELECT id FROM server_jobs ORDER BY created_at DESC, id DESC LIMIT ?)",
            (keep,),
        )

    def count_steps(self) -> int:
        """Rewrite records of an earlier kronika that kept each step's wording (entity
        pages, keys, strategies a forget may since have removed) to counts, as records
        are kept now (:meth:`~kronika.engine.jobs.JobReport.as_counts`); returns how
        many changed. The caller then clears the old bytes out of the storage."""
        changed = 0
        for job_id, message, result in self._run("SELECT id, message, result FROM server_jobs"):
            try:
                fields = json.loads(result or "{}")
            except ValueError:
                fields = {}
            if not isinstance(fields, dict):
                fields = {}
            worded = [n for n in ("done", "waiting") if isinstance(fields.get(n), list)]
            queued = " stay queued for the next run"
            wordy = bool(message) and message.endswith(queued) and "step(s)" not in message
            if not worded and not wordy:
                continue
            for name in worded:
                fields[name] = len(fields[name])
            if wordy:
                why = message.split(": ", 1)[0]
                steps = fields.get("waiting") if isinstance(fields.get("waiting"), int) else "some"
                message = f"{why}: {steps} step(s){queued}"
            self._run(
                "UPDATE server_jobs SET message = ?, result = ? WHERE id = ?",
                (message, json.dumps(fields), job_id),
            )
            changed += 1
        return changed


_SIDE = ("-wal", "-shm")
_OPEN_WITHIN_S = 30.0
"""How long opening the job records may wait for other processes opening them."""


def _open_records(where: str) -> sqlite3.Connection:
    """The job records' SQLite file, made if new. The workers of ``kronika serve`` open it
    at the same moment: switching a new file to WAL, or creating its tables, can then
    be refused at once ("database is locked": SQLite does not wait where waiting could
    deadlock), so it is tried again for up to :data:`_OPEN_WITHIN_S` seconds."""
    deadline = time.monotonic() + _OPEN_WITHIN_S
    while True:
        db = sqlite3.connect(where, timeout=30, check_same_thread=False)
        try:
            db.execute("PRAGMA secure_delete=ON")  # a pruned or rewritten record leaves no bytes
            db.execute("PRAGMA journal_mode=WAL")
            with db:
                for statement in _DDL:
                    db.execute(statement)
        except sqlite3.OperationalError as exc:
            db.close()
            busy = (exc.sqlite_errorcode & 0xFF) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
            if not busy or time.monotonic() > deadline:
                raise
            time.sleep(0.02)
            continue
        except BaseException:
            db.close()
            raise
        return db


class SqliteJobRecords(_SqlRecords):
    """Job records in a SQLite file (every process on the workspace opens the same one)."""

    def __init__(self, path: Path | None) -> None:
        """``path`` None: kept in memory only (a server holding no workspace)."""
        self.path = Path(path) if path is not None else None
        self._lock = threading.Lock()
        if self.path is not None:  # made 0600 first: SQLite gives -wal and -shm its mode
            touch_private(self.path)
        try:
            self._db = self._open()
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the job records at {self.path}: {exc}") from exc
        if self.path is not None:  # job parameters and messages are the owner's to read
            for own in (self.path, *(self.path.with_name(self.path.name + x) for x in _SIDE)):
                if own.exists():
                    own.chmod(0o600)
        if self.count_steps():
            try:  # the old wording leaves the write-ahead log too
                with self._lock:
                    self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error as exc:
                log.warning("the job records at %s kept a write-ahead log: %s", self.path, exc)

    def _open(self) -> sqlite3.Connection:
        """The records' connection; a damaged file is moved aside (``<name>.corrupt-<time>``)
        and a new one begun, and that is logged: the records only tell what jobs did."""
        if self.path is None:
            return _open_records(":memory:")
        try:
            db = _open_records(str(self.path))
            found = small_file_problem(db)
            if found is None:
                return db
            db.close()
            problem = found
        except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
            if not is_corruption(exc):
                raise
            problem = str(exc)
        aside = move_aside(self.path)
        log.warning(
            "the job records at %s were damaged (%s); they were moved to %s and new ones begun",
            self.path,
            problem,
            aside,
        )
        touch_private(self.path)
        return _open_records(str(self.path))

    @contextmanager
    def _cursor(self) -> Iterator[sqlite3.Cursor]:
        with self._lock:
            try:
                with self._db:
                    yield self._db.cursor()
            except sqlite3.Error as exc:
                raise StoreError(f"the job records at {self.path} failed: {exc}") from exc

    def _run(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._cursor() as cur:
            return cur.execute(sql, tuple(params)).fetchall()

    def _changed(self, sql: str, params: Sequence[Any]) -> int:
        with self._cursor() as cur:
            return cur.execute(sql, tuple(params)).rowcount

    def insert(self, fields: dict[str, Any], owner: str, heartbeat: float) -> None:
        before = self._ids()
        super().insert(fields, owner, heartbeat)
        self._record(before)

    def prune(self, keep: int) -> None:
        before = self._ids()
        super().prune(keep)
        self._record(before)

    def _ids(self) -> set[str]:
        if self.path is None:
            return set()
        return {str(row[0]) for row in self._run("SELECT id FROM server_jobs")}

    def _record(self, before: set[str]) -> None:
        """Record the records there are (:mod:`kronika.stores.held`)."""
        if self.path is not None:
            held.note_ids(self.path.parent, self.path.name, before, self._ids())

    def close(self) -> None:
        with self._lock:
            self._db.close()


class PostgresJobRecords(_SqlRecords):
    """Job records in the ``server_jobs`` table of the PostgreSQL store of record."""

    def __init__(self, url: str) -> None:
        from kronika.stores.postgres.connect import connect

        self._lock = threading.Lock()
        self._conn = connect(url, autocommit=True)
        if self.count_steps():
            try:  # the rows' old versions hold the old wording until the table is rewritten
                self._run("VACUUM FULL server_jobs")
            except StoreError as exc:
                log.warning("the job records' old versions stay until a VACUUM: %s", exc)

    def _execute(self, sql: str, params: Sequence[Any]) -> Any:
        from kronika.stores.postgres.connect import one_line

        try:
            return self._conn.execute(sql.replace("?", "%s"), tuple(params))
        except Exception as exc:
            raise StoreError(f"the job records in PostgreSQL failed: {one_line(exc)}") from exc

    def _run(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            cur = self._execute(sql, params)
            return list(cur.fetchall()) if cur.description else []

    def _changed(self, sql: str, params: Sequence[Any]) -> int:
        with self._lock:
            count: int = self._execute(sql, params).rowcount
            return count

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def _names() -> list[str]:
    return [name.strip() for name in COLUMNS.split(",")]


def _stored(name: str, value: Any) -> Any:
    return json.dumps(value or {}) if name in ("params", "result") else value


def _record(row: Sequence[Any]) -> Record:
    values = dict(zip(_names(), row, strict=True))
    owner, heartbeat = values.pop("owner"), float(values.pop("heartbeat"))
    for name in ("params", "result"):
        try:
            values[name] = json.loads(values[name] or "{}")
        except ValueError:
            values[name] = {}
    values["message"] = values["message"] or ""
    return Record(values, owner, heartbeat)


def open_job_records(settings: Settings | None) -> JobRecords:
    """The job records of the memory ``settings`` describe: its PostgreSQL database, or
    ``server-jobs.sqlite`` in its workspace folder (in memory when ``settings`` is None)."""
    if settings is None:
        return SqliteJobRecords(None)
    if settings.database_url:
        return PostgresJobRecords(settings.database_url)
    return SqliteJobRecords(Path(settings.home) / JOBS_FILE)
