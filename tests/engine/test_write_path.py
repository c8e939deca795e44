"""The single write path: autonomy, cross-agent grants, the audit trail (SPEC C5, C6)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kronika import Memory, build_memory, load_settings
from kronika.errors import ImportFormatError, PermissionDenied
from kronika.testing import FrozenClock
from kronika.workflows.portability import export_memory, import_export


def _config(home: Path, text: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "kronika.toml").write_text(text)


def test_every_write_is_audited_with_its_source(memory: Memory) -> None:
    memory.remember("Lucas", key="nombre")
    memory.remember("Luca", key="nombre")
    memory.forget(key="nombre")
    actions = [(e.action, e.source_agent, e.outcome) for e in memory.audit()]
    assert actions == [
        ("remember", "user", "applied"),
        ("supersede", "user", "applied"),
        ("forget", "user", "applied"),  # one forget: the current value and its history
    ]
    lines = (memory.settings.home / "audit.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["target_agent"] == "default"


def test_cross_agent_writes_need_a_grant(home: Path, clock: FrozenClock) -> None:
    _config(home, '[agents.jaskier]\nwriters = ["planner"]\n')
    settings = load_settings(home, environ={}, embedder="hashing")
    with build_memory(settings, create=True, clock=clock) as mem:
        for name in ("jaskier", "planner", "intruder"):
            mem.create_agent(name)
        mem.remember("likes ballads", agent="jaskier", source_agent="planner")
        with pytest.raises(PermissionDenied, match="writers"):
            mem.remember("likes metal", agent="jaskier", source_agent="intruder")
        # reading another agent's memory is allowed by default
        assert mem.recall("ballads", agent="jaskier", k=1).hits
        audit = mem.audit(agent="jaskier")
        assert [(e.source_agent, e.outcome) for e in audit] == [
            ("planner", "applied"),
            ("intruder", "denied"),
        ]
        assert all(f.value != "likes metal" for f in mem.facts(agent="jaskier"))


def test_autonomy_levels(home: Path, clock: FrozenClock) -> None:
    _config(
        home,
        "[agents.readonly]\nautonomy = 0\n[agents.careful]\nautonomy = 1\n"
        "[agents.auto]\nautonomy = 2\n",
    )
    settings = load_settings(home, environ={}, embedder="hashing")
    with build_memory(settings, create=True, clock=clock) as mem:
        for name in ("readonly", "careful", "auto"):
            mem.create_agent(name)
        with pytest.raises(PermissionDenied, match="read-only"):
            mem.remember("x", agent="readonly", source_agent="readonly")
        receipt = mem.remember("maybe", agent="careful", source_agent="careful")
        assert receipt.outcome == "proposed"
        assert mem.facts(agent="careful") == []
        assert mem.remember("yes", agent="auto", source_agent="auto").outcome == "applied"
        # the person is never held back by an agent's autonomy
        assert mem.remember("user says so", agent="readonly").outcome == "applied"


def test_export_import_round_trip(memory: Memory, tmp_path: Path, clock: FrozenClock) -> None:
    memory.remember("prefiere TypeScript", key="preferencia")
    memory.remember("Kraków", key="city")
    memory.remember("Warszawa", key="city")
    memory.note("Зустрів Олену в Києві")
    memory.save_turn("s1", "user", "¿recordás que me gusta el mate?")
    exported = export_memory(memory)
    files = exported["agents"]["default"]["files"]
    assert {"brain.md", "history.md", "sessions/s1.md"} <= set(files)

    other = load_settings(tmp_path / "elsewhere", environ={}, embedder="hashing")
    with build_memory(other, create=True, clock=clock) as target:
        import_export(target, exported)  # the fresh agent holds nothing yet
        with pytest.raises(ImportFormatError, match="already has memories"):
            import_export(target, exported)
        import_export(target, exported, replace_existing=True)
        again = export_memory(target)
        assert again["agents"]["default"]["files"] == files
        hits = target.recall("Олену Києві", k=1).hits
        assert hits and "Олену" in hits[0].item.content
        assert [h.value for h in target.history("city")] == ["Kraków", "Warszawa"]


def test_import_refuses_paths_outside_the_agent(memory: Memory) -> None:
    evil = {
        "format": "kronika-export",
        "version": 1,
        "agents": {"mallory": {"files": {"../../escape.md": "x"}}},
    }
    with pytest.raises(ImportFormatError, match="refusing"):
        import_export(memory, evil)
    assert not (memory.settings.home.parent / "escape.md").exists()
    with pytest.raises(ImportFormatError):
        import_export(memory, {"format": "something-else"})
    for control in ("bad\x00name.md", "two\nlines.md", "tab\there.md"):
        unreadable = {**evil, "agents": {"mallory": {"files": {control: "x"}}}}
        with pytest.raises(ImportFormatError, match="refusing"):
            import_export(memory, unreadable)
