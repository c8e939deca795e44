"""The write path's audit trail, whose entries a batch appends together.

A batch (``Memory.remember_many``) makes one audit entry per fact. Appended one at a
time, each opened the trail, wrote a line and closed it again (a round trip and a
commit each in PostgreSQL). Within :meth:`HeldAudit.holding` the entries wait in memory
and are appended in one write when the block ends, whether it returned or raised, in
the order they were made: the trail reads as it would have. A batch holds them under
the workspace lock and appends them before its journal lets the batch happen
(:mod:`kronika.stores.batch`), as its entries were appended before; a batch killed
before that leaves neither its facts nor their entries.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from kronika.core.redaction import Phrases
from kronika.ports import AuditEntry, AuditLog


def append_all(log: AuditLog, entries: Sequence[AuditEntry]) -> None:
    """Append ``entries`` to ``log`` in order: in one write when it can
    (``append_many``), else one by one."""
    many = getattr(log, "append_many", None)
    if many is not None:
        many(entries)
        return
    for entry in entries:
        log.append(entry)


class HeldAudit:
    """:class:`~kronika.ports.AuditLog` over ``log`` that can hold appends back."""

    def __init__(self, log: AuditLog) -> None:
        self.log = log
        self._local = threading.local()  # the entries held by this thread's batch

    def _held(self) -> list[AuditEntry] | None:
        held: list[AuditEntry] | None = getattr(self._local, "entries", None)
        return held

    @contextmanager
    def holding(self) -> Iterator[list[str]]:
        """Within the block, this thread's entries wait; they are appended when it
        ends. Yields a list that then holds why they could not be (the changes they
        describe are stored all the same)."""
        problems: list[str] = []
        if self._held() is not None:  # inside another hold: appended with its entries
            yield problems
            return
        entries: list[AuditEntry] = []
        self._local.entries = entries
        try:
            yield problems
        finally:
            self._local.entries = None
            try:
                append_all(self.log, entries)
            except Exception as exc:
                problems.append(f"the changes were stored but not added to the audit trail: {exc}")

    def append(self, entry: AuditEntry) -> None:
        held = self._held()
        if held is None:
            self.log.append(entry)
        else:
            held.append(entry)

    def read(self, agent: str | None = None, limit: int | None = None) -> list[AuditEntry]:
        self._release()
        return self.log.read(agent, limit)

    def redact(self, agent: str, pattern: Phrases, marker: str) -> int:
        self._release()
        return self.log.redact(agent, pattern, marker)

    def mentioning(self, agent: str, pattern: Phrases) -> int:
        self._release()
        return self.log.mentioning(agent, pattern)

    def _release(self) -> None:
        """Append what this thread holds now (the trail is about to be read)."""
        held = self._held()
        if held:
            append_all(self.log, held)
            held.clear()
