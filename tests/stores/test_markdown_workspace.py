"""The workspace as a whole: agents, listing, damaged files, crash-safe writes, summaries."""

from __future__ import annotations

import hashlib
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kronika.core.model import ItemType, RetainKind
from kronika.errors import InvalidAgentName, UnknownAgent, WorkspaceError
from kronika.stores.markdown import MarkdownWorkspace

T0 = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)


@pytest.fixture
def ws(tmp_path: Path) -> MarkdownWorkspace:
    workspace = MarkdownWorkspace(tmp_path / "home", tenant="acme")
    assert not workspace.exists()
    workspace.initialize()
    workspace.create_agent("jaskier")
    return workspace


def test_agents_are_created_listed_and_required(ws: MarkdownWorkspace) -> None:
    ws.create_agent("planner")
    (ws.home / "agents" / ".hidden").mkdir()
    assert ws.exists() and ws.agents() == ["jaskier", "planner"]
    assert ws.read_identity("jaskier").startswith("# Identity")
    with pytest.raises(UnknownAgent) as info:
        ws.require_agent("geralt")
    assert info.value.known == ["jaskier", "planner"]
    with pytest.raises(UnknownAgent):
        ws.brain_facts("geralt")


@pytest.mark.parametrize("name", ["../x", "", "a/b", ".", "..", "-x", "a" * 65, "ż"])
def test_unsafe_agent_names_are_refused(ws: MarkdownWorkspace, name: str) -> None:
    with pytest.raises(InvalidAgentName):
        ws.create_agent(name)
    with pytest.raises(InvalidAgentName):
        ws.has_agent(name)
    assert not (ws.home / "x").exists()


def _files(folder: Path, *paths: str) -> None:
    """A one-line file at each of ``paths`` under ``folder`` (folders made as needed)."""
    for rel in paths:
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text("x\n", "utf-8")


def test_list_sources_skips_identity_temp_files_and_copies(ws: MarkdownWorkspace) -> None:
    folder = ws.agent_dir("jaskier")
    _files(
        folder,
        "active_context.md",
        "sessions/s1.md",
        "memory/2025-11-27.md",
        "memory/notes.txt",
        "summaries/L1/0001.md",
        "bank/world.md",
        "bank/entities/Peter.md",
        ".corrupt/brain.md.20250101T000000Z",
        "sessions/.s1.md.ab12cd34.kronika-tmp",
    )
    listed = [s.path for s in ws.list_sources("jaskier")]
    assert listed == [
        "active_context.md",
        "bank/entities/Peter.md",
        "bank/world.md",
        "brain.md",
        "memory/2025-11-27.md",
        "sessions/s1.md",
        "summaries/L1/0001.md",
    ]
    brain = next(s for s in ws.list_sources("jaskier") if s.path == "brain.md")
    assert brain.size == (folder / "brain.md").stat().st_size


def test_list_sources_reads_links_and_leaves_what_is_not_indexed(
    ws: MarkdownWorkspace, tmp_path: Path
) -> None:
    """A file or folder that is a symbolic link is listed with its target's time and
    size, a broken link is not; a folder below an indexed one, a folder named like an
    indexed file, hidden files and other kinds of file are not either."""
    folder = ws.agent_dir("jaskier")
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "days").mkdir(parents=True)
    (elsewhere / "days" / "2025-11-28.md").write_text("a day\n", "utf-8")
    (elsewhere / "lessons.md").write_text("# Lessons\n- one more\n", "utf-8")
    if (folder / "memory").is_dir():
        (folder / "memory").rmdir()
    (folder / "memory").symlink_to(elsewhere / "days")
    (folder / "lessons.md").symlink_to(elsewhere / "lessons.md")
    (folder / "sessions" / "gone.md").symlink_to(elsewhere / "missing.md")
    _files(
        folder,
        "sessions/old/s0.md",
        "sessions/.hidden.md",
        "sessions/s2.MD",
        "summaries/L3/0001.md",
        "bank/entities/Ola.txt",
    )
    (folder / "active_context.md").mkdir()
    listed = {s.path: s for s in ws.list_sources("jaskier")}
    assert sorted(listed) == ["brain.md", "lessons.md", "memory/2025-11-28.md"]
    assert listed["lessons.md"].size == (elsewhere / "lessons.md").stat().st_size


