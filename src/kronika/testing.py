"""Fakes kronika ships so you can test your own agents without models or wall-clock time.

>>> from datetime import UTC, datetime
>>> clock = FrozenClock(datetime(2025, 11, 27, 9, 0, tzinfo=UTC))
>>> clock.advance(minutes=31)
>>> clock.now().isoformat()
'2025-11-27T09:31:00+00:00'

>>> embedder = HashingEmbedder()
>>> vectors = embedder.embed_documents(["I love jazz", "jazz concerts", "tax forms"])
>>> bool(vectors[0] @ vectors[1] > vectors[0] @ vectors[2])
True
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from kronika.ports import AuditEntry
from kronika.providers.embedders import HashingEmbedder

__all__ = ["FrozenClock", "HashingEmbedder", "ListAuditLog"]

_DEFAULT_START = datetime(2025, 1, 1, tzinfo=UTC)


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


class FrozenClock:
    """A clock that moves only when told to (the :class:`kronika.ports.Clock` port).

    Starts at ``start`` (default 2025-01-01 00:00 UTC); naive datetimes are taken as
    UTC. ``advance(days=1, hours=2)`` takes :class:`datetime.timedelta` arguments.

    >>> clock = FrozenClock()
    >>> clock.set(datetime(2030, 5, 1))
    >>> clock.now().year, clock.now().tzinfo
    (2030, datetime.timezone.utc)
    """

    def __init__(self, start: datetime | None = None) -> None:
        self._now = _utc(start) if start is not None else _DEFAULT_START

    def now(self) -> datetime:
        return self._now

    def advance(self, **delta: float) -> None:
        """Move forward (or back, with negative values) by ``timedelta(**delta)``."""
        self._now += timedelta(**delta)

    def set(self, moment: datetime) -> None:
        """Jump to ``moment``."""
        self._now = _utc(moment)


class ListAuditLog:
    """An in-memory audit trail (the :class:`kronika.ports.AuditLog` port).

    ``read`` returns entries oldest first; with ``limit`` it returns the newest
    ``limit`` of them (still oldest first), like ``tail``.

    >>> log = ListAuditLog()
    >>> log.append(AuditEntry(datetime(2025, 1, 1, tzinfo=UTC), "remember", "jaskier",
    ...     "jaskier", "User", "f1", "city: Kraków", "applied"))
    >>> [entry.summary for entry in log.read("jaskier")]
    ['city: Kraków']
    >>> log.read("other")
    []
    """

    def __init__(self) -> None:
        self.entries: list[AuditEntry] = []

    def append(self, entry: AuditEntry) -> None:
        self.entries.append(entry)

    def read(self, agent: str | None = None, limit: int | None = None) -> list[AuditEntry]:
        chosen = [e for e in self.entries if agent is None or e.target_agent == agent]
        if limit is not None:
            chosen = chosen[-limit:] if limit > 0 else []
        return chosen
