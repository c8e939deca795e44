""" "Where is Alice based these days?" asks where the user lives now: "based" names the
key ``city`` as "live" does (:mod:`kronika.core.topics`), and the days of "these days"
are no days to look for (:mod:`kronika.core.keywords`), so a lesson about bookings "30
days ahead" does not come first; on every backend, with the default embedder."""

from __future__ import annotations

from datetime import UTC, datetime

from backends import Backend


def test_where_one_is_based_these_days_is_the_city_now(backend: Backend) -> None:
    memory = backend.open(embedder="use-multilingual")
    memory.create_agent("me")
    memory.remember(
        key="name", value="Alice Morgan", agent="me", at=datetime(2026, 1, 2, tzinfo=UTC)
    )
    memory.remember(key="city", value="Leeds", agent="me", at=datetime(2026, 1, 5, tzinfo=UTC))
    memory.record_outcome(
        "book a table for Alice's birthday",
        "used the restaurant's web form",
        ok=False,
        reasons=("the form refuses bookings more than 30 days ahead",),
        agent="me",
        at=datetime(2026, 3, 1, tzinfo=UTC),
    )
    memory.remember(key="city", value="Bristol", agent="me", at=datetime(2026, 7, 14, tzinfo=UTC))
    hits = memory.recall(
        "Where is Alice based these days?",
        agent="me",
        k=5,
        now=datetime(2026, 10, 1, tzinfo=UTC),
        record_access=False,
    ).hits
    assert hits and hits[0].item.value == "Bristol", [hit.item.content for hit in hits]
