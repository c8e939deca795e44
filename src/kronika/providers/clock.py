"""The real clock (the :class:`kronika.ports.Clock` port)."""

from __future__ import annotations

from datetime import UTC, datetime


class SystemClock:
    """Wall-clock time, timezone-aware UTC. Tests use :class:`kronika.testing.FrozenClock`."""

    def now(self) -> datetime:
        return datetime.now(UTC)
