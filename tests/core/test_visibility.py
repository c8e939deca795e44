"""The visibility rule, scope by scope (SPEC M5)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from kronika.core.model import ItemType, Layer, MemoryItem, Provenance, Reader, Scope, Tier
from kronika.core.visibility import visible

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def item(scope: Scope, **kw: str | None) -> MemoryItem:
    return MemoryItem(
        id="i1",
        agent="main",
        content="x",
        type=ItemType.FACT,
        layer=Layer.LONG_TERM,
        tier=Tier.LONG,
        created_at=T0,
        updated_at=T0,
        provenance=Provenance("brain.md"),
        scope=scope,
        **kw,  # type: ignore[arg-type]
    )


ANNA_IN_GENERAL = Reader(tenant="acme", user="anna", channel="general", teams=("core",))


@pytest.mark.parametrize(
    ("it", "seen"),
    [
        (item(Scope.GLOBAL, tenant="acme"), True),
        (item(Scope.GLOBAL, tenant="other"), False),
        (item(Scope.TEAM, tenant="acme", team="core"), True),
        (item(Scope.TEAM, tenant="acme", team="sales"), False),
        (item(Scope.TEAM, tenant="acme"), False),
        (item(Scope.CHANNEL, tenant="acme", channel="general"), True),
        (item(Scope.CHANNEL, tenant="acme", channel="dm-bob"), False),
        (item(Scope.CHANNEL, tenant="acme"), False),
        (item(Scope.PERSONAL, tenant="acme", user="anna"), True),
        (item(Scope.PERSONAL, tenant="acme", user="bob"), False),
        (item(Scope.PERSONAL, tenant="acme"), False),
        (item(Scope.PERSONAL, tenant="other", user="anna"), False),
    ],
)
def test_a_reader_sees_only_their_own_channel_team_and_tenant(it: MemoryItem, seen: bool) -> None:
    assert visible(it, ANNA_IN_GENERAL) is seen


def test_the_unnamed_owner_sees_items_without_a_user_and_no_channel_items() -> None:
    owner = Reader(tenant="acme")
    assert visible(item(Scope.PERSONAL, tenant="acme"), owner)
    assert not visible(item(Scope.PERSONAL, tenant="acme", user="anna"), owner)
    assert not visible(item(Scope.CHANNEL, tenant="acme", channel="general"), owner)
