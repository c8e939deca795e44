"""The chart and policy routes over a real server: the figures match the store, each
key sees only its tenant and agent, a reader counts only what it may see, bad input is
a 422, and policies that name other tenants cannot be written through the API."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from tests.server.conftest import ACME_CONFIG, Running, Served, make_keys

from kronika import Memory, build_memory, load_settings
from kronika.app import USAGE_FILE
from kronika.core.usage import UsageEntry
from kronika.server.app import ServerConfig, create_app
from kronika.server.keys import KeyStore
from kronika.server.service import Service
from kronika.stores.usage import JsonlUsageLedger

POLICIES = """
[retention]
short = 90

[[policy]]
name = "no DMs in long-term memory"
dm = true
max_tier = "mid"

[[policy]]
name = "never store #hr-private"
channels = ["hr-private"]
store = false

[[policy]]
name = "bob keeps notes a week"
agents = ["bob"]
tiers = ["mid"]
retention_days = 7

[[policy]]
name = "the other tenant keeps nothing"
tenants = ["globex"]
store = false

[[policy]]
name = "two tenants, two agents"
tenants = ["acme", "globex"]
agents = ["bob", "carol"]
tiers = ["short"]
retention_days = 3
"""


def serve_with_policies(tmp_path: Path) -> Iterator[Served]:
    """The tenants of ``conftest`` (same agents, same keys), acme with storage policies."""
    root = tmp_path / "tenants"
    (root / "acme").mkdir(parents=True)
    (root / "acme" / "kronika.toml").write_text(ACME_CONFIG + POLICIES, encoding="utf-8")
    memories: dict[str, Memory] = {}
    for tenant in ("acme", "globex"):
        settings = load_settings(root / tenant, environ={}, embedder="hashing", tenant=tenant)
        memories[tenant] = build_memory(settings, create=True)
    for name in ("alice", "bob", "carol"):
        memories["acme"].create_agent(name)
    memories["globex"].create_agent("alice")
    store = KeyStore(tmp_path / "keys.sqlite")
    keys = make_keys(store)
    service = Service(memories)
    try:
        with Running(create_app(service, store, ServerConfig(rate_per_second=0))) as url:
            yield Served(url, keys, memories, service, store)
    finally:
        service.jobs.wait(10)
        for memory in memories.values():
            memory.close()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    yield from serve_with_policies(tmp_path)


def days_ago(memory: Memory, n: int) -> datetime:
    return memory.clock.now() - timedelta(days=n)


def fill(memory: Memory) -> dict[str, int]:
    """A few days of alice's memory, one channel item, a ledger and a recall 2 days ago;
    returns the slot (index in a 30-day window) of each day used, and that recall's hits."""
    memory.remember("Kraków", key="city", agent="alice", at=days_ago(memory, 40))
    memory.remember("Zofia lubi pierogi", key="ulubione", agent="alice", at=days_ago(memory, 3))
    sid = "2026-11-22_001"
    memory.save_turn(
        sid, "user", "Mój pies ma na imię Burek", agent="alice", at=days_ago(memory, 3)
    )
    memory.save_turn(
        sid, "assistant", "Burek to piękne imię", agent="alice", at=days_ago(memory, 2)
    )
    memory.note("Burek był u weterynarza", agent="alice")
    memory.note("Burek: ściśle tajne", agent="alice", channel="vet")  # only #vet may see it
    memory.remember("tea", key="drink", agent="bob")
    home = memory.settings.home
    ledger = JsonlUsageLedger(home / USAGE_FILE)
    today = memory.clock.now()
    for at, purpose, agent, tin, tout, outcome in [
        (days_ago(memory, 1), "extraction", "alice", 1000, 200, "ok"),
        (today, "extraction", "alice", 500, 100, "ok"),
        (today, "summary", "alice", 3000, 400, "error"),
        (today, "summary", "alice", 0, 0, "over budget"),  # held back: not a call
        (today, "chat", "bob", 9999, 9999, "ok"),  # another agent
    ]:
        ledger.append(UsageEntry(at, purpose, agent, "m", tin, tout, 0.5, outcome))
    past = memory.recall("Burek", agent="alice", reader=memory.reader(), now=days_ago(memory, 2))
    memory.recall("tea", agent="bob", reader=memory.reader())  # another agent's
    return {"today": 29, "1": 28, "2": 27, "3": 26, "hits 2 days ago": len(past.hits)}