def test_parse_source_refuses_paths_outside_the_agent(ws: MarkdownWorkspace) -> None:
    with pytest.raises(WorkspaceError):
        ws.parse_source("jaskier", "../other/brain.md")
    with pytest.raises(WorkspaceError):
        ws.parse_source("jaskier", "identity.md")


def test_invalid_utf8_is_backed_up_reported_and_salvaged(ws: MarkdownWorkspace) -> None:
    folder = ws.agent_dir("jaskier")
    raw = b"# Brain\n\n## User\n- **name**: Lucas\n- broken \xff\xfe bytes\x00 here\n"
    (folder / "brain.md").write_bytes(raw)
    parsed = ws.parse_source("jaskier", "brain.md")
    assert [i.content for i in parsed.items] == ["name: Lucas", "broken \ufffd\ufffd bytes here"]
    (warning,) = parsed.warnings
    assert "brain.md" in warning and "invalid UTF-8" in warning and ".corrupt/brain.md." in warning
    (backup,) = (folder / ".corrupt").iterdir()
    assert backup.read_bytes() == raw
    assert parsed.content_hash == hashlib.sha256(raw).hexdigest()
    # The next write stores the repaired text; the original stays in .corrupt.
    facts = ws.brain_facts("jaskier")
    ws.update_fact("jaskier", facts[0])
    assert (folder / "brain.md").read_text("utf-8").count("\ufffd") == 2


def test_crash_during_replace_leaves_the_old_file_intact(
    ws: MarkdownWorkspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws.write_active_context("jaskier", "We planned the trip to Kraków.")
    path = ws.agent_dir("jaskier") / "active_context.md"
    before = path.read_bytes()

    def crash(src: object, dst: object) -> None:
        raise OSError("simulated power cut")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(WorkspaceError):
        ws.write_active_context("jaskier", "something else entirely")
    monkeypatch.undo()
    assert path.read_bytes() == before
    # A temp file left behind by a harder crash is ignored, then cleaned up.
    leftover = path.with_name(".active_context.md.1234abcd.kronika-tmp")
    leftover.write_text("half", "utf-8")
    assert [s.path for s in ws.list_sources("jaskier")] == ["active_context.md", "brain.md"]
    assert ws.cleanup_temp() == 1 and not leftover.exists()


def test_active_context_is_one_summary_item(ws: MarkdownWorkspace) -> None:
    ws.write_active_context("jaskier", "\nWe talked about Łódź.\n\nNext: tickets.")
    assert ws.read_active_context("jaskier") == "We talked about Łódź.\n\nNext: tickets.\n"
    (item,) = ws.parse_source("jaskier", "active_context.md").items
    assert (item.type, item.section, item.tenant) == (ItemType.SUMMARY, "active_context", "acme")
    assert ws.remove_item("jaskier", item) is True
    assert ws.parse_source("jaskier", "active_context.md").items == ()


def test_summary_files_are_items_and_can_be_removed(ws: MarkdownWorkspace) -> None:
    path = ws.write_summary(
        "jaskier",
        "summaries/L1/0001.md",
        "Caroline and Melanie talked.",
        {"id": "sum-1", "created": "2025-11-27T18:00:00Z", "sessions": "s1, s2"},
    )
    (item,) = ws.parse_source("jaskier", path).items
    assert (item.id, item.content, item.provenance.line) == (
        "sum-1",
        "Caroline and Melanie talked.",
        7,
    )
    assert item.tags == ("L1", "session:s1", "session:s2")
    assert item.created_at == datetime(2025, 11, 27, 18, tzinfo=UTC)
    assert ws.remove_item("jaskier", item) is True
    assert not (ws.agent_dir("jaskier") / path).exists()


def test_items_carry_tenant_and_agent(ws: MarkdownWorkspace) -> None:
    path = ws.agent_dir("jaskier") / "bank" / "world.md"
    path.write_text("- the sky is blue\n- \\W escaped prefix\n", "utf-8")
    first, second = ws.parse_source("jaskier", "bank/world.md").items
    assert (first.tenant, first.agent, first.kind) == ("acme", "jaskier", RetainKind.WORLD)
    assert second.content == "W escaped prefix"
