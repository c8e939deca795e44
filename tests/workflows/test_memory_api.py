"""Workflows drive a Memory through its public API only; the few things they need
besides the verbs (an agent, a reader and an audience settled as every verb settles
them, and forgetting items already found) are public methods that behave as documented."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from kronika import Memory, Scope
from kronika.core.model import ItemType, Reader, RecallFilter
from kronika.core.visibility import Audience
from kronika.errors import InvalidInput, PermissionDenied, UnknownAgent

WORKFLOWS = Path(__file__).resolve().parents[2] / "src" / "kronika" / "workflows"


def _private_reaches(path: Path) -> list[str]:
    """``x._name`` where ``x`` is not ``self``/``cls``: a reach into another object's
    insides."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
        ):
            found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_the_check_finds_a_private_reach(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("def f(memory, self):\n    return memory._agent(None), self._x\n")
    assert _private_reaches(sample) == ["sample.py:2: memory._agent"]


def test_workflows_reach_no_private_part_of_another_object() -> None:
    modules = sorted(WORKFLOWS.glob("*.py"))
    assert len(modules) > 10
    found = [reach for path in modules for reach in _private_reaches(path)]
    assert not found, "private parts used by workflows:\n" + "\n".join(found)


def test_resolve_agent_names_the_default_and_refuses_an_unknown_one(memory: Memory) -> None:
    assert memory.resolve_agent() == memory.settings.default_agent
    memory.create_agent("ops")
    assert memory.resolve_agent("ops") == "ops"
    with pytest.raises(UnknownAgent):
        memory.resolve_agent("nobody")


def test_resolve_reader_falls_back_to_the_view_s_reader(memory: Memory) -> None:
    anna = memory.reader(user="anna")
    assert memory.resolve_reader() is None
    assert memory.as_reader(anna).resolve_reader() == anna
    bob = memory.reader(user="bob")
    assert memory.as_reader(anna).resolve_reader(bob) == bob
    with pytest.raises(InvalidInput, match="reader must be a Reader"):
        memory.resolve_reader("anna")  # type: ignore[arg-type]


def test_write_audience_is_filled_from_the_reader_and_checks_its_tenant(memory: Memory) -> None:
    agent = memory.resolve_agent()
    anna = memory.reader(user="anna", channel="general")
    # said in a channel, a write is the channel's unless it names another scope
    assert memory.write_audience(agent, reader=anna) == Audience(Scope.CHANNEL, "anna", "general")
    assert memory.write_audience(agent, "personal", reader=anna) == Audience(
        Scope.PERSONAL, "anna", "general"
    )
    assert memory.write_audience(agent, user="bob", reader=anna).user == "bob"
    with pytest.raises(PermissionDenied, match="tenant"):
        memory.write_audience(agent, reader=Reader("elsewhere", "eve"))
    with pytest.raises(InvalidInput):
        memory.write_audience(agent, "channel")  # a channel's memory names its channel


def test_forget_items_forgets_what_was_found_and_audits_it(memory: Memory) -> None:
    agent = memory.resolve_agent()
    memory.observe("the build box is down", ttl_seconds=3600)
    memory.observe("deploys are paused", ttl_seconds=3600)
    found = memory.index.list_items(RecallFilter(agents=(agent,), types=(ItemType.SENSORY,)))
    assert len(found) == 2
    gone = [it for it in found if "build box" in it.content]

    receipt = memory.forget_items(agent, gone, section="sensory", source_agent="system")

    assert receipt.outcome == "applied"
    assert [it.id for it in receipt.items] == [gone[0].id]
    left = memory.items(types=("sensory",))
    assert [it.content for it in left] == ["deploys are paused"]
    hits = memory.recall("build box down", types=("sensory",)).hits
    assert all("build box" not in hit.item.content for hit in hits)
    assert any(e.item_id == gone[0].id for e in memory.audit() if e.action == "forget")
    with pytest.raises(UnknownAgent):
        memory.forget_items("nobody", gone, source_agent="system")
