"""What the recall log keeps of a query, and whose a recall is."""

from __future__ import annotations

from datetime import UTC, datetime

from kronika.core.model import Reader
from kronika.core.recall_log import ALL_AGENTS, entry_for, is_own, kept_query

KEY = "sk-abcdefghijklmnopqrstuvwxyz0123456789"
AT = datetime(2026, 11, 25, tzinfo=UTC)


def test_a_query_is_kept_only_when_asked_and_screened_as_stored_text() -> None:
    assert kept_query(f"where is {KEY}", keep=False, secrets="allow") is None
    assert kept_query("   ", keep=True, secrets="redact") is None
    for mode in ("redact", "refuse"):  # a recall is never refused for its query
        assert kept_query(f"where is {KEY}", keep=True, secrets=mode) == (
            "where is [secret: openai-key]"
        )
    assert kept_query(f"where is {KEY}", keep=True, secrets="allow") == f"where is {KEY}"


def test_an_entry_is_its_readers_and_names_one_agent_or_all() -> None:
    ann = Reader(tenant="acme", user="ann", channel="ops")
    one = entry_for(at=AT, reader=ann, tenant="x", agents=("a",), item_ids=("i1",), query=None)
    assert (one.tenant, one.agent, one.user, one.channel, one.hits) == (
        "acme",
        "a",
        "ann",
        "ops",
        1,
    )
    every = entry_for(at=AT, reader=None, tenant="t", agents=(), item_ids=(), query=None)
    assert (every.tenant, every.agent, every.user) == ("t", ALL_AGENTS, None)
    assert is_own(one, ann) and is_own(one, None)
    assert not is_own(one, Reader(tenant="acme", user="ann"))
    assert not is_own(one, Reader(tenant="other", user="ann", channel="ops"))
