"""Statements that lock a table exclusively (``VACUUM FULL``, ``DROP INDEX``), run after
a forget without waiting forever.

A forget runs them while it holds the team's write lock (a session advisory lock).
pgvector's graph is built with ``CREATE INDEX CONCURRENTLY`` by whichever worker's
recall finds it missing, and such a build waits for every transaction older than it —
a worker's write waiting for the team's lock among them — while it holds a lock on
``idx_items`` that ``VACUUM FULL`` must wait for: a circle the server's deadlock
detector cannot see (one link is the forget's own process). So each statement waits
for its lock at most ``LOCK_TIMEOUT``; when the wait ends, the index builds on that
table are cancelled (kronika's own role may cancel them; the forget builds the graph
again afterwards) and the statement is tried again, for up to ``PATIENCE`` seconds in
all. What still could not get its lock by then is not run, and said.
"""

from __future__ import annotations

import logging
import time
from typing import Any

log = logging.getLogger(__name__)

LOCK_TIMEOUT = "2s"
PATIENCE = 120.0


def run_locking(conn: Any, sql: str, table: str, *, patience: float = PATIENCE) -> str | None:
    """Run ``sql`` (it locks ``table``) on the autocommit connection ``conn``; returns
    ``None``, or why it was not run."""
    import psycopg

    deadline = time.monotonic() + patience
    conn.execute(f"SET lock_timeout = '{LOCK_TIMEOUT}'")
    try:
        while True:
            try:
                conn.execute(sql)
                return None
            except psycopg.errors.LockNotAvailable:
                if time.monotonic() > deadline:
                    return f"{sql}: not run, {table} stayed locked for {patience:.0f} s"
                _cancel_index_builds(conn, table)
    finally:
        conn.execute("RESET lock_timeout")


def _cancel_index_builds(conn: Any, table: str) -> None:
    """Cancel the index builds on ``table`` (``CREATE INDEX CONCURRENTLY`` of the graph)."""
    import psycopg

    try:
        rows = conn.execute(
            "SELECT pid, pg_cancel_backend(pid) FROM pg_stat_progress_create_index"
            " WHERE relid = to_regclass(%s) AND pid <> pg_backend_pid()",
            (table,),
        ).fetchall()
    except psycopg.Error as exc:  # another role's build: wait for it instead
        log.info("could not cancel an index build on %s: %s", table, exc)
        return
    for pid, _ in rows:
        log.info("cancelled the index build of backend %s on %s, to rewrite it", pid, table)
