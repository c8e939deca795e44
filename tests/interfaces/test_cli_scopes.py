"""The reading context on the command line: --tenant, --user, --channel, --team, --scope."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

TEAMS = '\n[teams]\ncore = ["anna", "bob"]\n'


def _listed(run, *context: str) -> set[str]:  # type: ignore[no-untyped-def]
    return {item["content"] for item in json.loads(run("list", "--json", *context))}


def test_who_wrote_what_where_decides_who_reads_it(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    run("init")
    with (tmp_path / "ws" / "kronika.toml").open("a", encoding="utf-8") as config:
        config.write(TEAMS)
    run("remember", "anna drinks tea", "--user", "anna", "--scope", "personal")
    run("remember", "the deploy is friday", "--user", "anna", "--channel", "general")
    run("note", "core ships the beta", "--user", "anna", "--scope", "team", "--team", "core")
    run("remember", "the office is in Lisbon", "--scope", "global")
    assert _listed(run, "--user", "anna", "--channel", "general") == {
        "anna drinks tea",
        "the deploy is friday",
        "core ships the beta",
        "the office is in Lisbon",
    }
    assert _listed(run, "--user", "bob") == {"core ships the beta", "the office is in Lisbon"}
    assert _listed(run, "--user", "carl", "--channel", "general") == {
        "the deploy is friday",
        "the office is in Lisbon",
    }
    assert _listed(run, "--user", "carl", "--team", "core") == {
        "core ships the beta",
        "the office is in Lisbon",
    }
    assert _listed(run, "--tenant", "globex", "--user", "anna") == set()
    assert len(_listed(run)) == 4  # no context: the owner reads everything
    assert _listed(run, "--user", "anna", "--scope", "team") == {"core ships the beta"}
    hits = json.loads(run("recall", "tea", "--json", "--user", "bob", "--mode", "lexical"))
    assert hits["hits"] == []
    assert "tea" in run("show", "brain", "--user", "anna")
    assert "tea" not in run("show", "prompt", "--user", "bob", "--query", "tea")
    assert "friday" not in run("history", "x", "--user", "bob", code=5)
    view = json.loads(run("export", "--user", "bob"))
    assert view["view"]["user"] == "bob" and view["view"]["teams"] == ["core"]
    contents = {i["content"] for i in view["agents"]["default"]["items"]}
    assert contents == {"core ships the beta", "the office is in Lisbon"}
    (tmp_path / "view.json").write_text(json.dumps(view), encoding="utf-8")
    err = run(
        "import", "export", str(tmp_path / "view.json"), "--home", str(tmp_path / "o"), code=9
    )
    assert "view" in err
    assert "needs a channel" in run("note", "x", "--scope", "channel", code=2)
    brain = run("show", "brain", "--scope", "global")
    assert "Lisbon" in brain and "tea" not in brain
    only_team = json.loads(run("export", "--scope", "team"))
    assert only_team["view"]["scopes"] == ["team"]
    assert {i["content"] for i in only_team["agents"]["default"]["items"]} == {
        "core ships the beta"
    }
    refused = run("export", "--markdown", str(tmp_path / "md"), "--user", "bob", code=2)
    assert "every reader's memories" in refused and not (tmp_path / "md").exists()


def test_a_process_reads_with_its_context(tmp_path: Path) -> None:
    env = {**os.environ, "KRONIKA_HOME": str(tmp_path / "ws"), "KRONIKA_EMBEDDER": "hashing"}

    def kronika(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "kronika", *argv],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )

    assert kronika("init").returncode == 0
    assert (
        kronika("remember", "a dm about salaries", "--user", "anna", "--channel", "dm").returncode
        == 0
    )
    found = kronika("recall", "salaries", "--user", "bob", "--channel", "general", "--json")
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["hits"] == []
    mine = kronika("recall", "salaries", "--user", "bob", "--channel", "dm", "--json")
    assert [h["content"] for h in json.loads(mine.stdout)["hits"]] == ["a dm about salaries"]


def test_the_owners_commands_read_as_a_reader_or_say_why_they_cannot(run) -> None:  # type: ignore[no-untyped-def]
    """agents, audit, usage and explain read as the reader the options name; stats,
    policies, jobs and doctor refuse them with a usage error naming what to leave out."""
    run("init")
    run("remember", "anna drinks tea", "--user", "anna", "--scope", "personal")
    mine = json.loads(run("list", "--json", "--user", "anna"))[0]["id"]
    assert json.loads(run("agents", "--json", "--user", "anna")) == [
        {"agent": "default", "items": 1, "default": True}
    ]
    assert json.loads(run("agents", "--json", "--user", "bob"))[0]["items"] == 0
    assert json.loads(run("agents", "--json", "--tenant", "globex")) == []
    assert "owner's" in run("agents", "create", "x", "--user", "bob", code=2)
    trail = json.loads(run("logs", "audit", "--json", "--user", "bob"))
    assert trail == [] and "tea" in run("logs", "audit", "--json", "--user", "anna")
    assert "tea" in run("explain", mine, "--json", "--user", "anna")
    assert "tea" not in run("explain", mine, "--user", "bob", code=5)
    assert json.loads(run("logs", "usage", "--json", "--tenant", "globex"))["rows"] == []
    owners = (("index", "stats"), ("policies", "list"), ("jobs", "list"), ("doctor",))
    for command in (*owners, ("policies",), ("jobs", "run", "decay")):
        said = run(*command, "--user", "bob", "--team", "core", code=2)
        named = " ".join(command[:2]) if command[0] != "doctor" else "doctor"
        named = "policies list" if command == ("policies",) else named
        assert f"`kronika {named}` reads the whole workspace as its owner" in said
        assert "leave out --user, --team" in said
    assert "default" in run("index", "stats", "--json")  # without them: the owner, as before
