"""Statements sent to PostgreSQL together, answered in one round trip.

psycopg's pipeline mode waits for the server more often than the statements need on
a connection that is not in autocommit: it sends the ``BEGIN`` that opens the
transaction and waits for its answer, ``commit()`` waits again, and leaving the
pipeline waits a third time for the end it marks. Three round trips for a lock taken
and committed, five for a write of one document; each costs little on loopback and a
millisecond or more against a database in another building.

:func:`sent_together` sends ``BEGIN``, the statements and ``COMMIT`` as one stream and
waits once, at its end (and once more for each result read inside, which needs the
answers so far). The connection is in autocommit for the block, so psycopg opens no
transaction of its own, and back out of it after: a pool's connections stay as the
pool made them. A statement that fails ends the block with its error, the transaction
rolled back.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from kronika.errors import StoreError

if TYPE_CHECKING:
    import psycopg

log = logging.getLogger(__name__)

SNAPSHOT = "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY"  # a read's one snapshot


@contextlib.contextmanager
def sent_together(
    conn: psycopg.Connection[Any], *, transaction: bool = True, begin: str = "BEGIN"
) -> Iterator[psycopg.Connection[Any]]:
    """Run the block's statements on ``conn`` as one stream, in one transaction opened
    by ``begin`` (a read's snapshot: ``BEGIN ISOLATION LEVEL REPEATABLE READ, READ
    ONLY``); ``transaction=False``: each statement commits as the stream ends, as for
    locks of the session and single reads. ``conn`` must be idle, not in a transaction."""
    from psycopg import pq

    if conn.pgconn.transaction_status != pq.TransactionStatus.IDLE:
        raise StoreError("statements sent together need a connection outside a transaction")
    was_autocommit = conn.autocommit
    conn.autocommit = True  # no round trip: psycopg only notes it
    try:
        with pipeline(conn):
            if transaction:
                conn.execute(begin)
            yield conn
            if transaction:
                conn.execute("COMMIT")
    finally:
        _restore(conn, was_autocommit)


@contextlib.contextmanager
def pipeline(conn: psycopg.Connection[Any]) -> Iterator[psycopg.Connection[Any]]:
    """psycopg's pipeline on ``conn``; one that ends by an error rolls back the
    transaction it leaves open and has ``conn`` forget its prepared statements.

    psycopg prepares a statement on its sixth run, and in a pipeline it counts the
    statement prepared as it sends it. When an earlier statement of the pipeline fails,
    the server skips the rest, the preparing too, yet psycopg keeps the name: every
    later run of that statement on the connection fails with "prepared statement
    "_pg3_N" does not exist". A rollback through psycopg's own API forgets them all."""
    try:
        with conn.pipeline():
            yield conn
    except BaseException:
        forget_prepared(conn)
        raise


def in_pipeline(conn: psycopg.Connection[Any]) -> bool:
    """Whether ``conn`` is sending statements together already."""
    from psycopg import pq

    return bool(conn.pgconn.pipeline_status != pq.PipelineStatus.OFF)


def pipelined(conn: psycopg.Connection[Any]) -> contextlib.AbstractContextManager[Any]:
    """A pipeline on ``conn`` (:func:`pipeline`), or the one it is in: psycopg's pipeline
    inside another waits for the server as it begins and as it ends, which the outer one
    spares."""
    return contextlib.nullcontext(conn) if in_pipeline(conn) else pipeline(conn)


def forget_prepared(conn: psycopg.Connection[Any]) -> None:
    """Roll back the transaction ``conn`` is in (one is opened when it is in none) by
    psycopg's API, which forgets the prepared statements on both sides; inside psycopg's
    ``transaction()`` block, whose end rolls back and forgets them the same way, nothing
    is done. A connection that cannot roll back is closed, so that no pool hands it out
    again."""
    import psycopg
    from psycopg import pq

    if conn.closed or conn.broken:
        return
    try:
        if conn.pgconn.transaction_status == pq.TransactionStatus.IDLE:
            with conn.transaction():
                raise psycopg.Rollback
        else:
            conn.rollback()
    except psycopg.ProgrammingError:
        pass  # in a transaction() block: its end rolls back
    except Exception as err:  # noqa: BLE001 - the error that ended the block is raised
        log.debug("a connection that could not roll back is closed: %s", err)
        conn.close()


def _restore(conn: psycopg.Connection[Any], autocommit: bool) -> None:
    """``conn`` back to its autocommit setting; closed when it cannot be (it is in a
    transaction no statement of the block left open on purpose)."""
    if conn.closed or conn.autocommit == autocommit:
        return
    try:
        conn.autocommit = autocommit
    except Exception as err:  # noqa: BLE001 - a broken connection: the pool replaces it
        log.debug("a connection whose autocommit could not be set back is closed: %s", err)
        conn.close()
