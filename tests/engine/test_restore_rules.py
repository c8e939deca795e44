"""The rules a restore adds to kronika.toml: only what the workspace does not set, in
a file that reads back to exactly that, the rest of the file kept byte for byte."""

from __future__ import annotations

import tomllib
from pathlib import Path

from kronika.engine.backup_format import WorkspaceRules
from kronika.engine.restore_rules import with_rules
from kronika.settings import load_settings

POLICIES = '[retention]\nshort = 30\n\n[[policy]]\nname = "no DMs"\ndm = true\nstore = false\n'


def test_a_team_goes_into_the_existing_teams_table(tmp_path: Path) -> None:
    settings = load_settings(tmp_path, environ={}, embedder="hashing")
    text = '# mine\n[teams]  # who is who\nops = ["dan"]\n\n[agents.x]\nautonomy = 1\n'
    rules = WorkspaceRules(POLICIES, (("core", ("anna", "bob")), ("ops", ("dan",))), None)
    new, added, notes, policies = with_rules(text, settings, rules)
    assert added == ["storage policies (1 rule(s), retention short 30 days)", "team 'core'"]
    assert notes == []
    assert policies is not None and policies.rules[0].name == "no DMs"
    parsed = tomllib.loads(new)
    assert parsed["teams"] == {"ops": ["dan"], "core": ["anna", "bob"]}
    assert parsed["agents"] == {"x": {"autonomy": 1}}
    assert new.startswith("# mine\n[teams]  # who is who\n")


def test_nothing_is_added_twice_and_a_broken_file_is_left_alone(tmp_path: Path) -> None:
    settings = load_settings(tmp_path, environ={}, embedder="hashing")
    rules = WorkspaceRules(POLICIES, (("core", ("anna",)),), "dm:*, dm-*")
    once, added, _, _ = with_rules("", settings, rules)
    assert len(added) == 2  # dm_channels is this workspace's already
    again, added, notes, policies = with_rules(once, settings, rules)
    assert (again, added, notes, policies) == (once, [], [], None)
    broken = "[teams\n"
    left, added, notes, _ = with_rules(broken, settings, rules)
    assert left == broken and added == []
    assert any("by hand" in note or "could not" in note for note in notes)
