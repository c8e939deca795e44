"""Backups restore: `kronika export`, then `kronika import export` elsewhere, as a person
runs them (real subprocesses, real workspaces)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from kronika import build_memory, load_settings
from kronika.cli import main
from kronika.core.model import Tier
from kronika.errors import PermissionDenied
from kronika.testing import FrozenClock

START = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)


def kronika(home: Path, *args: str, code: int = 0) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KRONIKA_")}
    env["KRONIKA_EMBEDDER"] = "hashing"
    done = subprocess.run(
        [sys.executable, "-m", "kronika", "--home", str(home), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    return done.stdout if code == 0 else done.stderr


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Any:
    """The same command line run inside this process (faster than a subprocess)."""
    monkeypatch.setenv("KRONIKA_EMBEDDER", "hashing")

    def run(home: Path, *args: str, code: int = 0) -> str:
        got = main(["--home", str(home), *args])
        captured = capsys.readouterr()
        assert got == code, captured.err
        return captured.out if code == 0 else captured.err

    return run


def snapshot(home: Path) -> dict[str, bytes]:
    """Every file of the workspace but the derived index (which an open may touch)."""
    if not home.exists():
        return {}
    return {
        p.relative_to(home).as_posix(): p.read_bytes()
        for p in sorted(home.rglob("*"))
        if p.is_file() and not p.name.startswith("index.") and p.name != ".kronika.lock"
    }


def small_backup(tmp_path: Path, run: Any = kronika) -> Path:
    src = tmp_path / "src"
    run(src, "init")
    run(src, "remember", "--key", "city", "Kraków")
    run(src, "remember", "--key", "city", "Warszawa")
    backup = tmp_path / "backup.json"
    run(src, "export", "-o", str(backup))
    return backup


def test_a_backup_restores_into_a_fresh_workspace(tmp_path: Path) -> None:
    backup = small_backup(tmp_path)
    dst = tmp_path / "dst"
    kronika(dst, "init")
    kronika(dst, "import", "export", str(backup))
    hits = json.loads(kronika(dst, "recall", "Warszawa", "--json"))["hits"]
    assert hits[0]["content"] == "city: Warszawa"
    # the agent has memories now: restoring over it needs --replace, and changes nothing
    before = snapshot(dst)
    err = kronika(dst, "import", "export", str(backup), code=9)
    assert "--replace" in err and "'default'" in err
    assert snapshot(dst) == before
    kronika(dst, "import", "export", str(backup), "--replace")
    # into a folder that is no workspace yet: it becomes one
    kronika(tmp_path / "new", "import", "export", str(backup))
    assert "Warszawa" in kronika(tmp_path / "new", "show", "brain")


def test_replace_makes_the_agent_exactly_the_backup(cli: Any, tmp_path: Path) -> None:
    kronika = cli
    backup = small_backup(tmp_path, cli)
    dst = tmp_path / "dst"
    kronika(dst, "init")
    kronika(dst, "remember", "--key", "pet", "Mruczek")
    kronika(dst, "note", "a note only this workspace has")
    kronika(dst, "import", "export", str(backup), "--replace")
    assert "Mruczek" not in kronika(dst, "show", "brain")
    hits = json.loads(kronika(dst, "recall", "note only this workspace", "--json"))["hits"]
    assert not [h for h in hits if "only this workspace" in h["content"]]
    assert not list((dst / "agents" / "default" / "memory").iterdir())


RULES = """
[retention]
mid = 3650  # ten years

[[policy]]
name = "never store #hr-private"
channels = ["hr-private"]
store = false

