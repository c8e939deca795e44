"""API keys (`kronika keys`), the rate limit, and `kronika serve` as a real process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.server.conftest import Served, free_port, serve_tenants

from kronika.errors import InvalidInput, NotFound
from kronika.server.app import ServerConfig
from kronika.server.keys import KeyStore, Role


def kronika(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KRONIKA_EMBEDDER": "hashing"}
    return subprocess.run(
        [sys.executable, "-m", "kronika", "--home", str(home), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def test_a_key_is_stored_hashed_and_verified(tmp_path: Path) -> None:
    store = KeyStore(tmp_path / "keys.sqlite")
    made = store.create("acme", role="agent", agent="alice", label="ci bot")
    secret = made.token.split("_", 2)[2]
    assert secret.encode() not in (tmp_path / "keys.sqlite").read_bytes()
    assert (tmp_path / "keys.sqlite").stat().st_mode & 0o077 == 0
    found = store.verify(made.token)
    assert found is not None and (found.tenant, found.role, found.agent) == (
        "acme",
        Role.AGENT,
        "alice",
    )
    assert store.verify(made.token[:-1] + ("A" if made.token[-1] != "A" else "B")) is None
    assert store.verify("") is None and store.verify("kro_zz_zz") is None
    store.revoke(made.key.id)
    assert store.verify(made.token) is None
    with pytest.raises(NotFound):
        store.revoke("000000000000")
    with pytest.raises(InvalidInput, match="must name its agent"):
        store.create("acme", role="agent")
    with pytest.raises(InvalidInput, match="unknown role"):
        store.create("acme", role="owner")
    with pytest.raises(InvalidInput, match="tenant"):
        store.create("../acme")


def test_keys_cli_create_list_revoke(tmp_path: Path) -> None:
    home = tmp_path / "ws"
    assert kronika(home, "init").returncode == 0
    made = kronika(home, "keys", "create", "--tenant", "default", "--role", "reader")
    assert made.returncode == 0, made.stderr
    token = made.stdout.strip()
    assert token.startswith("kro_") and "shown once" in made.stderr
    listed = json.loads(kronika(home, "keys", "list", "--json").stdout)["keys"]
    assert [(k["tenant"], k["role"], k["revoked_at"]) for k in listed] == [
        ("default", "reader", None)
    ]
    assert token not in kronika(home, "keys", "list").stdout
    revoked = kronika(home, "keys", "revoke", listed[0]["id"], "--json")
    assert json.loads(revoked.stdout)["revoked_at"]
    missing = kronika(home, "keys", "create", "--role", "agent", "--tenant", "default")
    assert missing.returncode == 2 and "must name its agent" in missing.stderr
    assert kronika(home, "keys", "create").returncode == 2  # no --tenant
    # a key no server of this workspace could use is refused, with what to do
    stranger = kronika(home, "keys", "create", "--tenant", "globex")
    assert stranger.returncode == 2 and "serves tenant(s) default, not 'globex'" in stranger.stderr
    ghost = kronika(home, "keys", "create", "--tenant", "default", "--agent", "ghost")
    assert ghost.returncode == 2 and "no agent 'ghost'" in ghost.stderr
    with (home / "kronika.toml").open("a", encoding="utf-8") as config:
        config.write('\n[agents.default]\ntenant = "acme"\n')
    moved = kronika(home, "keys", "create", "--tenant", "default", "--agent", "default")
    assert moved.returncode == 2 and "belongs to tenant 'acme'" in moved.stderr
    assert kronika(home, "keys", "create", "--tenant", "acme", "--agent", "default").returncode == 0
    assert len(json.loads(kronika(home, "keys", "list", "--json").stdout)["keys"]) == 2
    assert kronika(home, "keys", "revoke", "nope").returncode == 5


@pytest.fixture
def limited(tmp_path: Path) -> Iterator[Served]:
    yield from serve_tenants(tmp_path, ServerConfig(rate_per_second=1, burst=3))


def test_rate_limit_is_per_key_and_429(limited: Served) -> None:
    answers = [limited.call("GET", "/v1/me").status for _ in range(6)]
    assert answers[:3] == [200, 200, 200] and 429 in answers[3:]
    assert limited.call("GET", "/v1/me", key="acme-reader").status == 200  # its own bucket
    assert limited.call("GET", "/healthz", key=None).status == 200


def test_cors_is_off_unless_configured(served: Served, tmp_path: Path) -> None:
    origin = {"Origin": "http://evil.example", "Access-Control-Request-Method": "GET"}
    answer = served.call("GET", "/healthz", key=None, headers=origin)
    assert "access-control-allow-origin" not in {k.lower() for k in answer.headers}
    allowed = serve_tenants(
        tmp_path / "cors", ServerConfig(rate_per_second=0, cors_origins=("http://app.example",))
    )
    other = next(allowed)
    try:
        ok = other.call("GET", "/healthz", key=None, headers={"Origin": "http://app.example"})
        assert ok.headers.get("access-control-allow-origin") == "http://app.example"
        bad = other.call("GET", "/healthz", key=None, headers={"Origin": "http://evil.example"})
        assert "access-control-allow-origin" not in {k.lower() for k in bad.headers}
    finally:
        allowed.close()


def test_kronika_serve_runs_and_answers(tmp_path: Path) -> None:
    home = tmp_path / "ws"
    assert kronika(home, "init").returncode == 0
    token = kronika(home, "keys", "create", "--tenant", "default").stdout.strip()
    port = free_port()
    env = {**os.environ, "KRONIKA_EMBEDDER": "hashing"}
    process = subprocess.Popen(
        [sys.executable, "-m", "kronika", "--home", str(home), "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(base + "/healthz", timeout=2) as answer:
                    assert json.loads(answer.read()) == {"status": "ok"}
                    break
            except (urllib.error.URLError, ConnectionError):
                assert time.monotonic() < deadline and process.poll() is None
                time.sleep(0.2)
        request = urllib.request.Request(
            base + "/v1/agents/default/memories",
            data=json.dumps({"content": "served for real"}).encode(),
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            assert json.loads(answer.read())["outcome"] == "applied"
        # a secret in a query string is refused, and never reaches the access log
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(base + "/v1/me?api_key=kro_000000000000_leakedsecret")
        assert refused.value.code == 401
        refused.value.close()
        # every file of the job records is the owner's alone, -wal and -shm too
        for name in ("server-jobs.sqlite", "server-jobs.sqlite-wal", "server-jobs.sqlite-shm"):
            assert (home / name).stat().st_mode & 0o777 == 0o600, name
        # revoked from another process: refused at the next request
        kronika(home, "keys", "revoke", token)
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(request, timeout=30)
        assert caught.value.code == 401
        caught.value.close()  # an HTTPError holds the response (and its socket) open
    finally:
        process.send_signal(signal.SIGINT)
        logged, _ = process.communicate(timeout=30)  # waits, and closes the output pipe
    assert '"GET /v1/me HTTP/1.1" 401' in logged and "leakedsecret" not in logged
    assert "served for real" in (home / "agents" / "default" / "brain.md").read_text()
    bad = kronika(home, "serve", "--port", "0")
    assert bad.returncode == 2 and "--port" in bad.stderr
