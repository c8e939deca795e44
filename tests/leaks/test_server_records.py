"""Through a real server on 127.0.0.1, one workspace serving three tenants: the
tenant-wide records (the audit trail, statistics, jobs) and agent creation stay
within the key's tenant, and the audit trail within what the key's reader may see."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the [server] extra (fastapi, uvicorn) is not installed")

from tests.server.conftest import Running  # noqa: E402

from kronika.core.model import MemoryItem, Reader  # noqa: E402
from kronika.core.visibility import visible  # noqa: E402
from kronika.server.app import ServerConfig, create_app  # noqa: E402
from kronika.server.keys import KeyStore  # noqa: E402
from kronika.server.service import Service  # noqa: E402
from leaks.workload import AGENTS, TEAMS, Backend, markers  # noqa: E402

TENANTS = sorted(set(AGENTS.values()))
CONTEXTS = [(None, None), ("anna", None), ("bob", "dm-anna-bob"), ("carl", "general")]


class Server:
    def __init__(self, url: str, keys: dict[str, str]) -> None:
        self.url = url
        self.keys = keys

    def call(
        self, method: str, path: str, key: str, body: Any = None, **headers: str
    ) -> tuple[int, Any]:
        sent = {"Authorization": f"Bearer {self.keys[key]}", **headers}
        data = None if body is None else json.dumps(body).encode()
        if data is not None:
            sent["Content-Type"] = "application/json"
        request = urllib.request.Request(self.url + path, data, sent, method=method)
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as exc:
            with exc:
                return exc.code, json.loads(exc.read())


@pytest.fixture(scope="module")
def server(backend: Backend, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    memory = backend.memory
    store = KeyStore(Path(tmp_path_factory.mktemp("keys")) / "keys.sqlite")
    keys = {}
    for tenant in TENANTS:
        for role in ("admin", "reader"):
            keys[f"{tenant}-{role}"] = store.create(tenant, role=role).token
    keys["acme-bot"] = store.create("acme", role="agent", agent="acme-bot").token
    keys["acme-admin-bot"] = store.create("acme", role="admin", agent="acme-bot").token
    service = Service(dict.fromkeys(TENANTS, memory))  # one workspace, three tenants
    try:
        with Running(create_app(service, store, ServerConfig(rate_per_second=0))) as url:
            yield Server(url, keys)
    finally:
        service.jobs.wait(10)
        service.jobs.close()  # the memory is the backend's: closed by its fixture
        store.close()


def _items(backend: Backend) -> dict[str, MemoryItem]:
    return {
        item.id: item
        for agent in AGENTS
        for item in backend.memory.items(agent=agent, include_superseded=True)
    }


def _reader(tenant: str, user: str | None, channel: str | None) -> Reader:
    return Reader(tenant, user, channel, tuple(t for t, m in TEAMS.items() if user in m))


@pytest.mark.parametrize("role", ["admin", "reader"])
@pytest.mark.parametrize("tenant", TENANTS)
def test_audit_holds_only_the_keys_tenant_and_what_its_reader_may_see(
    server: Server, backend: Backend, tenant: str, role: str
) -> None:
    items = _items(backend)
    ours = {agent for agent, t in AGENTS.items() if t == tenant}
    for user, channel in CONTEXTS:
        headers = {}
        if user:
            headers["X-Kronika-User"] = user
        if channel:
            headers["X-Kronika-Channel"] = channel
        status, body = server.call("GET", "/v1/audit?limit=100000", f"{tenant}-{role}", **headers)
        assert status == 200
        entries = body["entries"]
        assert entries, (tenant, role, user, channel)
        assert {e["target_agent"] for e in entries} <= ours
        owner = role == "admin" and not (user or channel)
        if owner:  # the tenant's owner: its whole trail, no other tenant's
            every = backend.memory.audit()
            assert len(entries) == len([e for e in every if e.target_agent in ours])
            continue
        reader = _reader(tenant, user, channel)
        allowed = {i for i, item in items.items() if visible(item, reader)}
        assert {e["item_id"] for e in entries} <= allowed
        hidden = {m for i, item in items.items() if i not in allowed for m in markers(item.content)}
        assert not markers(" ".join(e["summary"] for e in entries)) & hidden
        for agent in ours:
            status, one = server.call(
                "GET", f"/v1/agents/{agent}/audit?limit=100000", f"{tenant}-{role}", **headers
            )
            assert status == 200
            assert {e["item_id"] for e in one["entries"]} <= allowed


def test_agent_keys_read_the_audit_of_their_agent_as_their_reader(
    server: Server, backend: Backend
) -> None:
    items = _items(backend)
    reader = _reader("acme", "anna", None)
    allowed = {i for i, item in items.items() if visible(item, reader)}
    for key in ("acme-bot", "acme-admin-bot"):
        assert server.call("GET", "/v1/audit", key)[0] == 403
        status, body = server.call(
            "GET", "/v1/agents/acme-bot/audit?limit=100000", key, **{"X-Kronika-User": "anna"}
        )
        assert status == 200 and body["entries"]
        assert {e["item_id"] for e in body["entries"]} <= allowed
        assert server.call("GET", "/v1/agents/globex-bot/audit", key)[0] == 404


@pytest.mark.parametrize("role", ["admin", "reader"])
@pytest.mark.parametrize("tenant", TENANTS)
def test_stats_name_only_the_keys_tenants_agents(server: Server, tenant: str, role: str) -> None:
    status, body = server.call("GET", "/v1/stats", f"{tenant}-{role}")
    assert status == 200
    ours = {agent for agent, t in AGENTS.items() if t == tenant}
    assert set(body["agents"]) == ours
    assert set(body["index"].get("items_by_agent", {})) <= ours
    assert body["index"].get("items", 0) == sum(body["agents"].values())
    text = json.dumps(body)
    for other in set(AGENTS) - ours:
        assert other not in text


@pytest.mark.parametrize(("user", "channel"), CONTEXTS[1:])
def test_stats_count_what_the_reader_may_see(
    server: Server, backend: Backend, user: str, channel: str | None
) -> None:
    headers = {"X-Kronika-User": user, **({"X-Kronika-Channel": channel} if channel else {})}
    status, body = server.call("GET", "/v1/stats", "acme-reader", **headers)
    assert status == 200
    reader = _reader("acme", user, channel)
    assert body["agents"] == {"acme-bot": backend.memory.count(agent="acme-bot", reader=reader)}
    owner = server.call("GET", "/v1/stats", "acme-admin")[1]["agents"]["acme-bot"]
    assert owner == backend.memory.count(agent="acme-bot") > body["agents"]["acme-bot"]


def test_agents_are_created_in_the_keys_tenant_and_a_taken_name_is_a_conflict(
    server: Server, backend: Backend
) -> None:
    # acme's admin: a new agent here would belong to the workspace's tenant (default)
    status, body = server.call("POST", "/v1/agents", "acme-admin", {"name": "newbot"})
    assert status == 409 and 'tenant = "acme"' in body["message"]
    assert not backend.memory.workspace.has_agent("newbot")
    # another tenant's agent, and one's own, are taken names, never "created"
    for key, name in (("acme-admin", "globex-bot"), ("globex-admin", "globex-bot")):
        status, body = server.call("POST", "/v1/agents", key, {"name": name})
        assert status == 409 and body["error"] == "Conflict"
    assert server.call("GET", "/v1/agents", "acme-admin")[1]["agents"] == ["acme-bot"]
    # the workspace's own tenant creates as before
    status, body = server.call("POST", "/v1/agents", "default-admin", {"name": "newbot"})
    assert (status, body["tenant"]) == (201, "default")
    assert server.call("GET", "/v1/agents", "acme-admin")[1]["agents"] == ["acme-bot"]
    assert "newbot" in server.call("GET", "/v1/agents", "default-admin")[1]["agents"]


def test_jobs_are_listed_only_to_their_tenant(server: Server) -> None:
    status, job = server.call("POST", "/v1/agents/globex-bot/jobs/decay", "globex-admin", {})
    assert status == 202
    assert job["id"] not in {
        j["id"] for j in server.call("GET", "/v1/jobs", "acme-admin")[1]["jobs"]
    }
    assert server.call("GET", f"/v1/jobs/{job['id']}", "acme-admin")[0] == 404
    assert server.call("GET", f"/v1/jobs/{job['id']}", "globex-admin")[0] == 200


def test_an_import_restores_agents_of_the_keys_tenant_only(
    server: Server, backend: Backend
) -> None:
    status, theirs = server.call("GET", "/v1/export?agent=globex-bot", "globex-admin")
    assert status == 200 and "globex-bot" in theirs["agents"]
    before = backend.memory.count(agent="globex-bot")
    for replace in (False, True):
        status, body = server.call(
            "POST", "/v1/import", "acme-admin", {"document": theirs, "replace": replace}
        )
        assert status == 409 and "tenant 'globex'" in body["message"], body
    assert backend.memory.count(agent="globex-bot") == before
    # a new agent the document declares for another tenant is refused too
    moved = json.loads(json.dumps(theirs).replace("globex-bot", "fresh-bot"))
    status, body = server.call("POST", "/v1/import", "acme-admin", {"document": moved})
    assert status == 409 and not backend.memory.workspace.has_agent("fresh-bot")
    # nor may a document's audit trail speak of agents it does not hold
    status, own = server.call("GET", "/v1/export?agent=acme-bot", "acme-admin")
    assert status == 200 and own["audit"]
    stray = {**own, "audit": [{**own["audit"][0], "target_agent": "globex-bot"}]}
    status, body = server.call("POST", "/v1/import", "acme-admin", {"document": stray})
    assert status == 422 and "globex-bot" in body["message"]
