"""The MCP tools and resources through the SDK's own client: over stdio (`kronika mcp`
in a subprocess) and over streamable HTTP (`/mcp` of the server, with API keys)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp", reason="the [mcp] extra (the official MCP SDK) is not installed")

import httpx2  # noqa: E402
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from tests.server.conftest import Served  # noqa: E402

from kronika.providers.installed import installed_version  # noqa: E402

TOOLS = {"remember", "note", "forget", "recall", "record_outcome", "what_do_you_know"}
DEPRECATED = {"retain": "note", "memory_update": "remember"}
"""The tools' earlier names, still answering for one release -> the tool to use."""
CROSSING: dict[str, dict[str, Any]] = {
    "remember": {"content": "across"},
    "note": {"text": "across", "kind": "W"},
    "retain": {"text": "across", "kind": "W"},
    "memory_update": {"key": "k", "value": "v"},
    "forget": {"topic": "figs"},
    "recall": {"query": "figs"},
    "what_do_you_know": {},
    "record_outcome": {"task": "t", "action": "a", "ok": False},
}


@asynccontextmanager
async def http_session(served: Served, key: str) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {served.keys[key]}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as client,
        streamable_http_client(served.url + "/mcp", http_client=client) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await session.initialize()
        yield session


def _run(test: Callable[[], Awaitable[None]]) -> None:
    anyio.run(test)


def _data(result: Any) -> Any:
    assert not result.is_error, result.content[0].text
    return result.structured_content


def test_stdio_tools_and_resources(tmp_path: Path) -> None:
    home = tmp_path / "ws"
    env = {**os.environ, "KRONIKA_EMBEDDER": "hashing"}
    subprocess.run(
        [sys.executable, "-m", "kronika", "--home", str(home), "init"], check=True, env=env
    )
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "kronika", "--home", str(home), "mcp"], env=env
    )

    async def scenario() -> None:
        async with (
            stdio_client(params) as streams,
            ClientSession(streams[0], streams[1]) as session,
        ):
            started = await session.initialize()
            assert started.server_info.name == "kronika"
            assert started.server_info.version == installed_version("kronika") != ""
            tools = {t.name for t in (await session.list_tools()).tools}
            assert tools == TOOLS | set(DEPRECATED)
            made = _data(await session.call_tool("remember", {"content": "prefers green tea"}))
            assert made["outcome"] == "applied"
            _data(await session.call_tool("remember", {"content": "Gdańsk", "key": "city"}))
            _data(await session.call_tool("remember", {"content": "Lublin", "key": "city"}))
            found = _data(await session.call_tool("recall", {"query": "city"}))
            assert found["hits"][0]["item"]["value"] == "Lublin"
            said = {"text": "@Piotr prefers tea", "kind": "O", "confidence": 0.8}
            opinion = _data(await session.call_tool("note", said))
            assert (opinion["item"]["kind"], opinion["item"]["confidence"]) == ("O", 0.8)
            known = await session.call_tool("what_do_you_know", {})
            assert "city: Lublin" in known.content[0].text
            about = await session.call_tool("what_do_you_know", {"topic": "tea"})
            assert "prefers green tea" in about.content[0].text
            gone = _data(await session.call_tool("forget", {"id": made["item"]["id"]}))
            assert gone["outcome"] == "applied"
            after = _data(await session.call_tool("recall", {"query": "green tea"}))
            assert all("green tea" not in h["item"]["content"] for h in after["hits"])
            bad = await session.call_tool("forget", {})
            assert bad.is_error and "InvalidInput (422)" in bad.content[0].text
            failed = {"task": "build the docs", "action": "mkdocs build", "exit_code": 1}
            failed["stderr"] = "Error: Config file 'mkdocs.yml' does not exist."
            report = _data(await session.call_tool("record_outcome", failed))
            assert report["is_ok"] is False
            [lesson] = [x for x in report["learned"] if x["kind"] == "reflection"]
            assert "mkdocs.yml" in lesson["text"]
            hint = _data(await session.call_tool("recall", {"query": "build the docs"}))
            assert lesson["id"] in [h["item"]["id"] for h in hint["hits"]]
            unsaid = await session.call_tool("record_outcome", {"task": "t", "action": "a"})
            assert unsaid.is_error and "InvalidInput (422)" in unsaid.content[0].text
            templates = await session.list_resource_templates()
            uris = {t.uri_template for t in templates.resource_templates}
            assert uris == {"kronika://agents/{agent}/brain", "kronika://agents/{agent}/wake"}
            brain = await session.read_resource("kronika://agents/default/brain")
            assert "city: Lublin" in brain.contents[0].text
            wake = await session.read_resource("kronika://agents/default/wake")
            assert "<memory>" in wake.contents[0].text

    _run(scenario)
    audit = (home / "audit.jsonl").read_text(encoding="utf-8")
    assert '"source_agent": "default"' in audit  # stdio writes as its agent


