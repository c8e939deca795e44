"""Keeping the recall log (:mod:`kronika.core.recall_log`) without slowing recall.

A recall that counts (``record_access``) hands its entry to :class:`RecallRecorder`,
which holds it in memory and writes what it holds in one transaction when it holds
:data:`FLUSH_EVERY` entries or the oldest has waited :data:`FLUSH_AFTER_S` seconds
(checked at the next recall), before any read of the log, and when the memory closes.
The log is statistics: an entry still held when a process dies is lost, nothing else.
At most once per :data:`PRUNE_EVERY_S` a write also forgets the recalls older than the
``recall_log_days`` setting; 0 keeps no log at all.

An item forgotten while an entry naming it is held is not written: the log's
:meth:`~kronika.ports.RecallLog.append` leaves out ids the index no longer holds.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import datetime, timedelta

from kronika.core.model import Reader, RecallResult
from kronika.core.recall_log import RecallEntry, entry_for, kept_query
from kronika.errors import IndexError_, StoreError
from kronika.ports import RecallLog
from kronika.settings import RecallGroup

log = logging.getLogger("kronika.recall")

FLUSH_EVERY = 64
FLUSH_AFTER_S = 2.0
PRUNE_EVERY_S = 3600.0


class RecallRecorder:
    """Holds recall entries and writes them to ``log`` in batches."""

    def __init__(
        self,
        log: RecallLog,
        recall: RecallGroup,
        *,
        secrets: str,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        """``recall``: the recall settings (how long the log keeps a recall, whether with
        its query); ``secrets``: the workspace's secrets setting, applied to a query."""
        self.log = log
        self._days = recall.recall_log_days
        self._queries = recall.recall_log_queries
        self._secrets = secrets
        self._monotonic = monotonic
        self._held: list[RecallEntry] = []
        self._since = 0.0
        self._pruned_at: float | None = None
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self._days > 0

    def record(
        self,
        result: RecallResult,
        *,
        at: datetime,
        reader: Reader | None,
        tenant: str,
        agents: tuple[str, ...],
    ) -> None:
        """Log one recall of ``agents`` (``()``: every agent) made for ``reader``."""
        if not self.enabled:
            return
        entry = entry_for(
            at=at,
            reader=reader,
            tenant=tenant,
            agents=agents,
            item_ids=tuple(hit.item.id for hit in result.hits),
            query=kept_query(result.query, keep=self._queries, secrets=self._secrets),
        )
        with self._lock:
            if not self._held:
                self._since = self._monotonic()
            self._held.append(entry)
            due = len(self._held) >= FLUSH_EVERY or self._monotonic() - self._since >= FLUSH_AFTER_S
        if due:
            self._flush_quietly()

    def close(self) -> None:
        """Write what is held, as the memory closes."""
        self._flush_quietly()

    def _flush_quietly(self) -> None:
        """:meth:`flush`; if the log cannot be written, say so and drop the entries:
        statistics never fail a recall, nor the closing of a memory."""
        try:
            self.flush()
        except (IndexError_, StoreError) as exc:
            log.warning("the recall log could not be written (%s): entries dropped", exc)

    def flush(self) -> None:
        """Write every entry held, and prune the log when that is due."""
        with self._lock:
            held, self._held = self._held, []
        if held:
            self.log.append(held)
            newest = max(e.at for e in held)
            now = self._monotonic()
            if self._pruned_at is None or now - self._pruned_at >= PRUNE_EVERY_S:
                self._pruned_at = now
                self.log.prune(newest - timedelta(days=self._days))
