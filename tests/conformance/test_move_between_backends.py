"""Moving a memory between backends loses nothing: a Markdown workspace exported,
imported into PostgreSQL, exported again from another worker, and imported back into
a Markdown workspace gives the same files (facts with their history and validity,
notes, sessions, proposals, identity), the same items with their provenance, and the
same audit trail (plus one ``import`` entry per move), and the same access statistics
(the shared search index keeps them in team mode); also into a database where another
tenant imported the very same memory (the same agents, item ids and texts) first. The
workspace's rules (storage policies, retention, teams, ``dm_channels``) go into the
importing worker's ``kronika.toml``, where a worker keeps them on PostgreSQL too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from backends import Backend
from kronika.testing import FrozenClock
from kronika.workflows.portability import export_memory, import_export


@pytest.mark.parametrize("shared", [False, True], ids=["own-database", "shared-database"])
def test_markdown_to_postgres_and_back_is_lossless(
    tmp_path: Path, clock: FrozenClock, request: pytest.FixtureRequest, shared: bool
) -> None:
    url = request.getfixturevalue("postgres_url")
    local = Backend("markdown", tmp_path / "local")
    team = Backend("postgres", tmp_path / "team", url)
    back = Backend("markdown", tmp_path / "back")
    neighbour = Backend("postgres", tmp_path / "neighbour", url, tenant="neighbour")
    try:
        _fill(local, tmp_path, clock)
        exported = export_memory(local.open(clock=clock))
        if shared:  # the same memory, ids and all, imported by another tenant first
            import_export(neighbour.open(clock=clock), exported)
        worker = team.open("a", clock=clock)
        restored = import_export(worker, exported)
        rules = export_memory(worker)["settings"]
        from_team = export_memory(team.open("b", clock=clock))  # read from the record
        import_export(back.open(clock=clock), from_team, replace_existing=True)
        again = export_memory(back.open("b", clock=clock))
    finally:
        for backend in (local, team, back, neighbour):
            backend.close()
    assert any(item["access_count"] for item in exported["agents"]["default"]["items"])
    assert exported["settings"]["teams"] == {"core": ["anna"]}
    assert rules == exported["settings"] and len(restored.rules) == 2
    reopened = team.settings("a")
    assert reopened.teams == {"core": ("anna",)} and reopened.storage.retention
    for moved, imports in ((from_team, 1), (again, 2)):
        for name, agent in exported["agents"].items():
            there = moved["agents"][name]
            assert there["files"] == agent["files"]
            assert there["file_times"] == agent["file_times"]
            assert there["policy"] == agent["policy"]
            assert _items(there) == _items(agent)
        assert moved["audit"][: len(exported["audit"])] == exported["audit"]
        extra = moved["audit"][len(exported["audit"]) :]
        assert [e["action"] for e in extra] == ["import"] * imports * len(exported["agents"])


RULES = '[retention]\nshort = 30\n\n[teams]\ncore = ["anna"]\n'


def _fill(backend: Backend, tmp_path: Path, clock: FrozenClock) -> None:
    backend.home().mkdir(parents=True, exist_ok=True)
    (backend.home() / "kronika.toml").write_text(RULES, encoding="utf-8")
    memory = backend.open(clock=clock)
    memory.create_agent("planner")
    memory.remember("Kraków", key="city")
    clock.advance(days=2)
    memory.remember("Lviv", key="city")
    memory.remember("prefiere TypeScript", key="preferencia", agent="planner")
    memory.note("Зустрів Олену в Києві")
    memory.save_turn("s1", "user", "¿recordás que me gusta el mate?")
    memory.save_turn("s1", "assistant", "Sí, con poco azúcar.")
    identity = memory.workspace.agent_dir("default") / "identity.md"
    identity.write_text("# Identity\n\nA patient librarian.\r\nKeeps \u00e9 and tabs\t.\n")
    memory.sync()
    memory.recall("city", k=3)  # usage statistics exist on the source


def _items(agent: dict[str, Any]) -> list[dict[str, Any]]:
    return sorted(agent["items"], key=lambda item: str(item["id"]))
