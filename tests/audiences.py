"""Items in every audience and readers of every kind, for the suites that check that a
read shows a reader exactly what :func:`kronika.core.visibility.visible` allows."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

from kronika.core.model import ItemType, Layer, MemoryItem, Provenance, Reader, Scope, Tier

T0 = datetime(2026, 1, 1, tzinfo=UTC)
TENANTS = ("acme", "globex")
USERS = (None, "anna", "bob")
CHANNELS = (None, "general", "dm")
TEAMS = (None, "core", "sales")


def all_items() -> list[MemoryItem]:
    """One item for every tenant, scope, user, channel and team (and some twice)."""
    made = []
    combos = itertools.product(TENANTS, list(Scope), USERS, CHANNELS, TEAMS)
    for n, (tenant, scope, user, channel, team) in enumerate(combos):
        made.append(
            MemoryItem(
                id=f"i{n}",
                agent="main",
                content=f"shared words item{n}",
                type=ItemType.NOTE,
                layer=Layer.LONG_TERM,
                tier=Tier.MID,
                created_at=T0 + timedelta(minutes=n),
                updated_at=T0 + timedelta(minutes=n),
                provenance=Provenance("memory/2026-01-01.md", line=n + 1),
                tenant=tenant,
                scope=scope,
                user=user,
                channel=channel,
                team=team,
            )
        )
    return made


def all_readers() -> list[Reader]:
    teams = ((), ("core",), ("core", "sales"), ("sales", "ops"))
    return [
        Reader(tenant, user, channel, chosen)
        for tenant, user, channel, chosen in itertools.product(
            (*TENANTS, "nobody"), USERS, CHANNELS, teams
        )
    ]
