"""Writes are scoped by their caller: the user and channel a request names (the
``X-Kronika-*`` headers, ``--user``/``--channel``, a reader) decide the stored item's
channel and its default scope on every write path, so the storage policies ("no DMs
in long-term memory", "never store #hr-private") hold for REST, MCP, the CLI and
Python alike."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp", reason="the [mcp] extra (the official MCP SDK) is not installed")

import httpx2  # noqa: E402
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from tests.server.conftest import Running, Served  # noqa: E402

from kronika import Memory, build_memory, load_settings  # noqa: E402
from kronika.cli import main  # noqa: E402
from kronika.core.model import MemoryItem, Scope, Tier  # noqa: E402
from kronika.server.app import ServerConfig, create_app  # noqa: E402
from kronika.server.keys import KeyStore  # noqa: E402
from kronika.server.service import Service  # noqa: E402

POLICIES = """
[[policy]]
name = "no DMs in long-term memory"
dm = true
max_tier = "mid"

[[policy]]
name = "never store #hr-private"
channels = ["hr-private"]
store = false
"""


def _open(home: Path) -> Memory:
    home.mkdir(parents=True, exist_ok=True)
    (home / "kronika.toml").write_text(POLICIES, encoding="utf-8")
    return build_memory(load_settings(home, environ={}, embedder="hashing"), create=True)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    memory = _open(tmp_path / "ws")
    store = KeyStore(tmp_path / "keys.sqlite")
    keys = {"admin": store.create("default", role="admin").token}
    service = Service({"default": memory})
    try:
        with Running(create_app(service, store, ServerConfig(rate_per_second=0))) as url:
            yield Served(url, keys, {"default": memory}, service, store)
    finally:
        service.close()
        store.close()


def _stored(memory: Memory, text: str) -> MemoryItem | None:
    found = [i for i in memory.items(include_superseded=True, limit=1000) if text in i.content]
    assert len(found) <= 1
    return found[0] if found else None


def _headers(user: str, channel: str) -> dict[str, str]:
    return {"X-Kronika-User": user, "X-Kronika-Channel": channel}


@pytest.mark.parametrize("scope", [None, "personal"])
def test_rest_writes_take_the_channel_of_the_request(served: Served, scope: str | None) -> None:
    memory = served.memories["default"]
    extra = {"scope": scope} if scope else {}
    # said in a DM: the DM policy keeps it out of long-term memory
    answer = served.call(
        "POST",
        "/v1/agents/default/memories",
        {"content": f"my salary is 91k {scope}", "key": f"salary-{scope}", **extra},
        key="admin",
        headers=_headers("anna", "dm-anna"),
    )
    assert answer.status == 200 and "no DMs" in answer.body["policy"]
    item = _stored(memory, f"my salary is 91k {scope}")
    assert item is not None
    assert (item.user, item.channel, item.tier) == ("anna", "dm-anna", Tier.MID)
    assert item.scope is (Scope.PERSONAL if scope else Scope.CHANNEL)
    # said in #hr-private: never stored, by any write route
    for path, body in (
        ("/v1/agents/default/memories", {"content": f"hr fact {scope}", **extra}),
        ("/v1/agents/default/notes", {"text": f"hr note {scope}", **extra}),
        (
            f"/v1/agents/default/sessions/hr-{scope}/turns",
            {"speaker": "user", "content": f"hr turn {scope}", **extra},
        ),
    ):
        answer = served.call(
            "POST", path, body, key="admin", headers=_headers("anna", "hr-private")
        )
        assert answer.status in (200, 201), answer.body
        assert _stored(memory, f"hr {path.rsplit('/', 1)[-1][:4]}") is None
    for text in ("hr fact", "hr note", "hr turn"):
        assert _stored(memory, f"{text} {scope}") is None
    # said in #general: where it was said is kept
    served.call(
        "POST",
        "/v1/agents/default/notes",
        {"text": f"deploy on friday {scope}", **extra},
        key="admin",
        headers=_headers("anna", "general"),
    )
    item = _stored(memory, f"deploy on friday {scope}")
    assert item is not None and (item.user, item.channel) == ("anna", "general")
    assert item.scope is (Scope.PERSONAL if scope else Scope.CHANNEL)


def test_a_personal_fact_said_in_two_channels_is_one_fact(served: Served) -> None:
    """Where a personal fact was said does not change who reads it: a new value said
    in another channel supersedes the old one."""
    for channel, value in (("general", "tea"), ("random", "coffee")):
        served.call(
            "POST",
            "/v1/agents/default/memories",
            {"key": "drink", "value": value, "scope": "personal"},
            key="admin",
            headers=_headers("anna", channel),
        )
    facts = served.call(
        "GET", "/v1/agents/default/facts", key="admin", headers={"X-Kronika-User": "anna"}
    ).body["facts"]
    assert [f["content"] for f in facts if f.get("key") == "drink"] == ["drink: coffee"]


def test_mcp_remember_takes_the_channel_of_the_request(served: Served) -> None:
    headers = {"Authorization": f"Bearer {served.keys['admin']}", **_headers("bob", "dm-bob")}

    async def scenario() -> Any:
        async with (
            httpx2.AsyncClient(headers=headers, timeout=30) as client,
            streamable_http_client(served.url + "/mcp", http_client=client) as streams,
            ClientSession(streams[0], streams[1]) as session,
        ):
            await session.initialize()
            personal = await session.call_tool(
                "remember", {"content": "bob earns 80k", "scope": "personal"}
            )
            plain = await session.call_tool("remember", {"content": "bob moves to Porto"})
            return personal, plain

    personal, plain = anyio.run(scenario)
    assert not personal.is_error and not plain.is_error
    memory = served.memories["default"]
    for text, scope in (("bob earns 80k", Scope.PERSONAL), ("bob moves to Porto", Scope.CHANNEL)):
        item = _stored(memory, text)
        assert item is not None
        assert (item.user, item.channel, item.scope, item.tier) == (
            "bob",
            "dm-bob",
            scope,
            Tier.MID,
        )


def test_cli_and_python_writes_take_the_channel_they_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "ws"
    _open(home).close()
    monkeypatch.setenv("KRONIKA_HOME", str(home))
    monkeypatch.setenv("KRONIKA_EMBEDDER", "hashing")
    base = ["--user", "anna", "--scope", "personal"]
    assert main(["remember", "salary is 91k", *base, "--channel", "dm-x"]) == 0
    assert main(["note", "hr says hi", *base, "--channel", "hr-private"]) != 0
    assert main(["remember", "hr salary band", "--user", "anna", "--channel", "hr-private"]) != 0
    capsys.readouterr()
    memory = build_memory(load_settings(home, environ={}, embedder="hashing"))
    try:
        item = _stored(memory, "salary is 91k")
        assert item is not None
        assert (item.scope, item.channel, item.tier) == (Scope.PERSONAL, "dm-x", Tier.MID)
        assert _stored(memory, "hr says hi") is None and _stored(memory, "hr salary band") is None
        view = memory.as_reader(memory.reader(user="carl", channel="dm-carl"))
        receipt = view.remember("carl earns 70k", scope="personal")
        assert receipt.item is not None
        assert (receipt.item.channel, receipt.item.tier) == ("dm-carl", Tier.MID)
        assert view.note("hr gossip", scope="global", channel=None).outcome == "applied"
        refused = memory.as_reader(memory.reader(user="carl", channel="hr-private"))
        assert refused.remember("hr rumour", scope="global").outcome == "refused"
        assert _stored(memory, "hr rumour") is None
    finally:
        memory.close()
