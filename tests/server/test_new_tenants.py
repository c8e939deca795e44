"""A team server serves a tenant whose first API key is made while it runs."""

from __future__ import annotations

from pathlib import Path

from tests.server.conftest import Running, Served

from kronika import build_memory, load_settings
from kronika.server.app import ServerConfig, create_app
from kronika.server.keys import KeyStore, keys_path
from kronika.server.run import build_service


def test_a_tenant_keyed_after_the_start_is_served_without_a_restart(
    tmp_path: Path, postgres_url: str
) -> None:
    settings = load_settings(
        tmp_path / "team", environ={}, embedder="hashing", database_url=postgres_url
    )
    build_memory(settings, create=True).close()
    store = KeyStore(keys_path(settings.home))
    keys = {"acme": store.create("acme", role="agent", agent="default").token}
    service = build_service(settings)  # what `kronika serve` builds
    try:
        assert "globex" not in set(dict.keys(service.memories))
        with Running(create_app(service, store, ServerConfig(rate_per_second=0))) as url:
            served = Served(url, keys, service.memories, service, store)
            # made while the server runs, as `kronika keys create --tenant globex` does
            keys["globex"] = KeyStore(keys_path(settings.home)).create("globex").token
            revoked = KeyStore(keys_path(settings.home)).create("initech")
            KeyStore(keys_path(settings.home)).revoke(revoked.key.id)
            keys["initech"] = revoked.token
            for tenant, city in (("globex", "Porto"), ("acme", "Lviv")):
                made = served.call(
                    "POST", "/v1/agents/default/memories", {"key": "city", "value": city},
                    key=tenant,
                )  # fmt: skip
                assert made.status == 200 and made.body["outcome"] == "applied", made.body
            for tenant, mine, theirs in (("globex", "Porto", "Lviv"), ("acme", "Lviv", "Porto")):
                found = served.call(
                    "POST", "/v1/agents/default/recall", {"query": "city Porto Lviv"}, key=tenant
                )
                texts = " ".join(h["item"]["content"] for h in found.body["hits"])
                assert mine in texts and theirs not in texts, (tenant, texts)
            assert served.call("GET", "/v1/agents", key="initech").status == 401
            assert "initech" not in set(dict.keys(service.memories))
    finally:
        service.jobs.wait(10)
        service.close()
