"""``MarkdownWorkspace`` is one small object over named parts (``workspace.agent_files``,
``workspace.fact_reads``, ``workspace.fact_writer``, ``workspace.fact_files``,
``workspace.note_files``, ``workspace.session_files``, ``workspace.document_files``),
not a stack of mixins; every flat name (``workspace.add_fact``) is a part's verb, and
the parts share one state, so what one writes the others read.

:func:`_typed` is what mypy checks (``mypy tests/stores/test_workspace_parts.py``).
"""

from __future__ import annotations

import inspect
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, get_type_hints

import pytest

from kronika.core.alias import Alias
from kronika.core.model import ItemType, Layer, MemoryItem, Provenance, Tier
from kronika.stores.markdown import MarkdownWorkspace
from kronika.stores.markdown.state import WorkspaceState

T0 = datetime(2025, 11, 1, 12, 0, tzinfo=UTC)
PARTS = [
    "state",
    "agent_files",
    "fact_reads",
    "fact_writer",
    "fact_files",
    "note_files",
    "session_files",
    "document_files",
]
# every public verb the workspace had when it was a stack of mixins
VERBS = [
    "active_context_item",
    "add_fact",
    "add_proposal",
    "agent_dir",
    "agents",
    "append_note",
    "append_turn",
    "appended_facts",
    "archived_facts",
    "archived_facts_like",
    "brain_facts",
    "changed_sources",
    "cleanup_temp",
    "close",
    "create_agent",
    "cut_torn_tail",
    "exists",
    "fact_file_hash",
    "fact_history",
    "fact_ids",
    "forget_changes",
    "has_agent",
    "held_facts",
    "holding_brain",
    "initialize",
    "keep_lost_facts",
    "list_sources",
    "move_to_archive",
    "parse_source",
    "put_back_facts",
    "read_active_context",
    "read_identity",
    "read_lessons",
    "read_proposals",
    "remove_item",
    "remove_proposal",
    "require_agent",
    "rewrite_facts",
    "rewritten_facts",
    "spliced_facts",
    "session_headers",
    "sources_listed",
    "turn_item_ids",
    "set_session_fields",
    "settle_moves",
    "source_file",
    "stamp_hand_facts",
    "steady_facts",
    "summary_headers",
    "supersede_fact",
    "tenant_of",
    "update_fact",
    "update_note",
    "write_active_context",
    "write_facts",
    "write_lessons",
    "write_session",
    "write_summary",
]


def _fact(id_: str, content: str) -> MemoryItem:
    return MemoryItem(
        id=id_,
        agent="jaskier",
        content=content,
        type=ItemType.FACT,
        layer=Layer.LONG_TERM,
        tier=Tier.LONG,
        created_at=T0,
        updated_at=T0,
        provenance=Provenance(path="brain.md"),
    )


@pytest.fixture
def workspace(tmp_path: Path) -> MarkdownWorkspace:
    ws = MarkdownWorkspace(tmp_path, tenants={"jaskier": "oxenfurt"})
    ws.initialize()
    ws.create_agent("jaskier")
    return ws


def test_the_workspace_is_one_object_not_a_mixin_stack() -> None:
    assert MarkdownWorkspace.__mro__ == (MarkdownWorkspace, object)
    hints = get_type_hints(MarkdownWorkspace)
    for name in PARTS:
        part = hints[name]
        assert part.__mro__ == (part, object), f"workspace.{name} inherits: {part.__mro__}"


def test_every_flat_name_is_a_parts_verb() -> None:
    aliases = {name: a for name, a in vars(MarkdownWorkspace).items() if isinstance(a, Alias)}
    assert set(aliases) == set(VERBS)
    hints = get_type_hints(MarkdownWorkspace)
    for name, alias in aliases.items():
        assert alias.part in PARTS, name
        assert getattr(MarkdownWorkspace, name) is getattr(hints[alias.part], alias.verb), name
    # the flat name keeps the part's signature (no ``*args`` pass-through)
    signature = inspect.signature(MarkdownWorkspace.supersede_fact)
    assert list(signature.parameters) == ["self", "agent", "old_id", "new"]


def test_the_parts_share_one_state(workspace: MarkdownWorkspace) -> None:
    assert all(
        getattr(workspace, name).state is workspace.state
        for name in ("agent_files", "fact_reads", "fact_writer", "fact_files", "document_files")
    )
    assert workspace.note_files.files is workspace.agent_files
    assert workspace.session_files.files is workspace.agent_files
    assert WorkspaceState.__mro__ == (WorkspaceState, object)
    assert workspace.tenant_of("jaskier") == "oxenfurt" == workspace.state.tenant_of("jaskier")
    assert workspace.notes is workspace.state.notes
    assert workspace.damaged is workspace.state.damaged
    assert workspace.removed is workspace.state.removed


def test_what_one_part_writes_the_others_read(workspace: MarkdownWorkspace) -> None:
    stored = workspace.fact_files.add_fact("jaskier", _fact("f1", "Geralt likes horses"))
    assert stored.provenance.path == "brain.md"
    assert [f.content for f in workspace.brain_facts("jaskier")] == ["Geralt likes horses"]
    assert [f.id for f in workspace.fact_reads.brain_facts("jaskier")] == ["f1"]
    parsed = workspace.parse_source("jaskier", "brain.md")
    assert [it.id for it in parsed.items] == ["f1"]
    assert parsed.items[0].tenant == "oxenfurt"
    with workspace.holding_brain("jaskier"):  # the writer's hold, seen by the reads
        workspace.add_fact("jaskier", _fact("f2", "Yennefer likes lilac"))
        assert {f.id for f in workspace.brain_facts("jaskier")} == {"f1", "f2"}
    assert "Yennefer likes lilac" in (workspace.agent_dir("jaskier") / "brain.md").read_text()
    (workspace.agent_dir("jaskier") / "brain.md").write_bytes(b"# Brain\n\n- bad \xff byte\n")
    workspace.parse_source("jaskier", "brain.md")
    assert any("brain.md" in note for note in workspace.notes)  # the shared damage notes


def _typed(ws: MarkdownWorkspace, item: MemoryItem) -> None:
    """Never called: mypy checks that the flat names keep the parts' types."""
    stored: MemoryItem = ws.add_fact("jaskier", item)
    facts: list[MemoryItem] = ws.brain_facts("jaskier")
    folder: Path = ws.require_agent("jaskier")
    kept: Any = ws.fact_reads.kept("jaskier", "brain.md")
    del stored, facts, folder, kept
