"""The server over the PostgreSQL store of record (a real local PostgreSQL): the same
routes write and read through it, a key of another tenant reaches nothing, and one
server serves the keys of several tenants from one database, each its own memory."""

from __future__ import annotations

from pathlib import Path

from tests.server.conftest import Running, Served

from kronika import build_memory, load_settings
from kronika.server.app import ServerConfig, create_app
from kronika.server.keys import KeyStore, keys_path
from kronika.server.run import build_service
from kronika.server.service import Service


def test_the_server_over_postgres(tmp_path: Path, postgres_url: str) -> None:
    settings = load_settings(
        tmp_path / "team", environ={}, embedder="hashing", database_url=postgres_url
    )
    memory = build_memory(settings, create=True)
    memory.create_agent("alice")
    store = KeyStore(tmp_path / "keys.sqlite")
    keys = {
        "admin": store.create("default").token,
        "alice": store.create("default", role="agent", agent="alice").token,
        "other": store.create("globex").token,
    }
    service = Service({"default": memory})
    try:
        with Running(create_app(service, store, ServerConfig(rate_per_second=0))) as url:
            served = Served(url, keys, {"default": memory}, service, store)
            made = served.call(
                "POST", "/v1/agents/alice/memories", {"key": "city", "value": "Lviv"}, key="alice"
            )
            assert made.status == 200 and made.body["outcome"] == "applied"
            found = served.call("POST", "/v1/agents/alice/recall", {"query": "city"}, key="admin")
            assert [h["item"]["value"] for h in found.body["hits"]] == ["Lviv"]
            listed = served.call("GET", "/agents/alice/memory?scope=long_term", key="alice")
            assert [i["content"] for i in listed.body["items"]] == ["city: Lviv"]
            for method, path in (
                ("GET", "/agents/alice/memory"),
                ("POST", "/v1/agents/alice/recall"),
                ("DELETE", f"/agents/alice/memory/{made.body['item']['id']}"),
            ):
                body = {"query": "city"} if method == "POST" else None
                assert served.call(method, path, body, key="other").status == 404
            gone = served.call(
                "DELETE", f"/agents/alice/memory/{made.body['item']['id']}", key="admin"
            )
            assert gone.body["success"] is True
            again = served.call("POST", "/v1/agents/alice/recall", {"query": "Lviv"}, key="admin")
            assert again.body["hits"] == []
    finally:
        service.jobs.wait(10)
        service.close()


def test_one_server_serves_two_tenants_of_one_database_and_nothing_crosses(
    tmp_path: Path, postgres_url: str
) -> None:
    settings = load_settings(
        tmp_path / "team", environ={}, embedder="hashing", database_url=postgres_url
    )
    build_memory(settings, create=True).close()
    store = KeyStore(keys_path(settings.home))
    keys = {  # the same agent name in both tenants
        "acme": store.create("acme", role="agent", agent="default").token,
        "acme-admin": store.create("acme").token,
        "globex": store.create("globex", role="agent", agent="default").token,
        "globex-admin": store.create("globex").token,
    }
    service = build_service(settings)  # what `kronika serve` builds
    try:
        assert {"acme", "globex", "default"} <= set(service.memories)
        assert service.memories["acme"] is not service.memories["globex"]
        with Running(create_app(service, store, ServerConfig(rate_per_second=0))) as url:
            served = Served(url, keys, service.memories, service, store)
            ids = {}
            for tenant, city in (("acme", "Lviv"), ("globex", "Porto")):
                made = served.call(
                    "POST",
                    "/v1/agents/default/memories",
                    {"key": "city", "value": city},
                    key=tenant,
                )
                assert made.status == 200 and made.body["outcome"] == "applied", made.body
                ids[tenant] = made.body["item"]["id"]
                turn = {"speaker": "user", "content": f"we met in {city} on Friday"}
                sent = served.call("POST", "/v1/agents/default/sessions/s1/turns", turn, key=tenant)
                assert sent.status == 201, sent.body
            for tenant, mine, theirs in (("acme", "Lviv", "Porto"), ("globex", "Porto", "Lviv")):
                admin = f"{tenant}-admin"
                found = served.call(
                    "POST", "/v1/agents/default/recall", {"query": f"{mine} {theirs}"}, key=tenant
                )
                assert found.status == 200
                texts = " ".join(h["item"]["content"] for h in found.body["hits"])
                assert mine in texts and theirs not in texts
                for path in (
                    "/v1/agents/default/memories",
                    "/v1/agents/default/history?key=city",
                    "/v1/agents/default/brain",
                    "/v1/agents/default/sessions/s1",
                    "/v1/export",
                    "/v1/audit",
                ):
                    read = served.call("GET", path, key=admin)
                    assert read.status == 200, (path, read.body)
                    assert theirs not in str(read.body) and mine in str(read.body), path
                other = "globex" if tenant == "acme" else "acme"
                for method, path in (
                    ("GET", f"/v1/agents/default/memories/{ids[other]}"),
                    ("DELETE", f"/v1/agents/default/memories/{ids[other]}"),
                ):
                    assert served.call(method, path, key=admin).status == 404, (method, path)
            gone = served.call("DELETE", f"/v1/agents/default/memories/{ids['acme']}", key="acme")
            assert gone.status == 200, gone.body
            kept = served.call("GET", "/v1/agents/default/history?key=city", key="globex")
            assert "Porto" in str(kept.body)
    finally:
        service.jobs.wait(10)
        service.close()
    for tenant, city in (("acme", None), ("globex", "Porto")):  # what the record holds
        again = load_settings(
            tmp_path / f"again-{tenant}",
            environ={},
            embedder="hashing",
            database_url=postgres_url,
            tenant=tenant,
        )
        with build_memory(again, create=True) as memory:
            assert [h.value for h in memory.history("city")] == ([city] if city else [])
