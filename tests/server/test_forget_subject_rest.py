"""``POST /v1/agents/{agent}/forget {"topic": …}`` forgets a subject said only in a
conversation, with a receipt naming the transcript; another tenant's memory keeps it."""

from __future__ import annotations

from tests.server.conftest import Served

from kronika.workflows.session import Session


def _said(served: Served, key: str) -> list[str]:
    hits = served.call("POST", "/v1/agents/alice/recall", {"query": "Nubank"}, key=key).body
    return [h["item"]["content"] for h in hits["hits"] if "nubank" in h["item"]["content"].lower()]


def test_a_company_said_in_a_turn_is_forgotten_by_topic_for_one_tenant(served: Served) -> None:
    for tenant in ("acme", "globex"):
        Session(served.memories[tenant], agent="alice").user("I'm now a data engineer at Nubank.")
    assert _said(served, "acme-alice") and _said(served, "globex-alice")
    done = served.call("POST", "/v1/agents/alice/forget", {"topic": "Nubank"}, key="acme-alice")
    assert done.status == 200, done.body
    assert any(p["path"].startswith("sessions/") for p in done.body["places"])
    assert _said(served, "acme-alice") == []
    assert _said(served, "globex-alice") == ["I'm now a data engineer at Nubank."]
    again = served.call("POST", "/v1/agents/alice/forget", {"topic": "Nubank"}, key="acme-alice")
    assert again.status == 404 and "Nubank" in str(again.body)


def test_the_mcp_forget_tool_takes_a_subject_and_its_opinions(served: Served) -> None:
    import pytest

    pytest.importorskip("mcp", reason="the [mcp] extra (the official MCP SDK) is not installed")
    from tests.server.test_mcp import _data, _run, http_session

    Session(served.memories["acme"], agent="alice").user("Dmytro Kovalenko lives on Lipowa.")
    Session(served.memories["globex"], agent="alice").user("Dmytro Kovalenko lives on Lipowa.")

    async def scenario() -> None:
        async with http_session(served, "acme-alice") as session:
            said = {"text": "Dmytro Kovalenko is unreliable", "kind": "O", "confidence": 0.7}
            _data(await session.call_tool("note", said))
            gone = _data(await session.call_tool("forget", {"topic": "Dmytro Kovalenko"}))
            assert gone["outcome"] == "applied"
            assert [f["content"] for f in gone["forgotten"]] == ["Dmytro Kovalenko is unreliable"]
            found = _data(await session.call_tool("recall", {"query": "Dmytro Kovalenko"}))
            assert all("Kovalenko" not in h["item"]["content"] for h in found["hits"])
        async with http_session(served, "globex-alice") as session:
            found = _data(await session.call_tool("recall", {"query": "Dmytro Kovalenko"}))
            assert any("Kovalenko" in h["item"]["content"] for h in found["hits"])

    _run(scenario)
