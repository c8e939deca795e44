"""``kronika doctor``'s checks and repairs over real workspaces and index files."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from kronika import Memory, build_memory
from kronika.engine.doctor import PROBLEM, WARNING, Examined, examine
from kronika.engine.repair import repair
from kronika.ports import AuditEntry
from kronika.stores.audit import JsonlAuditLog


def _examine(memory: Memory) -> Examined:
    home = memory.settings.home
    return examine(memory.workspace, memory.index, audit_path=home / "audit.jsonl", home=home)


def _repair(memory: Memory, found: Examined) -> list[str]:
    home = memory.settings.home
    return repair(
        memory.workspace,
        found,
        audit_path=home / "audit.jsonl",
        home=home,
        rebuild_index=lambda: memory.heal_index("test"),
        sync_index=lambda: None if memory.sync() else None,
    )


def _private(home: Path) -> None:
    for path in [home, *home.rglob("*")]:
        path.chmod(0o700 if path.is_dir() else 0o600)


def _checks(found: Examined) -> list[tuple[str, str]]:
    return [(f.check, f.severity) for f in found.findings]


def test_a_healthy_workspace_has_no_findings(memory: Memory) -> None:
    memory.remember("Kraków", key="city")
    _private(memory.settings.home)
    found = _examine(memory)
    assert found.findings == () and found.healthy
    assert found.counts["items"] == 1 and found.counts["audit_entries"] == 1


def test_two_current_values_of_one_key_are_found_and_left_to_a_person(memory: Memory) -> None:
    memory.remember("Kraków", key="city")
    brain = memory.workspace.agent_dir("default") / "brain.md"
    brain.write_text(brain.read_text("utf-8") + "- **city**: Gdańsk\n", "utf-8")
    _private(memory.settings.home)
    memory.sync()
    found = _examine(memory)
    (history,) = [f for f in found.findings if f.check == "history"]
    assert "2 current values" in history.what and "Gdańsk" in history.what
    assert history.repair is None and not found.healthy
    _repair(memory, found)
    assert not _examine(memory).healthy  # still two: a person must choose


def test_overlapping_validity_in_the_history_is_found(memory: Memory) -> None:
    memory.remember("Kraków", key="city")
    memory.remember("Gdańsk", key="city")  # Kraków moves to history.md
    history = memory.workspace.agent_dir("default") / "history.md"
    text = history.read_text("utf-8")
    # the old value now ends a year after the new one began
    moved = text.replace("to=2026-11-22T09:00:00Z", "to=2027-11-22T09:00:00Z")
    assert moved != text
    history.write_text(moved, "utf-8")
    _private(memory.settings.home)
    memory.sync()
    (finding,) = [f for f in _examine(memory).findings if f.check == "history"]
    assert "still valid when" in finding.what and finding.severity == PROBLEM


def test_torn_audit_lines_are_found_and_set_aside(memory: Memory) -> None:
    memory.remember("Kraków", key="city")
    audit = memory.settings.home / "audit.jsonl"
    audit.write_bytes(audit.read_bytes() + b'{"at": "2026-\n')
    memory.remember("tea", key="drink")
    _private(memory.settings.home)
    found = _examine(memory)
    assert ("audit", PROBLEM) in _checks(found)
    done = _repair(memory, found)
    assert any("audit.jsonl" in line for line in done)
    assert [e.action for e in JsonlAuditLog(audit).read()] == ["remember", "remember"]
    (copy,) = memory.settings.home.glob("audit.jsonl.damaged-*")
    assert b'{"at": "2026-\n' in copy.read_bytes()
    assert _examine(memory).healthy


def test_an_entry_appended_after_a_torn_line_starts_its_own(tmp_path: Path) -> None:
    log = JsonlAuditLog(tmp_path / "audit.jsonl")
    (tmp_path / "audit.jsonl").write_bytes(b'{"at": "2026-11-2')
    at = datetime(2026, 11, 22, tzinfo=UTC)
    log.append(
        AuditEntry(
            at=at,
            action="remember",
            target_agent="a",
            source_agent="a",
            section=None,
            item_id="f-1",
            summary="tea",
            outcome="ok",
        )
    )
    (entry,) = log.read()
    assert entry.action == "remember"
    assert log.notes and "1 unreadable line" in log.notes[0]


def test_an_index_behind_the_markdown_is_a_warning_and_fix_catches_up(memory: Memory) -> None:
    memory.remember("Kraków", key="city")
    brain = memory.workspace.agent_dir("default") / "brain.md"
    brain.write_text(brain.read_text("utf-8") + "- likes long walks\n", "utf-8")
    _private(memory.settings.home)
    found = _examine(memory)
    assert ("index", WARNING) in _checks(found) and found.healthy
    _repair(memory, found)
    assert _examine(memory).findings == ()


def test_a_broken_saved_copy_is_a_warning_and_fix_deletes_it(memory: Memory) -> None:
    home = memory.settings.home
    (home / "index.sqlite.vectors.json").write_text(json.dumps({"mapped": {}}), "utf-8")
    _private(home)
    found = _examine(memory)
    assert ("copies", WARNING) in _checks(found)
    _repair(memory, found)
    assert not (home / "index.sqlite.vectors.json").exists()


def test_files_others_can_read_are_a_warning_and_fix_makes_them_private(memory: Memory) -> None:
    memory.remember("Kraków", key="city")
    home = memory.settings.home
    _private(home)
    brain = memory.workspace.agent_dir("default") / "brain.md"
    brain.chmod(0o644)
    found = _examine(memory)
    (finding,) = [f for f in found.findings if f.check == "permissions"]
    assert "brain.md" in finding.where and finding.severity == WARNING
    _repair(memory, found)
    assert brain.stat().st_mode & 0o777 == 0o600
    assert _examine(memory).findings == ()


def test_recall_through_the_api_heals_a_damaged_index(memory: Memory) -> None:
    for n in range(5):
        memory.remember(f"I like thing {n}, tea {n}", key=f"like{n}")
    index = memory.settings.home / "index.sqlite"
    memory.close()
    with sqlite3.connect(index) as conn:
        size = conn.execute("PRAGMA page_size").fetchone()[0]
        (root,) = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'items'").fetchone()
    conn.close()
    with index.open("r+b") as handle:
        for offset in (0, 8, 100):
            handle.seek((root - 1) * size + offset)
            handle.write(b"\xde\xad\xbe\xef\x01\x02\x03\x04")
    with build_memory(memory.settings) as again:
        hits = again.recall("thing tea", k=10).hits
        assert len(hits) == 5
        assert any("rebuilt from the Markdown" in note for note in again.notes)
    assert list(index.parent.glob("index.sqlite.corrupt-*"))


def test_a_broken_session_header_is_a_finding_a_person_mends(memory: Memory) -> None:
    folder = memory.workspace.agent_dir("default") / "sessions"
    header = "---\nsession: s1\nnot a header line\n"
    (folder / "s1.md").write_text(header + "\n### [1] Ann\nhi\n", "utf-8")
    _private(memory.settings.home)
    found = _examine(memory)
    (finding,) = [f for f in found.findings if f.check == "files"]
    assert "s1.md" in finding.where and "header" in finding.what and finding.repair is None
    assert any("header" in note for note in memory.notes)