def test_streamable_http_tools_with_keys(served: Served) -> None:
    async def scenario() -> None:
        async with http_session(served, "acme-alice") as session:
            listed = {t.name for t in (await session.list_tools()).tools}
            assert listed == TOOLS | set(DEPRECATED)
            made = _data(await session.call_tool("remember", {"content": "alice likes figs"}))
            assert made["item"]["agent"] == "alice"  # the key's agent, by default
            found = _data(await session.call_tool("recall", {"query": "figs"}))
            assert [h["item"]["content"] for h in found["hits"]] == ["alice likes figs"]
            brain = await session.read_resource("kronika://agents/alice/brain")
            assert "alice likes figs" in brain.contents[0].text
            # bob granted alice writing; carol did not: she does not exist for alice
            _data(await session.call_tool("remember", {"content": "bob: ship it", "agent": "bob"}))
            refused = await session.call_tool("remember", {"content": "x", "agent": "carol"})
            assert refused.is_error and "UnknownAgent (404)" in refused.content[0].text
            peek = await session.call_tool("recall", {"query": "ship", "agent": "bob"})
            assert peek.is_error and "UnknownAgent (404)" in peek.content[0].text
            for tool, args in CROSSING.items():  # every tool, at an ungranted agent
                crossed = await session.call_tool(tool, {**args, "agent": "carol"})
                assert crossed.is_error and "UnknownAgent (404)" in crossed.content[0].text
        async with http_session(served, "globex-alice") as session:
            found = _data(await session.call_tool("recall", {"query": "figs"}))
            assert found["hits"] == []  # another tenant's alice
            with pytest.raises(Exception, match="UnknownAgent"):
                await session.read_resource("kronika://agents/bob/brain")
            for tool, args in CROSSING.items():  # every tool, at another tenant's agent
                crossed = await session.call_tool(tool, {**args, "agent": "bob"})
                assert crossed.is_error and "UnknownAgent (404)" in crossed.content[0].text
        async with http_session(served, "acme-reader") as session:
            denied = await session.call_tool("forget", {"topic": "figs", "agent": "alice"})
            assert denied.is_error and "may only read" in denied.content[0].text
            known = await session.call_tool("what_do_you_know", {"agent": "alice"})
            assert "alice likes figs" in known.content[0].text

    _run(scenario)
    entry = served.memories["acme"].audit(agent="bob", limit=1)[-1]
    assert entry.source_agent == "alice"


def test_earlier_tool_names_still_answer_and_name_their_successor(served: Served) -> None:
    """`retain` and `memory_update` do what `note` and `remember` with a key do, for one
    release; their descriptions say which tool to use instead, the new ones' do not."""

    async def scenario() -> None:
        async with http_session(served, "acme-alice") as session:
            described = {t.name: t.description or "" for t in (await session.list_tools()).tools}
            for old, new in DEPRECATED.items():
                assert described[old].startswith(f"Deprecated, use `{new}`"), described[old]
            assert not any("eprecated" in described[name] for name in TOOLS)
            said = {"text": "@Ola prefers rye bread", "kind": "O", "confidence": 0.7}
            old = _data(await session.call_tool("retain", said))
            new = _data(await session.call_tool("note", {**said, "text": "@Ola bakes on Sunday"}))
            assert set(old) == set(new) and set(old["item"]) == set(new["item"])
            for made in (old, new):
                assert (made["item"]["kind"], made["item"]["confidence"]) == ("O", 0.7)
            before = _data(
                await session.call_tool("memory_update", {"key": "city", "value": "Łódź"})
            )
            after = _data(await session.call_tool("remember", {"content": "Opole", "key": "city"}))
            assert set(before) == set(after)
            assert before["item"]["value"] == "Łódź" and after["change"] == "SupersedeFact"
            again = _data(
                await session.call_tool("memory_update", {"key": "city", "value": "Kielce"})
            )
            assert again["change"] == after["change"] == "SupersedeFact"
            found = _data(await session.call_tool("recall", {"query": "city"}))
            assert found["hits"][0]["item"]["value"] == "Kielce"

    _run(scenario)
    history = served.memories["acme"].history("city", agent="alice")
    assert [f.value for f in history] == ["Łódź", "Opole", "Kielce"]


@pytest.mark.parametrize("key", [None, "kro_nope", "acme-revoked"])
def test_mcp_over_http_needs_a_valid_key(served: Served, key: str | None) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if key is not None:
        headers["Authorization"] = f"Bearer {served.keys.get(key, key)}"
    request = urllib.request.Request(
        served.url + "/mcp", data=json.dumps(body).encode(), headers=headers, method="POST"
    )
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=10)
    with caught.value as refused:
        assert refused.code == 401
        assert json.loads(refused.read())["error"] == "Unauthenticated"
