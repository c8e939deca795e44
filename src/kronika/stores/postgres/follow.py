"""Other workers' working copies follow a forget at once.

A forget rewrites the record and the database's files, but every other worker of the
tenant keeps the tenant's Markdown in a working copy of its own (its folder), which
would hold the forgotten text until that worker's next call: an idle worker, for good.
So the transaction that writes a forget notifies (``pg_notify`` on :data:`CHANNEL`,
the tenant as payload: :meth:`~kronika.stores.postgres.record.PostgresRecord.write`),
and each worker listens on a connection of its own (:class:`ForgetFollower`) and
brings its folder up to date when one comes: the forgotten text leaves every worker's
folder within moments of the forget, not at its next call. A listener that lost its
connection opens it again and brings the folder up to date once, for a forget it may
have missed meanwhile.
"""

from __future__ import annotations

import contextlib
import logging
import os
import selectors
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kronika.errors import StoreError
from kronika.stores.postgres.connect import connect, one_line

if TYPE_CHECKING:
    import psycopg

log = logging.getLogger(__name__)

CHANNEL = "kronika_forgotten"
_BACKOFF = (0.5, 1.0, 2.0, 5.0, 10.0)  # seconds between tries to listen again


class ForgetFollower:
    """Calls ``follow`` whenever a forget of ``tenant`` is committed, from a thread of
    its own listening on a connection to ``conninfo``, until :meth:`close`. ``follow``
    brings the working copy up to date (its errors are logged: the next one, or the
    worker's next call, tries again)."""

    def __init__(self, conninfo: str, tenant: str, follow: Callable[[], object]) -> None:
        self._conninfo = conninfo
        self._tenant = tenant
        self._follow = follow
        self._wake_r, self._wake_w = os.pipe()  # written by close: the thread wakes
        self._closed = threading.Event()
        self.listening = threading.Event()  # set while a connection listens
        self._thread = threading.Thread(
            target=self._run, name="kronika-forget-follower", daemon=True
        )
        self._thread.start()

    def _run(self) -> None:
        import psycopg

        tries = 0
        try:
            while not self._closed.is_set():
                try:
                    with connect(self._conninfo, autocommit=True) as conn:
                        conn.execute(f"LISTEN {CHANNEL}")
                        self.listening.set()
                        if tries:  # a forget while nobody listened is not missed
                            self._followed()
                        tries = 0
                        self._listen(conn)
                except (psycopg.Error, StoreError, OSError, ValueError) as exc:
                    self.listening.clear()
                    log.debug("listening for forgets again: %s", one_line(exc))
                pause = _BACKOFF[min(tries, len(_BACKOFF) - 1)]
                tries += 1
                if self._woken(pause):
                    return
        finally:
            self.listening.clear()
            os.close(self._wake_r)

    def _listen(self, conn: psycopg.Connection[Any]) -> None:
        """Until :meth:`close` or the connection fails: follow each batch of forgets
        of this tenant once. (A selector, not ``select.select``: a busy server's
        descriptors go past the 1,024 that ``select`` can watch.)"""
        with selectors.DefaultSelector() as watch:
            watch.register(conn.fileno(), selectors.EVENT_READ, "server")
            watch.register(self._wake_r, selectors.EVENT_READ, "wake")
            while True:
                ready = {key.data for key, _ in watch.select()}
                if "wake" in ready:
                    return
                payloads = {n.payload for n in conn.notifies(timeout=0)}
                if self._tenant in payloads:
                    self._followed()

    def _woken(self, seconds: float) -> bool:
        """Wait ``seconds`` or until :meth:`close`; whether it was closed."""
        with selectors.DefaultSelector() as watch:
            watch.register(self._wake_r, selectors.EVENT_READ)
            return bool(watch.select(seconds)) or self._closed.is_set()

    def _followed(self) -> None:
        try:
            self._follow()
        except Exception as exc:  # noqa: BLE001 - the worker's next call tries again
            log.warning("the working copy did not follow a forget: %s", one_line(exc))

    def close(self) -> None:
        """Stop listening, and wait for the thread to end."""
        if self._closed.is_set():
            return
        self._closed.set()
        with contextlib.suppress(OSError):  # the thread ended already (closed its end)
            os.write(self._wake_w, b"x")
        self._thread.join(2)  # one still connecting ends on its own (a daemon)
        os.close(self._wake_w)
