"""Keys of two tenants and of agents with different grants: on every route, nothing is
read or written across them, and a refusal never tells an agent that exists from one
that does not."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tests.server.conftest import Served

SECRETS = {
    ("acme", "alice"): "acme alice likes marzipan",
    ("acme", "bob"): "acme bob hides keys under the mat",
    ("acme", "carol"): "acme carol plays the oboe",
    ("globex", "alice"): "globex alice owns a llama",
}
BODIES: dict[str, Any] = {
    "/v1/agents/{agent}/memories": {"content": "written across a boundary"},
    "/v1/agents/{agent}/notes": {"text": "written across a boundary"},
    "/v1/agents/{agent}/forget": {"topic": "marzipan"},
    "/v1/agents/{agent}/recall": {"query": "marzipan llama oboe mat"},
    "/v1/agents/{agent}/sessions/{session_id}/turns": {"speaker": "user", "content": "hi"},
    "/v1/agents/{agent}/sessions/{session_id}/turns/batch": {
        "turns": [{"speaker": "user", "content": "hi"}]
    },
    "/v1/agents/{agent}/distill": {"days": 7},
    "/agents/{agent}/memory/distill": {"days": 7},
    "/v1/agents/{agent}/outcomes": {"task": "t", "action": "across a boundary", "ok": False},
    "/v1/agents/{agent}/jobs/{job}": {"days": 7},
}


def _seed(served: Served) -> dict[tuple[str, str], str]:
    """Each agent's secret, and its id."""
    ids = {}
    for (tenant, agent), text in SECRETS.items():
        made = served.call(
            "POST", f"/v1/agents/{agent}/memories", {"content": text}, key=f"{tenant}-admin"
        )
        assert made.status == 200, made
        ids[(tenant, agent)] = made.body["item"]["id"]
        served.call(
            "POST", f"/v1/agents/{agent}/sessions/s1/turns",
            {"speaker": "user", "content": text}, key=f"{tenant}-admin",
        )  # fmt: skip
    return ids


def _snapshot(served: Served) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for tenant, memory in served.memories.items():
        home = Path(memory.settings.home)
        for path in sorted(home.rglob("*")):
            if path.is_file() and (path.suffix == ".md" or path.name == "audit.jsonl"):
                files[f"{tenant}/{path.relative_to(home)}"] = path.read_bytes()
    return files


def _agent_routes(served: Served) -> list[tuple[str, str]]:
    spec = served.call("GET", "/openapi.json", key=None).body
    return [
        (method.upper(), path)
        for path, ops in spec["paths"].items()
        for method in ops
        if "{agent}" in path
    ]


def _fill(path: str, agent: str, item_id: str) -> str:
    values = {"agent": agent, "memory_id": item_id, "item_id": item_id, "session_id": "s1"}
    values |= {"proposal_id": "p-1", "name": "Zofia", "job": "decay"}
    filled = re.sub(r"\{(\w+)\}", lambda m: values[m.group(1)], path)
    return filled + "?key=city" if filled.endswith("/history") else filled


def _leaks(answer: Any, allowed: set[str]) -> list[str]:
    text = str(answer.body)
    return [secret for secret in SECRETS.values() if secret in text and secret not in allowed]


def test_no_key_reaches_another_tenant_or_an_ungranted_agent_on_any_route(
    served: Served,
) -> None:
    ids = _seed(served)
    before = _snapshot(served)
    routes = _agent_routes(served)
    assert len(routes) >= 20
    # (key, agent it must not reach, the tenant whose item id is tried)
    cases = [
        ("globex-admin", "bob", "acme"),
        ("globex-admin", "carol", "acme"),
        ("globex-alice", "bob", "acme"),
        ("globex-alice", "carol", "acme"),
        ("initech-admin", "alice", "acme"),
        ("acme-alice", "carol", "acme"),
        ("acme-carol", "alice", "acme"),
        ("acme-carol", "bob", "acme"),
        ("acme-reader-bob", "alice", "acme"),
        ("acme-admin-bob", "alice", "acme"),
        ("acme-admin-bob", "carol", "acme"),
        ("acme-alice", "nobody", "acme"),
        ("acme-reader-bob", "nobody", "acme"),
    ]
    for key, agent, tenant in cases:
        item_id = ids.get((tenant, agent), "f-000000000000")
        usable = ", ".join(served.call("GET", "/v1/agents", key=key).body["agents"]) or "none yet"
        for method, path in routes:
            answer = served.call(method, _fill(path, agent, item_id), BODIES.get(path), key=key)
            # an agent that exists answers exactly like one that does not; a reader key
            # is told its role forbids writing, whatever the agent
            writes = method != "GET" and not path.endswith("/recall")
            if "reader" in key and writes:
                expected = {"error": "Forbidden", "message": "this API key may only read"}
            else:
                expected = {
                    "error": "UnknownAgent",
                    "message": f"unknown agent {agent!r} (or not one this key may use;"
                    f" agents this key may use: {usable}; an admin key adds one with"
                    " POST /v1/agents)",
                }
            assert answer.status == (403 if expected["error"] == "Forbidden" else 404)
            assert answer.body == expected, (key, method, path, answer)
    assert _snapshot(served) == before


