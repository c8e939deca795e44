"""A real server on 127.0.0.1: uvicorn in a thread, two tenants' workspaces, keys.

Tenant ``acme`` has agents alice, bob (whose ``writers`` grant names alice) and carol
(autonomy 1: what carol writes waits for approval);
tenant ``globex`` has its own alice. Every key the tests use is made by the real
key store.
"""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the [server] extra (fastapi, uvicorn) is not installed")
pytest.importorskip("uvicorn", reason="the [server] extra (fastapi, uvicorn) is not installed")

import uvicorn  # noqa: E402

from kronika import Memory, build_memory, load_settings  # noqa: E402
from kronika.server.app import ServerConfig, create_app  # noqa: E402
from kronika.server.keys import KeyStore  # noqa: E402
from kronika.server.service import Service  # noqa: E402

ACME_CONFIG = """
[agents.bob]
writers = ["alice"]

[agents.carol]
autonomy = 1
"""


@dataclass
class Answer:
    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Served:
    url: str
    keys: dict[str, str]
    memories: dict[str, Memory]
    service: Service
    store: KeyStore

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        key: str | None = "acme-admin",
        headers: dict[str, str] | None = None,
        raw: bytes | None = None,
    ) -> Answer:
        sent = dict(headers or {})
        if key is not None:
            sent.setdefault("Authorization", f"Bearer {self.keys.get(key, key)}")
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        if data is not None:
            sent.setdefault("Content-Type", "application/json")
        request = urllib.request.Request(self.url + path, data=data, method=method, headers=sent)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                text = response.read()
                return Answer(response.status, json.loads(text or b"null"), dict(response.headers))
        except urllib.error.HTTPError as exc:
            with exc:
                text = exc.read()
            try:
                parsed = json.loads(text)
            except ValueError:
                parsed = text.decode("utf-8", "replace")
            return Answer(exc.code, parsed, dict(exc.headers))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Running:
    """uvicorn serving ``app`` on a free loopback port in a thread, until stopped."""

    def __init__(self, app: Any) -> None:
        self.port = free_port()
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.02)
        return f"http://127.0.0.1:{self.port}"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(20)


def build_tenants(root: Path) -> dict[str, Memory]:
    acme_home = root / "acme"
    acme_home.mkdir(parents=True)
    (acme_home / "kronika.toml").write_text(ACME_CONFIG, encoding="utf-8")
    acme = build_memory(
        load_settings(acme_home, environ={}, embedder="hashing", tenant="acme"), create=True
    )
    globex = build_memory(
        load_settings(root / "globex", environ={}, embedder="hashing", tenant="globex"),
        create=True,
    )
    for name in ("alice", "bob", "carol"):
        acme.create_agent(name)
    globex.create_agent("alice")
    return {"acme": acme, "globex": globex}


def make_keys(store: KeyStore) -> dict[str, str]:
    made = {
        "acme-admin": store.create("acme", role="admin"),
        "acme-alice": store.create("acme", role="agent", agent="alice"),
        "acme-carol": store.create("acme", role="agent", agent="carol"),
        "acme-reader": store.create("acme", role="reader"),
        "acme-reader-bob": store.create("acme", role="reader", agent="bob"),
        "acme-admin-bob": store.create("acme", role="admin", agent="bob"),
        "globex-admin": store.create("globex", role="admin"),
        "globex-alice": store.create("globex", role="agent", agent="alice"),
        "initech-admin": store.create("initech", role="admin"),
    }
    revoked = store.create("acme", role="admin")
    store.revoke(revoked.key.id)
    keys = {name: new.token for name, new in made.items()}
    keys["acme-revoked"] = revoked.token
    return keys


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    yield from serve_tenants(tmp_path, ServerConfig(rate_per_second=0))


def serve_tenants(tmp_path: Path, config: ServerConfig) -> Iterator[Served]:
    memories = build_tenants(tmp_path / "tenants")
    store = KeyStore(tmp_path / "keys.sqlite")
    keys = make_keys(store)
    service = Service(memories)
    try:
        with Running(create_app(service, store, config)) as url:
            yield Served(url, keys, memories, service, store)
    finally:
        service.jobs.wait(10)
        service.close()
