"""`kronika agents list|create|remove` and `init --agent`: a second agent from the
command line, under the same name rules as ``POST /v1/agents``."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest


def test_a_second_agent_is_created_used_and_listed(run) -> None:  # type: ignore[no-untyped-def]
    run("init")
    assert "unknown agent 'planner'" in run("remember", "--agent", "planner", "x", code=4)
    assert "created agent planner" in run("agents", "create", "planner")
    assert "already exists" in run("agents", "create", "planner")
    run("remember", "--agent", "planner", "the launch is on Friday")
    listed = json.loads(run("agents", "list", "--json"))
    assert listed == [
        {"agent": "default", "items": 0, "default": True},
        {"agent": "planner", "items": 1, "default": False},
    ]
    assert json.loads(run("agents", "--json")) == listed  # `agents` alone lists
    assert "Friday" in run("recall", "launch", "--agent", "planner")


def test_init_with_agent_makes_that_agent_too(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = run("init", "--agent", "planner")
    assert "created agent planner" in out
    assert (tmp_path / "ws" / "agents" / "planner" / "brain.md").is_file()
    assert (tmp_path / "ws" / "agents" / "default" / "brain.md").is_file()
    assert "already there: agent planner" in run("init", "--agent", "planner")


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("../etc", "invalid agent name"),
        ("_under", "invalid agent name"),
        ("a" * 65, "invalid agent name"),
        ("PLANNER", "only in case"),
    ],
)
def test_names_follow_the_rest_rules(run, name: str, says: str) -> None:  # type: ignore[no-untyped-def]
    run("init", "--agent", "planner")
    assert says in run("agents", "create", name, code=4)


def test_remove_says_what_goes_and_wants_yes(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    run("init", "--agent", "planner")
    run("remember", "--agent", "planner", "--key", "city", "Kraków")
    refused = run("agents", "remove", "planner", code=2)  # stdin is no terminal here
    assert "1 items from 1 files" in refused and "--yes" in refused
    assert (tmp_path / "ws" / "agents" / "planner").is_dir()
    done = run("agents", "remove", "planner", "--yes")
    assert "removed agent planner" in done
    assert not (tmp_path / "ws" / "agents" / "planner").exists()
    assert [a["agent"] for a in json.loads(run("agents", "--json"))] == ["default"]
    assert "nothing recalled" in run("recall", "Kraków", "--all-agents")
    audit = json.loads(run("logs", "audit", "--json"))
    assert audit[-1]["action"] == "remove_agent" and audit[-1]["agent"] == "planner"


def test_remove_refuses_the_default_and_unknown_agents(run) -> None:  # type: ignore[no-untyped-def]
    run("init")
    assert "default agent" in run("agents", "remove", "default", "--yes", code=2)
    assert "unknown agent 'nobody'" in run("agents", "remove", "nobody", "--yes", code=4)
    missing = run("agents", "remove", code=2)
    assert "required: NAME" in missing and "kronika agents remove --help" in missing
    assert "unrecognized arguments: x" in run("agents", "list", "x", code=2)


def _remove_at_a_terminal(home: Path, answer: str) -> tuple[int, str]:
    """`kronika agents remove planner` typed at a real terminal, answering ``answer``."""
    env = {**os.environ, "KRONIKA_HOME": str(home), "KRONIKA_EMBEDDER": "hashing"}
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "kronika", "agents", "remove", "planner"],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env=env,
    )
    os.close(follower)
    shown = b""
    while b"to remove it:" not in shown:
        shown += os.read(leader, 4096)
    os.write(leader, answer.encode() + b"\n")
    code = proc.wait(timeout=60)
    try:
        while chunk := os.read(leader, 4096):
            shown += chunk
    except OSError:  # the terminal closed with the process
        pass
    os.close(leader)
    return code, shown.decode()


def test_remove_at_a_terminal_asks_for_the_name(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    run("init", "--agent", "planner")
    home = tmp_path / "ws"
    code, shown = _remove_at_a_terminal(home, "no")
    assert code == 1 and "nothing removed" in shown and "0 items" in shown
    assert (home / "agents" / "planner").is_dir()
    code, shown = _remove_at_a_terminal(home, "planner")
    assert code == 0 and "removed agent planner" in shown
    assert not (home / "agents" / "planner").exists()
