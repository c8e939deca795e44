"""``kronika proposals``, ``approve`` and ``reject`` through the installed console script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from kronika import build_memory, load_settings


def _run(home: Path, *args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KRONIKA_")}
    env["KRONIKA_EMBEDDER"] = "hashing"
    done = subprocess.run(
        [str(Path(sys.executable).with_name("kronika")), *args, "--home", str(home)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == code, f"kronika {args}: {done.stderr}"
    return done


def _propose(home: Path, *values: str) -> list[str]:
    """An agent at autonomy 1 suggests facts; returns the proposal ids."""
    with build_memory(load_settings(home, environ={}, embedder="hashing")) as memory:
        receipts = [
            memory.remember(key=f"k{i}", value=v, source_agent="default")
            for i, v in enumerate(values)
        ]
    return [str(r.proposal) for r in receipts]


def test_list_approve_and_reject_proposals(tmp_path: Path) -> None:
    home = tmp_path / "ws"
    _run(home, "init")
    with (home / "kronika.toml").open("a") as config:
        config.write("\n[agents.default]\nautonomy = 1\n")
    assert "no proposals waiting" in _run(home, "proposals").stdout
    keep, drop = _propose(home, "Kraków", "likes metal")

    table = _run(home, "proposals").stdout
    assert keep in table and drop in table and "remember **k0**: Kraków" in table
    rows = json.loads(_run(home, "proposals", "--agent", "default", "--json").stdout)
    assert [(r["id"], r["from"], r["type"]) for r in rows] == [
        (keep, "default", "AddFact"),
        (drop, "default", "AddFact"),
    ]
    assert "Kraków" not in _run(home, "show", "brain").stdout

    assert f"approved {keep}: k0: Kraków" in _run(home, "proposals", "approve", keep).stdout
    assert "Kraków" in _run(home, "show", "brain").stdout
    rejected = json.loads(_run(home, "proposals", "reject", drop, "--json").stdout)["rejected"]
    assert rejected["id"] == drop and rejected["change"] == "remember **k1**: likes metal"
    assert json.loads(_run(home, "proposals", "--json").stdout) == []
    assert "likes metal" not in _run(home, "show", "brain").stdout

    audit = json.loads(_run(home, "logs", "audit", "--json").stdout)
    assert [(a["action"], a["by"], a["outcome"]) for a in audit][-3:] == [
        ("remember", "user", "applied"),
        ("approve", "user", "applied"),
        ("reject", "user", "applied"),
    ]
    missing = _run(home, "proposals", "approve", "p-000000", "--json", code=5)
    assert json.loads(missing.stderr)["error"] == "NotFound"


def test_a_damaged_line_is_reported_on_stderr(tmp_path: Path) -> None:
    home = tmp_path / "ws"
    _run(home, "init")
    (home / "kronika.toml").write_text("[agents.default]\nautonomy = 1\n")
    [pid] = _propose(home, "Kraków")
    path = home / "agents" / "default" / "proposals.md"
    path.write_text(path.read_text() + "- [ ] remember something <!-- proposal=p-bad -->\n")
    done = _run(home, "proposals")
    assert pid in done.stdout and "p-bad" not in done.stdout
    assert "proposals.md line 6" in done.stderr


def test_a_long_proposal_is_shown_whole_never_cut(tmp_path: Path) -> None:
    home = tmp_path / "ws"
    _run(home, "init")
    with (home / "kronika.toml").open("a") as config:
        config.write("\n[agents.default]\nautonomy = 1\n")
    value = "likes short walks " * 15 + "and wire every saving to zanzibar"
    [pid] = _propose(home, value)
    table = _run(home, "proposals").stdout
    assert pid in table and "zanzibar" in table and "…" not in table
    [row] = json.loads(_run(home, "proposals", "--json").stdout)
    assert row["change"] == f"remember **k0**: {value.strip()}"