def test_growth_counts_the_items_kept_by_the_day_they_were_created(served: Served) -> None:
    acme = served.memories["acme"]
    at = fill(acme)
    answer = served.call("GET", "/v1/agents/alice/charts/growth?days=30")
    assert answer.status == 200, answer.body
    body = answer.body
    assert len(body["days"]) == 30
    assert body["days"][-1] == acme.clock.now().astimezone(UTC).date().isoformat()
    zero = [0] * 30

    def only(**slots: int) -> list[int]:
        values = list(zero)
        for name, n in slots.items():
            values[at[name.removeprefix("d")]] = n
        return values

    assert body["by_tier"] == {
        "long": only(d3=1),
        "mid": only(today=1),
        "short": only(d3=1, d2=1),
    }
    assert body["by_type"] == {
        "message": only(d3=1, d2=1),
        "note": only(today=1),
        "profile": only(d3=1),  # a liking is a profile fact
    }
    assert body["before"] == 1  # Kraków, 40 days ago
    assert body["total"] == 5 == len(acme.items(agent="alice", reader=acme.reader()))


def test_a_reader_counts_only_what_it_may_see(served: Served) -> None:
    fill(served.memories["acme"])
    path = "/v1/agents/alice/charts/growth?days=7"
    owner = served.call("GET", path, key="acme-reader").body
    vet = served.call("GET", path, key="acme-reader", headers={"X-Kronika-Channel": "vet"}).body
    assert sum(owner["by_tier"]["mid"]) == 1 and sum(vet["by_tier"]["mid"]) == 2
    stranger = served.call("GET", path, key="acme-reader", headers={"X-Kronika-User": "jan"})
    assert stranger.body["total"] == 0 and stranger.body["by_tier"] == {}


def test_recalls_per_day_come_from_the_recall_log_as_the_reader_may_see_it(
    served: Served,
) -> None:
    acme = served.memories["acme"]
    at = fill(acme)
    vet = acme.reader(channel="vet")
    seen = acme.recall("Burek", agent="alice", k=10, reader=vet)
    assert any(h.item.channel == "vet" for h in seen.hits)
    answer = served.call("GET", "/v1/agents/alice/charts/recalls?days=30")
    assert answer.status == 200, answer.body
    body = answer.body
    visible = [h for h in seen.hits if h.item.channel is None]
    recalls, uses = [0] * 30, [0] * 30
    # the owner's own recall 2 days ago; #vet's today counts for the items it may see
    recalls[at["2"]], recalls[at["today"]] = 1, 1
    uses[at["today"]] = len(visible)
    assert body["recalls"] == recalls  # bob's recall is not alice's
    uses[at["2"]] = at["hits 2 days ago"]
    assert body["uses"] == uses
    assert body["items"][at["today"]] == len(visible)
    assert "ściśle tajne" not in str(body)  # the #vet note stays out of the owner's view
    assert all(t["id"] != h.item.id for t in body["top"] for h in seen.hits if h.item.channel)
    in_vet = served.call(
        "GET", "/v1/agents/alice/charts/recalls?days=30", headers={"X-Kronika-Channel": "vet"}
    ).body
    assert in_vet["uses"][at["today"]] == len(seen.hits)
    stranger = served.call(
        "GET", "/v1/agents/alice/charts/recalls?days=30", headers={"X-Kronika-User": "jan"}
    ).body
    assert sum(stranger["recalls"]) == 0 and stranger["top"] == []


def test_the_recall_log_is_exported_as_each_reader_may_have_it(served: Served) -> None:
    acme = served.memories["acme"]
    fill(acme)
    answer = served.call(
        "POST",
        "/v1/agents/alice/recall",
        {"query": "Burek"},
        key="acme-alice",
        headers={"X-Kronika-Channel": "vet"},
    )
    assert answer.status == 200, answer.body
    hits = [h["item"]["id"] for h in answer.body["hits"]]
    secret = next(h["item"]["id"] for h in answer.body["hits"] if h["item"]["channel"] == "vet")
    vet = served.call(
        "GET", "/v1/agents/alice/recall-log", headers={"X-Kronika-Channel": "vet"}
    ).body["recalls"]
    assert [(e["channel"], e["item_ids"]) for e in vet][-1] == ("vet", hits)
    assert all(e["query"] is None for e in vet)  # recall_log_queries is off
    owner = served.call("GET", "/v1/agents/alice/recall-log").body["recalls"]
    assert len(owner) == 2 and owner[0]["channel"] is None
    assert owner[1]["channel"] is None and secret not in owner[1]["item_ids"]
    assert owner[1]["hits"] == len(hits) - 1
    assert served.call("GET", "/v1/agents/alice/recall-log?days=1").body["recalls"] == owner[1:]
    for outsider in ("acme-reader-bob", "acme-carol", "initech-admin"):
        assert served.call("GET", "/v1/agents/alice/recall-log", key=outsider).status == 404
    assert served.call("GET", "/v1/agents/alice/recall-log?days=0").status == 422
    theirs = served.call("GET", "/v1/agents/alice/recall-log", key="globex-admin").body
    assert theirs["recalls"] == []


