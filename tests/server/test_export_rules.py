"""Storage policies, retention and teams through the server's export and import: a
tenant's own rules travel with its backup; rules of a kronika.toml that serves other
tenants too neither leave in a tenant's export nor change through its import."""

from __future__ import annotations

import tomllib
from pathlib import Path

from tests.server.conftest import Running, Served

from kronika import build_memory, load_settings
from kronika.server.app import ServerConfig, create_app
from kronika.server.keys import KeyStore
from kronika.server.service import Service

RULES = '\n[retention]\nshort = 30\n\n[teams]\ncore = ["anna", "bob"]\n'


def test_a_tenant_backup_carries_its_rules_to_another_workspace(served: Served) -> None:
    acme = served.memories["acme"].settings.home / "kronika.toml"
    acme.write_text(acme.read_text(encoding="utf-8") + RULES, encoding="utf-8")
    exported = served.call("GET", "/v1/export").body
    assert exported["version"] == 3
    assert exported["settings"]["teams"] == {"core": ["anna", "bob"]}
    assert "short = 30" in exported["settings"]["storage_policies"]
    done = served.call("POST", "/v1/import", {"document": exported}, key="globex-admin")
    assert done.status == 200, done.body
    assert "team 'core'" in done.body["rules"]
    globex = served.memories["globex"].settings.home / "kronika.toml"
    written = tomllib.loads(globex.read_text(encoding="utf-8"))
    assert written["teams"] == {"core": ["anna", "bob"]}
    assert written["retention"] == {"short": 30}


def test_a_shared_config_keeps_its_rules_to_itself(tmp_path: Path) -> None:
    home = tmp_path / "shared"
    home.mkdir()
    config = home / "kronika.toml"
    config.write_text('[agents.zed]\ntenant = "other"\n' + RULES, encoding="utf-8")
    settings = load_settings(home, environ={}, embedder="hashing", tenant="acme")
    memory = build_memory(settings, create=True)
    memory.create_agent("alice")
    store = KeyStore(tmp_path / "keys.sqlite")
    token = store.create("acme", role="admin").token
    service = Service({"acme": memory})
    served = Served("", {"admin": token}, {"acme": memory}, service, store)
    try:
        with Running(create_app(service, store, ServerConfig(rate_per_second=0))) as url:
            served.url = url
            exported = served.call("GET", "/v1/export", key="admin").body
            assert "settings" not in exported and "anna" not in str(exported)
            exported["settings"] = {"storage_policies": "[retention]\nlong = 1\n"}
            before = config.read_bytes()
            done = served.call(
                "POST", "/v1/import", {"document": exported, "replace": True}, key="admin"
            )
            assert done.status == 200, done.body
            assert done.body["rules"] == [] and "serves other tenants" in str(done.body["notes"])
            assert config.read_bytes() == before
    finally:
        service.jobs.wait(10)
        service.close()