def test_a_tenant_sees_its_own_agent_of_the_same_name_only(served: Served) -> None:
    ids = _seed(served)
    globex_secret = SECRETS[("globex", "alice")]
    for key in ("globex-admin", "globex-alice"):
        found = served.call("POST", "/v1/agents/alice/recall", BODIES[
            "/v1/agents/{agent}/recall"], key=key)  # fmt: skip
        contents = {h["item"]["content"] for h in found.body["hits"]}
        assert contents == {globex_secret}  # its fact and its turn
        assert _leaks(found, {globex_secret}) == []
        listed = served.call("GET", "/agents/alice/memory?limit=100", key=key)
        assert _leaks(listed, {globex_secret}) == [] and globex_secret in str(listed.body)
        # acme alice's item id, asked of globex alice: not found, not forgotten
        acme_id = ids[("acme", "alice")]
        assert served.call("GET", f"/v1/agents/alice/memories/{acme_id}", key=key).status == 404
    deleted = served.call(
        "DELETE", f"/agents/alice/memory/{ids[('acme', 'alice')]}", key="globex-admin"
    )
    assert deleted.status == 404
    still = served.call("GET", f"/v1/agents/alice/memories/{ids[('acme', 'alice')]}")
    assert still.status == 200


def test_tenant_wide_routes_show_only_the_keys_own(served: Served) -> None:
    _seed(served)
    served.call("POST", "/agents/alice/memory/distill", {"days": 1}, key="acme-admin")
    expect = {
        "globex-admin": {SECRETS[("globex", "alice")]},
        "globex-alice": {SECRETS[("globex", "alice")]},
        "acme-alice": {SECRETS[("acme", "alice")]},
        "acme-reader-bob": {SECRETS[("acme", "bob")]},
        "initech-admin": set(),
    }
    for key, allowed in expect.items():
        for path in ("/v1/agents", "/v1/stats", "/v1/export", "/v1/jobs", "/v1/audit"):
            answer = served.call("GET", path, key=key)
            assert answer.status in (200, 403), (key, path, answer)
            assert _leaks(answer, allowed) == [], (key, path)
        agents = served.call("GET", "/v1/agents", key=key).body["agents"]
        assert (
            agents
            == {
                "globex-admin": ["alice", "default"],
                "globex-alice": ["alice"],
                "acme-alice": ["alice"],
                "acme-reader-bob": ["bob"],
                "initech-admin": [],
            }[key]
        )
        jobs = served.call("GET", "/v1/jobs", key=key).body["jobs"]
        assert jobs == [] or key.startswith("acme-alice")
    assert served.call("GET", "/v1/audit", key="acme-alice").status == 403
    exported = served.call("GET", "/v1/export", key="acme-alice").body
    assert list(exported["agents"]) == ["alice"]
    assert exported["view"]["tenant"] == "acme"  # a reader's view, not the files
    assert all(e["target_agent"] == "alice" for e in exported.get("audit", []))


def test_grants_and_roles_decide_writes_through_the_one_write_path(served: Served) -> None:
    # bob's writers grant names alice: her key writes there, as herself
    granted = served.call(
        "POST", "/v1/agents/bob/memories", {"content": "bob's build is green"}, key="acme-alice"
    )
    assert granted.status == 200 and granted.body["outcome"] == "applied"
    entry = served.call("GET", "/v1/agents/bob/audit?limit=1").body["entries"][-1]
    assert entry["source_agent"] == "alice" and entry["target_agent"] == "bob"
    # ...but may not read bob's memory (a key reads its own agent)
    assert served.call("GET", "/v1/agents/bob/facts", key="acme-alice").status == 404
    # an admin key writes as the person
    served.call("POST", "/v1/agents/alice/memories", {"content": "tea"}, key="acme-admin")
    entry = served.call("GET", "/v1/agents/alice/audit?limit=1").body["entries"][-1]
    assert entry["source_agent"] == "user"
    # reader keys read and never write, whatever the route
    for key in ("acme-reader", "acme-reader-bob"):
        agent = "bob"
        assert served.call("GET", f"/v1/agents/{agent}/facts", key=key).status == 200
        for method, path in _agent_routes(served):
            if method == "GET" or path.endswith("/recall"):
                continue
            answer = served.call(method, _fill(path, agent, "f-x"), BODIES.get(path), key=key)
            assert answer.status == 403, (key, path, answer)
            assert answer.body["message"] == "this API key may only read"
        assert served.call("POST", "/v1/import", {"document": {}}, key=key).status == 403
        assert served.call("POST", "/v1/agents", {"name": "eve"}, key=key).status == 403
    facts = served.call("GET", "/v1/agents/bob/facts").body["facts"]
    assert [f["content"] for f in facts] == ["bob's build is green"]