def test_llm_usage_per_day_and_purpose_from_the_ledger(served: Served) -> None:
    at = fill(served.memories["acme"])
    body = served.call("GET", "/v1/agents/alice/charts/llm?days=30").body
    assert body["calls"][at["today"]] == 2 and body["calls"][at["1"]] == 1
    assert sum(body["calls"]) == 3 and sum(body["failed"]) == 1
    assert body["tokens_in"][at["today"]] == 3500 and body["tokens_out"][at["1"]] == 200
    assert body["priced"] is False and sum(body["cost"]) == 0
    assert body["by_purpose"] == [
        {"purpose": "summary", "calls": 1, "tokens_in": 3000, "tokens_out": 400, "cost": 0},
        {"purpose": "extraction", "calls": 2, "tokens_in": 1500, "tokens_out": 300, "cost": 0},
    ]
    week = served.call("GET", "/v1/agents/alice/charts/llm?days=1").body
    assert week["calls"] == [2]


@pytest.mark.parametrize("chart", ["growth", "recalls", "llm"])
def test_chart_routes_guard_like_every_other_route(served: Served, chart: str) -> None:
    path = f"/v1/agents/alice/charts/{chart}"
    assert served.call("GET", path, key="acme-alice").status == 200
    assert served.call("GET", path, key=None).status == 401
    assert served.call("GET", path, key="acme-revoked").status == 401
    for outsider in ("initech-admin", "acme-reader-bob", "acme-admin-bob", "acme-carol"):
        assert served.call("GET", path, key=outsider).status == 404, outsider
    # globex has an alice of its own: its key sees that one, never acme's
    fill(served.memories["acme"])
    theirs = served.call("GET", path + "?days=30", key="globex-admin").body
    assert "ściśle" not in str(theirs) and theirs.get("total", 0) == 0
    assert sum(theirs.get("calls", [0])) == 0 and sum(theirs.get("recalls", [0])) == 0
    assert served.call("GET", "/v1/agents/nobody/charts/" + chart).status == 404
    for bad in ("0", "-1", "abc", "3661"):
        refused = served.call("GET", f"{path}?days={bad}")
        assert refused.status == 422, (bad, refused.body)


def test_policies_show_what_can_apply_to_the_agent_and_cannot_be_written(
    served: Served,
) -> None:
    alice = served.call("GET", "/v1/agents/alice/policies", key="acme-reader")
    assert alice.status == 200, alice.body
    assert [p["name"] for p in alice.body["policies"]] == [
        "no DMs in long-term memory",
        "never store #hr-private",
    ]
    assert alice.body["retention_days"] == {"short": 90, "mid": None, "long": None}
    assert alice.body["dm_channels"] == ["dm:*", "dm-*"]
    hr = alice.body["policies"][1]
    assert hr["store"] is False and hr["channels"] == ["hr-private"]
    assert hr["effect"] == "never store"
    bob = served.call("GET", "/v1/agents/bob/policies", key="acme-reader-bob").body
    assert "bob keeps notes a week" in [p["name"] for p in bob["policies"]]
    assert "the other tenant" not in str(bob)
    assert served.call("GET", "/v1/agents/alice/policies", key=None).status == 401
    assert served.call("GET", "/v1/agents/alice/policies", key="acme-reader-bob").status == 404
    assert (
        served.call("GET", "/v1/agents/alice/policies", key="globex-admin").body["policies"] == []
    )
    for key in ("acme-reader", "acme-admin"):
        for method in ("POST", "PATCH", "DELETE"):
            edit = served.call(method, "/v1/agents/alice/policies", {"name": "x"}, key=key)
            assert edit.status == 405, (key, method, edit.status)
    assert alice.body["editable"] is False and alice.body["toml"] is None
    admin = served.call("GET", "/v1/agents/alice/policies").body
    assert admin["editable"] is False and "other tenants" in admin["not_editable"]
    for key in ("acme-reader", "acme-admin", "acme-alice"):  # a rule names globex
        edit = {"toml": '[[policy]]\nname = "x"\nstore = false\n'}
        refused = served.call("PUT", "/v1/agents/alice/policies", edit, key=key)
        assert refused.status == 403, (key, refused.body)
    text = (served.memories["acme"].settings.home / "kronika.toml").read_text(encoding="utf-8")
    assert text.endswith(POLICIES)


def test_a_policy_names_only_the_callers_tenant_and_agent(served: Served) -> None:
    """A rule that lists other tenants and agents is shown from the caller's side: the
    names of the others appear nowhere in the answer, in the fields or the words."""
    bob = served.call("GET", "/v1/agents/bob/policies", key="acme-reader-bob").body
    shared = next(p for p in bob["policies"] if p["name"] == "two tenants, two agents")
    assert shared["applies_to"] == "tenant acme; agent bob; tier short"
    assert shared["effect"] == "keep 3 day(s)"
    assert "globex" not in str(bob) and "carol" not in str(bob)
    carol = served.call("GET", "/v1/agents/carol/policies", key="acme-carol").body
    assert "bob" not in str(carol) and "globex" not in str(carol)
