"""A secret in a field other than the content, over REST and through the MCP SDK's
client against a real server: screened like the content, refused when the field names
something (a session id in the URL would become a file name)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from tests.server.conftest import Served
from tests.sessions.test_secret_screening import assert_nowhere

KEY = "sk-proj-Q3x9vTz81LmNpR4sWuY7aBcD0eFgHiJk"


def names_in(home: Path) -> str:
    return "\n".join(str(p) for p in home.rglob("*"))


def test_rest_screens_tags_speaker_and_refuses_a_secret_session_id(served: Served) -> None:
    home = served.memories["acme"].settings.home
    said = served.call(
        "POST", "/v1/agents/alice/memories", {"content": "likes tea", "tags": [KEY, "drinks"]}
    )
    assert said.status in (200, 201), said.body
    assert said.body["item"]["tags"] == ["drinks"]
    noted = served.call("POST", "/v1/agents/alice/notes", {"text": "ok", "tags": [KEY]})
    assert noted.status in (200, 201), noted.body
    turn = {"speaker": f"ops {KEY}", "content": "hello"}
    spoken = served.call("POST", "/v1/agents/alice/sessions/s-1/turns", turn)
    assert spoken.status == 201, spoken.body
    refused = served.call(
        "POST", f"/v1/agents/alice/sessions/{KEY}/turns", {"speaker": "user", "content": "hi"}
    )
    assert refused.status == 422 and "openai-key" in str(refused.body)
    assert KEY not in str(refused.body)
    named = {"speaker": "user", "content": "hi", "turn_id": KEY}
    assert served.call("POST", "/v1/agents/alice/sessions/s-2/turns", named).status == 422
    channel = {"content": "hi", "scope": "channel", "channel": KEY}
    assert served.call("POST", "/v1/agents/alice/memories", channel).status == 422
    served.memories["acme"].sync()
    assert KEY not in names_in(home)
    assert_nowhere(home, KEY)


def test_mcp_screens_a_secret_in_a_channel_and_an_entity(served: Served) -> None:
    pytest.importorskip("mcp", reason="the [mcp] extra is not installed")
    from tests.server.test_mcp import _data, http_session

    async def scenario() -> None:
        async with http_session(served, "acme-alice") as session:
            refused = await session.call_tool(
                "remember", {"content": "likes tea", "scope": "channel", "channel": KEY}
            )
            assert refused.is_error and "InvalidInput (422)" in refused.content[0].text
            assert KEY not in refused.content[0].text
            kept = _data(await session.call_tool("note", {"text": f"@{KEY} is ops", "kind": "W"}))
            assert KEY not in str(kept)

    anyio.run(scenario)
    home = served.memories["acme"].settings.home
    served.memories["acme"].sync()
    assert_nowhere(home, KEY)