[teams]
core = ["anna", "bob"]
"""


def build_rich_workspace(home: Path, kronika: Any) -> None:
    """Facts with history, a hand-written fact, notes, a session, a summary, Active
    Context, identity, a proposal, audit, access statistics, a policy, storage
    policies with retention, a team and its own dm_channels."""
    kronika(home, "init")
    config = home / "kronika.toml"
    text = config.read_text(encoding="utf-8")
    config.write_text('dm_channels = "direct-*"\n' + text + RULES, encoding="utf-8")
    with config.open("a", encoding="utf-8") as handle:
        handle.write('\n[agents.careful]\nautonomy = 1\nwriters = ["default"]\n')
    clock = FrozenClock(START)
    settings = load_settings(home, environ={}, embedder="hashing")
    with build_memory(settings, clock=clock) as memory:
        memory.remember("Kraków", key="city")
        clock.advance(days=30)
        memory.remember("Warszawa", key="city")
        memory.remember("prefiere TypeScript", key="preferencia")
        memory.note("W Зустрів @Олену в Києві")
        memory.save_turn("s1", "user", "I adopted a cat named Mruczek")
        memory.save_turn("s1", "assistant", "Congratulations on Mruczek!")
        memory.create_agent("careful")
        assert memory.remember("maybe tea", agent="careful", source_agent="careful").proposal
        clock.advance(days=1)
        assert memory.recall("Mruczek cat", k=2).hits
    agent = home / "agents" / "default"
    (agent / "identity.md").write_text("# Identity\n\nA patient archivist.\n", encoding="utf-8")
    (agent / "active_context.md").write_text("We talked about the cat.\n", encoding="utf-8")
    (agent / "summaries" / "L1" / "sum-1.md").write_text(
        "---\nid: sum-1\ncreated: 2026-12-01T10:00:00Z\nsessions: s1\n---\n\n"
        "The user adopted a cat.\n",
        encoding="utf-8",
    )
    brain = agent / "brain.md"
    brain.write_text(
        brain.read_text(encoding="utf-8") + "- drinks green tea every morning\n", encoding="utf-8"
    )
    hand_written = datetime(2025, 3, 4, 5, 6, 7, tzinfo=UTC).timestamp()
    os.utime(brain, (hand_written, hand_written))


def without(data: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in keys}


def test_export_import_export_is_lossless(cli: Any, tmp_path: Path) -> None:
    kronika = cli
    src, dst = tmp_path / "src", tmp_path / "dst"
    build_rich_workspace(src, cli)
    first_file = tmp_path / "first.json"
    kronika(src, "export", "-o", str(first_file))
    kronika(dst, "init")
    summary = json.loads(kronika(dst, "import", "export", str(first_file), "--json"))
    assert summary["agents"] == 2 and summary["audit_entries"] > 0
    assert summary["access_stats"] > 0 and summary["policies"] == 1
    assert summary["rules"] == [
        "storage policies (1 rule(s), retention mid 3650 days)",
        "team 'core'",
        "dm_channels 'direct-*'",
    ]
    second_file = tmp_path / "second.json"
    kronika(dst, "export", "-o", str(second_file))
    first = json.loads(first_file.read_text(encoding="utf-8"))
    second = json.loads(second_file.read_text(encoding="utf-8"))

    # identical but for when it was exported and the import recorded in the audit trail
    assert without(second, "exported_at", "audit") == without(first, "exported_at", "audit")
    assert second["audit"][: len(first["audit"])] == first["audit"]
    added = second["audit"][len(first["audit"]) :]
    assert [(a["action"], a["target_agent"]) for a in added] == [
        ("import", "careful"),
        ("import", "default"),
    ]
    # and what the issue named is really in there, not merely equally absent
    assert first["version"] == 3 and first["embedding_model"] == "hashing-256"
    assert first["settings"] == {
        "storage_policies": RULES.split("[teams]")[0].strip() + "\n",
        "teams": {"core": ["anna", "bob"]},
        "dm_channels": "direct-*",
    }
    default = first["agents"]["default"]
    assert {
        "brain.md",
        "history.md",
        "identity.md",
        "active_context.md",
        "sessions/s1.md",
        "summaries/L1/sum-1.md",
    } <= set(default["files"])
    assert "proposals.md" in first["agents"]["careful"]["files"]
    assert first["agents"]["careful"]["policy"] == {"autonomy": 1, "writers": ["default"]}
    assert any(i["access_count"] for i in default["items"])
    tea = next(i for i in default["items"] if i["content"] == "drinks green tea every morning")
    assert tea["created_at"].startswith("2025-03-04T05:06:07")
    assert {a["action"] for a in first["audit"]} >= {"remember", "supersede", "note", "save_turn"}

    # the restored workspace answers as the original does
    for args in (
        ("recall", "Mruczek cat", "--no-record"),
        ("recall", "city", "--as-of", "2026-12-01", "--include-superseded", "--no-record"),
        ("history", "city"),
        ("show", "brain"),
        ("show", "identity"),
        ("proposals", "--agent", "careful"),
    ):
        mine, theirs = (json.loads(kronika(h, *args, "--json")) for h in (src, dst))
        assert _answers(mine) == _answers(theirs), args
    # the policies hold in the restored workspace
    settings = load_settings(dst, environ={}, embedder="hashing")
    assert settings.teams_of("anna") == ("core",) and settings.dm_channels == "direct-*"
    assert settings.storage.retention == {Tier.MID: 3650}
    with build_memory(settings) as memory:
        refused = memory.remember("salaries", scope="channel", channel="hr-private")
        assert refused.outcome == "refused"
        assert not [i for i in memory.items(agent="default") if "salaries" in i.content]
        assert memory.remember("x", agent="careful", source_agent="careful").outcome == "proposed"
        assert memory.remember("y", agent="careful", source_agent="default").outcome == "proposed"
        with pytest.raises(PermissionDenied, match="grant"):
            memory.remember("z", agent="careful", source_agent="stranger")


def _answers(data: Any) -> Any:
    """What a user reads in an answer, without scores (recency moves with the clock)."""
    if isinstance(data, dict):
        return {
            k: _answers(v)
            for k, v in data.items()
            if k not in ("score", "scores", "relevance", "recency", "explain", "seconds")
        }
    if isinstance(data, list):
        return [_answers(v) for v in data]
    return data


def test_import_into_another_embedder_embeds_again_and_says_so(tmp_path: Path) -> None:
    from kronika.providers.embedders import HashingEmbedder
    from kronika.workflows.portability import export_memory, import_export

    src = load_settings(tmp_path / "src", environ={}, embedder="hashing")
    with build_memory(src, create=True) as memory:
        memory.remember("Warszawa", key="city")
        data = export_memory(memory)
    dst = load_settings(tmp_path / "dst", environ={}, embedder="hashing")
    with build_memory(dst, create=True, embedder=HashingEmbedder(dim=64)) as memory:
        report = import_export(memory, data)
        assert any("hashing-256" in note and "hashing-64" in note for note in report.notes)
        assert memory.recall("Warszawa", k=1).hits[0].item.value == "Warszawa"
        assert export_memory(memory)["embedding_model"] == "hashing-64"


def bad_at_the_end(backup: Path, tmp_path: Path) -> list[tuple[str, Path]]:
    """Exports that go wrong only at their very end (and a few that go wrong early)."""
    data = json.loads(backup.read_text(encoding="utf-8"))
    cases: dict[str, Any] = {}
    late = json.loads(json.dumps(data))
    late["agents"]["zz-last"] = {"files": {"brain.md": "# Brain\n", "notes.md": 5}}
    cases["a file that is not text"] = late
    escape = json.loads(json.dumps(data))
    escape["agents"]["zz-last"] = {"files": {"brain.md": "# Brain\n", "../../x.md": "boo"}}
    cases["a path outside the agent"] = escape
    audit = json.loads(json.dumps(data))
    audit["audit"].append({"at": "yesterday-ish", "action": "remember"})
    cases["a broken audit entry"] = audit
    usage = json.loads(json.dumps(data))
    usage["agents"]["default"]["items"][-1]["access_count"] = "many"
    cases["a broken access count"] = usage
    policy = json.loads(json.dumps(data))
    policy["agents"]["default"]["policy"] = {"autonomy": 7, "writers": []}
    cases["an impossible autonomy"] = policy
    rule = json.loads(json.dumps(data))
    rule["settings"]["storage_policies"] = "[retention]\nforever = 3\n"
    cases["an unknown retention tier"] = rule
    team = json.loads(json.dumps(data))
    team["settings"]["teams"] = {"core": ["anna", 7]}
    cases["a team member that is no name"] = team
    newer = json.loads(json.dumps(data))
    newer["version"] = 99
    cases["a newer version"] = newer
    out = []
    for name, value in cases.items():
        path = tmp_path / f"{name.replace(' ', '-')}.json"
        path.write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")
        out.append((name, path))
    torn = tmp_path / "torn.json"
    torn.write_text(backup.read_text(encoding="utf-8")[:-40], encoding="utf-8")
    out.append(("a file cut short", torn))
    return out


def test_a_failed_import_leaves_nothing_behind(cli: Any, tmp_path: Path) -> None:
    kronika = cli
    backup = small_backup(tmp_path, cli)
    fresh = tmp_path / "fresh"
    kronika(fresh, "init")
    kronika(fresh, "remember", "--key", "pet", "Mruczek")
    for name, path in bad_at_the_end(backup, tmp_path):
        for replace in ((), ("--replace",)):
            before = snapshot(fresh)
            kronika(fresh, "import", "export", str(path), *replace, code=9)
            assert snapshot(fresh) == before, name
            assert not [p for p in fresh.iterdir() if "import" in p.name], name
        nowhere = tmp_path / "nowhere"
        kronika(nowhere, "import", "export", str(path), code=9)
        assert not nowhere.exists(), name


def test_a_newer_export_is_refused_with_a_clear_message(cli: Any, tmp_path: Path) -> None:
    kronika = cli
    backup = small_backup(tmp_path, cli)
    data = json.loads(backup.read_text(encoding="utf-8"))
    data["version"] = 4
    backup.write_text(json.dumps(data), encoding="utf-8")
    err = kronika(tmp_path / "dst", "import", "export", str(backup), code=9)
    assert "newer" in err and "version 4" in err


def test_an_older_export_without_rules_still_restores(cli: Any, tmp_path: Path) -> None:
    kronika = cli
    src = tmp_path / "src"
    build_rich_workspace(src, cli)
    data = json.loads(kronika(src, "export"))
    del data["settings"]
    data["version"] = 2
    backup = tmp_path / "v2.json"
    backup.write_text(json.dumps(data), encoding="utf-8")
    dst = tmp_path / "dst"
    summary = json.loads(kronika(dst, "import", "export", str(backup), "--json"))
    assert summary["agents"] == 2 and summary["rules"] == []
    assert "Warszawa" in kronika(dst, "show", "brain")
    settings = load_settings(dst, environ={}, embedder="hashing")
    assert not settings.storage.rules and not settings.teams


def test_a_restore_keeps_the_rules_this_workspace_sets_and_says_so(
    cli: Any, tmp_path: Path
) -> None:
    kronika = cli
    src, dst = tmp_path / "src", tmp_path / "dst"
    build_rich_workspace(src, cli)
    backup = tmp_path / "backup.json"
    kronika(src, "export", "-o", str(backup))
    kronika(dst, "init")
    own = '[retention]\nshort = 7\n\n[teams]\ncore = ["carol"]\nops = ["dan"]\n'
    config = dst / "kronika.toml"
    config.write_text(config.read_text(encoding="utf-8") + own, encoding="utf-8")
    summary = json.loads(kronika(dst, "import", "export", str(backup), "--json"))
    assert summary["rules"] == ["dm_channels 'direct-*'"]
    notes = " ".join(summary["notes"])
    assert "kept this workspace's storage policies" in notes
    assert "kept this workspace's members of team 'core'" in notes and "anna, bob" in notes
    settings = load_settings(dst, environ={}, embedder="hashing")
    assert settings.storage.retention == {Tier.SHORT: 7} and not settings.storage.rules
    assert settings.teams == {"core": ("carol",), "ops": ("dan",)}


def test_a_crash_halfway_is_undone_when_the_workspace_is_next_opened(
    cli: Any, tmp_path: Path
) -> None:
    from kronika.engine.backup_format import read_backup
    from kronika.workflows.portability import stage_backup

    data = json.loads(small_backup(tmp_path, cli).read_text(encoding="utf-8"))
    data["agents"]["careful"] = {
        "files": {"brain.md": "# Brain\n\n- likes tea\n"},
        "policy": {"autonomy": 1, "writers": []},
    }
    backup = read_backup(data)
    dst = tmp_path / "dst"
    cli(dst, "init")
    cli(dst, "remember", "--key", "pet", "Mruczek")
    before = snapshot(dst)
    settings = load_settings(dst, environ={}, embedder="hashing")
    swaps = 4  # agents/careful, agents/default, kronika.toml, audit.jsonl
    for crashed_after in range(swaps + 1):
        with build_memory(settings) as memory:
            staged = stage_backup(memory, backup, replace_existing=True)
            plan = staged.staging.plan(staged.targets)
            assert len(plan) == swaps
            for step in plan[:crashed_after]:
                staged.staging.swap(step)
        # the process dies here, before the import is marked done
        assert "Mruczek" in cli(dst, "show", "brain"), crashed_after
        assert snapshot(dst) == before, crashed_after
        assert cli(dst, "agents", "--json").count("careful") == 0


def test_a_crash_after_the_swap_keeps_the_restore_and_raises_no_false_alarm(
    cli: Any, tmp_path: Path
) -> None:
    from kronika.engine.backup_format import read_backup
    from kronika.workflows.portability import prepare_index, stage_backup

    backup_file = tmp_path / "backup.json"
    src = tmp_path / "src"
    cli(src, "init")
    cli(src, "remember", "--key", "city", "Warszawa")
    cli(src, "recall", "Warszawa")
    cli(src, "export", "-o", str(backup_file))
    backup = read_backup(json.loads(backup_file.read_text(encoding="utf-8")))
    dst = tmp_path / "dst"
    cli(dst, "init")
    for key, value in (("pet", "Mruczek"), ("tea", "green"), ("car", "none")):
        cli(dst, "remember", "--key", key, value)
    settings = load_settings(dst, environ={}, embedder="hashing")
    with build_memory(settings) as memory:
        staged = stage_backup(memory, backup, replace_existing=True)
        prepare_index(memory, backup)
        staged.staging.commit(staged.targets)
    # the process dies here, before it indexed the restored files
    listed = json.loads(cli(dst, "list", "--json"))
    assert [(i["key"], i["value"]) for i in listed] == [("city", "Warszawa")]
    assert listed[0]["access_count"] == 1
    # the three facts the Brain no longer holds were replaced on purpose, not lost
    assert not (dst / "agents" / "default" / ".corrupt").exists()
