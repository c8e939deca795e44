"""The memory operations as agent tools with JSON schemas (SPEC C2)."""

from __future__ import annotations

import json

from kronika import Memory, build_memory
from kronika.settings import AgentPolicy, Settings
from kronika.testing import FrozenClock
from kronika.workflows.tools import TOOLS, call_tool


def test_schemas_are_ready_for_function_calling() -> None:
    names = [tool["function"]["name"] for tool in TOOLS]
    assert names == ["remember", "forget", "recall", "memory_update", "retain"]
    for tool in TOOLS:
        assert tool["type"] == "function"
        params = tool["function"]["parameters"]
        assert params["type"] == "object" and params["additionalProperties"] is False
        json.dumps(tool)  # serialisable as sent to a server


def test_remember_update_recall_and_forget(memory: Memory) -> None:
    stored = call_tool(memory, "default", "remember", '{"key": "city", "value": "Warsaw"}')
    assert stored["ok"] and stored["outcome"] == "applied"
    updated = call_tool(
        memory, "default", "memory_update", {"action": "update", "key": "city", "value": "Kraków"}
    )
    assert updated["stored"] == "city: Kraków"
    assert [f.value for f in memory.history("city")] == ["Warsaw", "Kraków"]
    found = call_tool(memory, "default", "recall", {"query": "Kraków", "k": 3})
    assert found["ok"] and "Kraków" in found["results"][0]["content"]
    assert found["results"][0]["citation"].startswith("brain.md#L")
    gone = call_tool(memory, "default", "forget", {"key": "city"})
    assert gone["ok"] and "city: Kraków" in gone["forgotten"]
    assert memory.facts() == []


def test_retain_writes_a_typed_note_as_the_agent(memory: Memory) -> None:
    said = {"text": "@Piotr prefers tea to coffee", "kind": "O", "confidence": 0.8}
    noted = call_tool(memory, "default", "retain", said)
    assert noted["ok"] and noted["outcome"] == "applied"
    item = memory.get(noted["id"])
    assert (item.kind, item.confidence, item.entities) == ("O", 0.8, ("Piotr",))
    did = call_tool(memory, "default", "retain", {"text": "I fixed the build", "kind": "B"})
    assert memory.get(did["id"]).kind == "B"
    wrong = call_tool(memory, "default", "retain", {"text": "x", "kind": "W", "confidence": 0.3})
    assert not wrong["ok"] and "opinion" in wrong["error"]
    unknown = call_tool(memory, "default", "retain", {"text": "x", "kind": "Q"})
    assert not unknown["ok"]


def test_memory_update_add_keeps_several_values(memory: Memory) -> None:
    for pet in ("dog Reks", "cat Mruczek"):
        call_tool(memory, "default", "memory_update", {"action": "add", "key": "pet", "value": pet})
    assert sorted(f.value or "" for f in memory.facts()) == ["cat Mruczek", "dog Reks"]


def test_bad_calls_come_back_as_errors_not_exceptions(memory: Memory) -> None:
    assert "unknown tool" in call_tool(memory, "default", "drop_table", {})["error"]
    assert "not valid JSON" in call_tool(memory, "default", "remember", "{oops")["error"]
    missing = call_tool(memory, "default", "remember", {"key": "x"})
    assert not missing["ok"] and "value" in missing["error"]
    extra = call_tool(memory, "default", "recall", {"query": "x", "sql": "1"})
    assert not extra["ok"]
    both = call_tool(memory, "default", "forget", {"key": "a", "topic": "b"})
    assert "exactly one" in both["error"]
    nothing = call_tool(memory, "default", "forget", {"key": "never-stored"})
    assert not nothing["ok"] and "never-stored" in nothing["error"]


def test_tools_act_as_the_agent_so_autonomy_applies(settings: Settings, clock: FrozenClock) -> None:
    policies = {"default": AgentPolicy(autonomy=1), "ro": AgentPolicy(autonomy=0)}
    with build_memory(settings.with_overrides(agents=policies), create=True, clock=clock) as memory:
        proposed = call_tool(memory, "default", "remember", {"value": "likes jazz"})
        assert proposed["ok"] and proposed["outcome"] == "proposed"
        assert memory.facts() == []
        assert [p.id for p in memory.proposals()] == [proposed["proposal"]]
        memory.approve(proposed["proposal"])
        assert [f.content for f in memory.facts()] == ["likes jazz"]
        memory.create_agent("ro")
        refused = call_tool(memory, "ro", "remember", {"value": "likes jazz"})
        assert not refused["ok"] and "read-only" in refused["error"]
