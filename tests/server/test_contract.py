"""The API keeps the contract its OpenAPI document states: schemathesis, with every
check it has (status codes, response schemas, content types, Allow headers, valid
data accepted and invalid data refused, auth…), run as its own command line against
a real server, once with each role's key. It must find nothing.

The caller names a user who is in a team and a channel (``X-Kronika-User``,
``X-Kronika-Channel``), so a body asking for a team or channel scope is complete.
Three operations keep every check but "valid data is accepted", because what they take
is more than a JSON schema can say: the storage policies are TOML checked as
``kronika.toml`` is, an import document's audit may name only the document's own
agents, and only an interrupted job can be resumed (schemathesis reuses the ids of
the jobs it saw answered, most of them done; each refusal is a 422 naming the problem,
tested in test_routes.py and test_workers.py).
Saving a turn, or a batch of turns, is tried by the fuzzing phase only: schemathesis
4.32's coverage phase pairs a near-limit session id with a body it generated as invalid
(``0``) and still expects the request to be accepted.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("schemathesis", reason="schemathesis (the dev extra) is missing")

from tests.server.conftest import Running  # noqa: E402

from kronika import build_memory, load_settings  # noqa: E402
from kronika.server.app import ServerConfig, create_app  # noqa: E402
from kronika.server.keys import KeyStore  # noqa: E402
from kronika.server.service import Service  # noqa: E402

CONFIG = """
[teams]
core = ["anna"]
"""
CHECKED_APART = """
checks.enabled = true

[[operations]]
include-path = "/v1/agents/{agent}/policies"
include-method = "PUT"
checks.positive_data_acceptance.enabled = false

[[operations]]
include-path = "/v1/import"
checks.positive_data_acceptance.enabled = false

[[operations]]
include-path = "/v1/jobs/{job_id}/resume"
checks.positive_data_acceptance.enabled = false

[[operations]]
include-path = "/v1/agents/{agent}/sessions/{session_id}/turns"
phases.coverage.enabled = false

[[operations]]
include-path = "/v1/agents/{agent}/sessions/{session_id}/turns/batch"
phases.coverage.enabled = false
"""
PINNED = """
[[operations]]
include-path-regex = "\\\\{agent\\\\}"
parameters = { agent = "alice" }
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    root = tmp_path_factory.mktemp("contract")
    home = root / "home"
    home.mkdir()
    (home / "kronika.toml").write_text(CONFIG, encoding="utf-8")
    memory = build_memory(load_settings(home, environ={}, embedder="hashing"), create=True)
    memory.create_agent("alice")
    memory.remember("I live in Bristol", agent="alice")
    memory.save_turn("trip", "user", "we fly to Lisbon on Friday", agent="alice")
    store = KeyStore(root / "keys.sqlite")
    keys = {
        "admin": store.create("default", role="admin").token,
        "agent": store.create("default", role="agent", agent="alice").token,
        "reader": store.create("default", role="reader").token,
    }
    service = Service({"default": memory})
    try:
        with Running(create_app(service, store, ServerConfig(rate_per_second=0))) as url:
            yield url, keys
    finally:
        service.jobs.wait(10)
        service.close()


def _schemathesis() -> list[str]:
    found = shutil.which("schemathesis", path=str(Path(sys.executable).parent))
    return [found] if found else [sys.executable, "-m", "schemathesis.cli"]


@pytest.mark.parametrize(
    ("role", "examples", "pinned"),
    [("admin", 10, False), ("agent", 5, True), ("reader", 5, True)],
)
def test_schemathesis_finds_no_mismatch(
    server: tuple[str, dict[str, str]], tmp_path: Path, role: str, examples: int, pinned: bool
) -> None:
    url, keys = server
    config = tmp_path / "schemathesis.toml"
    config.write_text(CHECKED_APART + (PINNED if pinned else ""), encoding="utf-8")
    command = [
        *_schemathesis(),
        "--config-file",
        str(config),
        "run",
        f"{url}/openapi.json",
        "--phases",
        "examples,coverage,fuzzing",
        "--max-examples",
        str(examples),
        "--workers",
        "1",
        "--seed",
        "20261128",
        "-H",
        f"Authorization: Bearer {keys[role]}",
        "-H",
        "X-Kronika-User: anna",
        "-H",
        "X-Kronika-Channel: general",
    ]
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=900,
        cwd=tmp_path,
        env={**os.environ, "NO_COLOR": "1", "SCHEMATHESIS_HOOKS": ""},
        check=False,
    )
    (tmp_path / "report.txt").write_text(done.stdout + done.stderr, encoding="utf-8")
    report = done.stdout[-6000:] + done.stderr[-2000:]
    assert done.returncode == 0, report
    assert "No issues found" in done.stdout or " passed" in done.stdout, report
