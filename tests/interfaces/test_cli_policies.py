"""``kronika policies``, ``kronika purge`` and a refused ``remember`` through the real
command line (subprocesses over a real workspace)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kronika import build_memory, load_settings
from kronika.testing import FrozenClock

KRONIKA = Path(sys.executable).with_name("kronika")
LONG_AGO = datetime(2020, 3, 1, 12, 0, tzinfo=UTC)

POLICIES = """
[retention]
short = 30
mid = 365

[[policy]]
name = "no DMs in long-term memory"
dm = true
max_tier = "mid"

[[policy]]
name = "never store hr"
channels = ["hr-*"]
store = false

[[policy]]
name = "acme keeps no facts"
tenants = ["acme"]
tiers = ["long"]
store = false
"""


def _kronika(home: Path, *args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KRONIKA_")}
    env["KRONIKA_EMBEDDER"] = "hashing"
    done = subprocess.run(
        [str(KRONIKA), "--home", str(home), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == code, f"kronika {args}: {done.returncode} {done.stderr}"
    return done


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "ws"
    _kronika(home, "init")
    with (home / "kronika.toml").open("a", encoding="utf-8") as config:
        config.write(POLICIES)
    return home


def test_policies_shows_the_rules_retention_and_what_a_dm_is(home: Path) -> None:
    shown = _kronika(home, "policies").stdout
    for words in (
        "no DMs in long-term memory",
        "direct messages",
        "keep at most in mid-term",
        "never store hr",
        "channel hr-*",
        "never store",
        "30 days",
        "365 days",
        "for ever",
        "dm:*, dm-*",
    ):
        assert words in shown, words
    data = json.loads(_kronika(home, "policies", "--json").stdout)
    assert data["retention_days"] == {"short": 30, "mid": 365, "long": None}
    assert data["dm_channels"] == ["dm:*", "dm-*"]
    assert [p["name"] for p in data["policies"]] == [
        "no DMs in long-term memory",
        "never store hr",
        "acme keeps no facts",
    ]
    assert data["policies"][1]["store"] is False
    assert data["policies"][1]["channels"] == ["hr-*"]


def test_the_dm_channels_setting_changes_what_a_dm_is(home: Path) -> None:
    text = (home / "kronika.toml").read_text(encoding="utf-8")
    (home / "kronika.toml").write_text('dm_channels = "@*"\n' + text, encoding="utf-8")
    assert json.loads(_kronika(home, "policies", "--json").stdout)["dm_channels"] == ["@*"]


def test_a_refused_remember_says_why_and_exits_6(home: Path) -> None:
    config = home / "kronika.toml"
    config.write_text('tenant = "acme"\n' + config.read_text(encoding="utf-8"), encoding="utf-8")
    # a code no timestamp or id can hold by chance (a microsecond reads ".214711")
    done = _kronika(home, "remember", "the", "safe", "code", "is", "quokka-4711", code=6)
    assert "not stored" in done.stderr and "acme keeps no facts" in done.stderr
    assert done.stdout == ""
    data = json.loads(_kronika(home, "remember", "a", "fact", "--json", code=6).stdout)
    assert data["outcome"] == "refused" and "acme keeps no facts" in data["policy"]
    assert "noted" in _kronika(home, "note", "notes are still kept").stdout
    audit = json.loads(_kronika(home, "logs", "audit", "--json").stdout)
    refused = [e for e in audit if e["outcome"] == "refused"]
    assert len(refused) == 2 and all("acme keeps no facts" in e["summary"] for e in refused)
    assert not [p for p in home.rglob("*") if p.is_file() and b"quokka" in p.read_bytes()]


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (('max_tier = "mid"', 'max_tier = "long"'), "max_tier must be 'short' or 'mid'"),
        (("store = false", 'store = "no"'), "store must be true or false"),
        (("mid = 365", "medium = 365"), "no tier 'medium'"),
        (('channels = ["hr-*"]', 'chanels = ["hr-*"]'), "no setting 'chanels'"),
    ],
)
def test_a_bad_policy_stops_every_command_naming_its_line(
    home: Path, edit: tuple[str, str], words: str
) -> None:
    config = home / "kronika.toml"
    text = config.read_text(encoding="utf-8")
    at = text.index(POLICIES)  # not the commented example `kronika init` wrote
    bad = text[:at] + POLICIES.replace(*edit, 1)
    config.write_text(bad, encoding="utf-8")
    number = bad.splitlines().index(edit[1]) + 1
    for command in (("policies", "list"), ("recall", "tea"), ("policies", "purge", "--dry-run")):
        done = _kronika(home, *command, code=2)
        assert f"kronika.toml line {number}:" in done.stderr and words in done.stderr
    done = _kronika(home, "policies", "--json", code=2)
    assert json.loads(done.stderr)["error"] == "ConfigError"


def _old_memories(home: Path) -> None:
    """A DM fact, a turn and a note said long ago (before the policies were written)."""
    config = home / "kronika.toml"
    kept = config.read_text(encoding="utf-8")
    config.write_text("", encoding="utf-8")
    settings = load_settings(home, environ={}, embedder="hashing")
    with build_memory(settings, clock=FrozenClock(LONG_AGO)) as memory:
        memory.remember("Carol's locker code is quagmirex", channel="dm:carol", scope="channel")
        memory.save_turn("s1", "user", "my old bike was a brompton zanzibar")
        memory.note("visited the zanzibar museum")
        memory.remember("Dave plays the oboe", channel="band", scope="channel")
    config.write_text(kept, encoding="utf-8")


def _digest(home: Path) -> dict[str, bytes]:
    """Every file of the memory; not ``.kronika/``, where opening the workspace keeps
    its record of the settings file as it is now (the test rewrote it by hand)."""
    return {
        p.relative_to(home).as_posix(): p.read_bytes()
        for p in sorted(home.rglob("*"))
        if p.is_file() and p.suffix != ".lock" and ".kronika" not in p.relative_to(home).parts
    }


def test_purge_dry_run_lists_and_changes_nothing_then_purge_removes_it_all(home: Path) -> None:
    _old_memories(home)
    before = _digest(home)
    dry = json.loads(_kronika(home, "policies", "purge", "--dry-run", "--json").stdout)
    assert dry["dry_run"] is True and dry["found"] == 3 and dry["forgotten"] == 0
    assert sorted(i["type"] for i in dry["items"]) == ["message", "note", "profile"]
    assert _digest(home) == before
    table = _kronika(home, "policies", "purge", "--dry-run").stdout
    assert "would forget 3 of 4" in table and "nothing was changed" in table
    assert _digest(home) == before

    done = _kronika(home, "policies", "purge")
    assert "forgot 3 of 4" in done.stdout and "index rows removed" in done.stdout
    for word in (b"quagmirex", b"zanzibar"):
        holding = [p for p in home.rglob("*") if p.is_file() and word in p.read_bytes()]
        assert holding == [], word
    assert "oboe" in _kronika(home, "show", "brain").stdout
    again = json.loads(_kronika(home, "policies", "purge", "--json").stdout)
    assert again["found"] == 0 and again["checked"] == 1
    assert "nothing to purge" in _kronika(home, "policies", "purge").stdout


def test_a_workspace_without_policies_says_so(tmp_path: Path) -> None:
    home = tmp_path / "plain"
    _kronika(home, "init")
    shown = _kronika(home, "policies").stdout
    assert "no [[policy]] rules" in shown and shown.count("for ever") == 3
    assert "no storage policies" in _kronika(home, "policies", "purge").stdout


def test_remember_and_note_in_a_never_stored_channel_exit_6(home: Path) -> None:
    done = _kronika(home, "remember", "payroll", "is", "late", "--channel", "hr-desk", code=6)
    assert "never store hr" in done.stderr and "hr-desk" in done.stderr
    _kronika(home, "note", "payroll", "again", "--channel", "hr-desk", code=6)
    kept = _kronika(home, "remember", "Ann", "likes", "figs", "--channel", "dm:ann")
    assert "kept as a mid-term note" in kept.stdout
    assert "no DMs in long-term memory" in kept.stderr
    assert not [p for p in home.rglob("*") if p.is_file() and b"payroll" in p.read_bytes()]
