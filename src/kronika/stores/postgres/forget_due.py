"""Rewrites after a forget, noted in the database until they are done.

A forget deletes its rows at once, but PostgreSQL keeps their bytes in the table files,
the planner's statistics and the WAL until
:meth:`~kronika.stores.postgres.index_upkeep.PostgresUpkeep.compact_after_forget`
rewrites them, once the write lock is let go. A worker killed in between, or a table
that stayed locked past the rewrite's patience, would leave them there for good.

So before a forget edits anything it notes a rewrite as due: a row of ``idx_meta``
(``forget_due:<token>``), and a session advisory lock on the token, held on the
index's connection while its worker lives. Once the forget's edits are written, its
note is ready, and a rewrite that starts after that deletes it when every table was
rewritten (a rewrite never deletes the note of a forget still writing: another
thread's, in a server). A worker opening the memory (``finish_forgets``) takes
over each note whose lock it can take, its worker being gone, and runs the rewrite.
A note is made before the forget's first edit: a forget cut short before it wrote
anything costs a rewrite that finds nothing, never a rewrite missed.

A lost connection loses its session locks, and another worker may take a live
worker's note over meanwhile and end it with a rewrite run before the forget's
edits. So the connection opened again takes each held note's lock again and puts
its row back; a note another worker holds just then (taking it over) is noted anew
under a new token, which the forget's own token stands for from then on.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from kronika.stores.postgres.index_base import PostgresState

PREFIX = "forget_due:"
_CLASS = 0x6B64  # "kd": with the token's hash, the lock of a live worker's note (due)


class ForgetsDue:
    """The notes of rewrites due that this process holds (its own, and those it took
    over from workers gone), and which of them a rewrite may end (``ready``)."""

    def __init__(self, state: PostgresState) -> None:
        self.state = state
        self.held: set[str] = set()
        self.ready: set[str] = set()
        self.renamed: dict[str, str] = {}  # a token noted anew after a lost connection
        state.reconnected.append(self._hold_again)

    def note(self) -> str:
        """Note a rewrite as due, before a forget's first edit; returns its token."""
        with self.state.reading() as conn:
            return self._note(conn)

    def _note(self, conn: Any) -> str:
        token = PREFIX + secrets.token_hex(8)
        conn.execute("SELECT pg_advisory_lock(%s, hashtext(%s))", (_CLASS, token))
        self.held.add(token)
        conn.execute(
            "INSERT INTO idx_meta (key, value) VALUES (%s, %s)",
            (token, datetime.now(UTC).isoformat(timespec="seconds")),
        )
        return token

    def _hold_again(self, conn: Any) -> None:
        """On the connection opened after one was lost: each held note's lock taken
        again and its row put back (a worker that took it over may have ended it); a
        note another worker holds now is noted anew."""
        for token in sorted(self.held):
            (free,) = conn.execute(
                "SELECT pg_try_advisory_lock(%s, hashtext(%s))", (_CLASS, token)
            ).fetchone()
            if free:
                conn.execute(
                    "INSERT INTO idx_meta (key, value) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                    (token, datetime.now(UTC).isoformat(timespec="seconds")),
                )
                continue
            anew = self._note(conn)
            self.held.discard(token)
            if token in self.ready:
                self.ready.discard(token)
                self.ready.add(anew)
            for old, now in list(self.renamed.items()):
                if now == token:
                    self.renamed[old] = anew
            self.renamed[token] = anew

    def written(self, token: str) -> None:
        """The forget of ``token`` wrote its edits: the next rewrite covers it."""
        token = self.renamed.get(token, token)
        if token in self.held:
            self.ready.add(token)

    def taken_over(self) -> bool:
        """Take over the notes of workers gone (their locks free); whether this process
        holds any note now, its own included: a rewrite is due."""
        with self.state.reading() as conn:
            found = conn.execute(
                "SELECT key FROM idx_meta WHERE starts_with(key, %s)", (PREFIX,)
            ).fetchall()
            for (key,) in found:
                if key in self.held:
                    continue
                (free,) = conn.execute(
                    "SELECT pg_try_advisory_lock(%s, hashtext(%s))", (_CLASS, key)
                ).fetchone()
                if free:
                    self.held.add(key)
                    self.ready.add(key)  # its forget wrote what it could
        return bool(self.held)

    def pending(self) -> list[tuple[str, str, str]]:
        """Every rewrite noted as due and not done, oldest first: its token, when it was
        noted, and whose it is: ``"this worker"`` (its own forget, or taken over, and a
        rewrite that left a table locked), ``"a running worker"`` (another's, its lock
        held) or ``"no worker"`` (one gone: the next opening takes it over)."""
        with self.state.reading() as conn:
            found = conn.execute(
                "SELECT m.key, m.value, EXISTS (SELECT 1 FROM pg_locks AS l"
                " WHERE l.locktype = 'advisory' AND l.granted"
                " AND l.database = (SELECT oid FROM pg_database"
                " WHERE datname = current_database())"
                " AND l.classid = %s::oid AND l.objid = hashtext(m.key)::oid"
                " AND l.objsubid = 2)"
                " FROM idx_meta AS m WHERE starts_with(m.key, %s) ORDER BY m.value, m.key",
                (_CLASS, PREFIX),
            ).fetchall()
        return [
            (
                key,
                str(at),
                "this worker" if key in self.held else "a running worker" if live else "no worker",
            )
            for key, at, live in found
        ]

    def done(self, tokens: Iterable[str]) -> None:
        """The rewrite of ``tokens`` ran whole (or their forgets wrote nothing): their
        notes go, and their locks."""
        tokens = sorted({self.renamed.get(t, t) for t in tokens} & self.held)
        if not tokens:
            return
        with self.state.reading() as conn:
            conn.execute("DELETE FROM idx_meta WHERE key = ANY(%s)", (tokens,))
            for token in tokens:
                conn.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", (_CLASS, token))
        self.held.difference_update(tokens)
        self.ready.difference_update(tokens)
        for old, now in list(self.renamed.items()):
            if now in tokens:
                del self.renamed[old]
