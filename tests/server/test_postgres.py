"""The server over the PostgreSQL store of record (a real local PostgreSQL): the same
routes write and read through it, and a key of another tenant reaches nothing."""

from __future__ import annotations

from pathlib import Path

from tests.server.conftest import Running, Served

from kronika import build_memory, load_settings
from kronika.server.app import ServerConfig, create_app
from kronika.server.keys import KeyStore
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
