"""Lessons are items of their agent's memory like any other: the lessons route shows
them only to a reader who may see them (core/visibility.py), on the server as in the
CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.server.conftest import Served

from kronika.core.lessons import exit_code

FAILED = exit_code(2, "error: relation users does not exist")


def test_the_lessons_route_shows_an_agents_lessons_only_to_readers_who_may_see_them(
    served: Served,
) -> None:
    memory = served.memories["acme"]
    learned = memory.record_outcome("deploy billing", "make deploy", FAILED, agent="alice")
    [lesson] = learned.learned

    owner = served.call("GET", "/v1/agents/alice/lessons")
    assert owner.status == 200, owner
    assert [x["id"] for x in owner.body["lessons"]] == [lesson.id]

    for headers in (
        {"X-Kronika-User": "bob"},
        {"X-Kronika-User": "bob", "X-Kronika-Channel": "general"},
    ):
        other = served.call("GET", "/v1/agents/alice/lessons", headers=headers)
        assert other.status == 200, other
        assert other.body["lessons"] == [], headers
        recalled = served.call(
            "POST", "/v1/agents/alice/recall", {"query": "deploy billing"}, headers=headers
        )
        assert lesson.id not in json.dumps(recalled.body)  # the same rule as recall

    retired = served.call(
        "GET", "/v1/agents/alice/lessons?include_retired=true", headers={"X-Kronika-User": "bob"}
    )
    assert retired.body["lessons"] == []


def test_a_named_user_gets_the_lessons_of_their_own_outcomes_over_rest(served: Served) -> None:
    memory = served.memories["acme"]
    bobs = memory.record_outcome(
        "deploy billing", "make deploy", FAILED, agent="alice", user="bob"
    ).learned[0]
    everyones = memory.record_outcome(
        "rotate the keys", "vault rotate", exit_code(1, "error: sealed"), agent="alice",
        scope="global",
    ).learned[0]  # fmt: skip

    def lessons(user: str | None) -> set[str]:
        headers = {"X-Kronika-User": user} if user else {}
        listed = served.call("GET", "/v1/agents/alice/lessons", headers=headers)
        assert listed.status == 200, listed
        recalled = served.call(
            "POST",
            "/v1/agents/alice/recall",
            {"query": "deploy billing rotate the keys", "types": ["reflection", "strategy"]},
            headers=headers,
        )
        assert recalled.status == 200, recalled
        shown = {x["id"] for x in listed.body["lessons"]}
        assert {h["item"]["id"] for h in recalled.body["hits"]} == shown, user
        return shown

    assert lessons("bob") == {bobs.id, everyones.id}
    assert lessons("carol") == {everyones.id}
    assert lessons(None) == {everyones.id}  # a caller naming no user: not bob's own


def test_kronika_lessons_lists_only_what_the_reader_may_see(tmp_path: Path) -> None:
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
    made = kronika(
        "lessons", "record", "deploy billing", "--action", "make deploy", "--exit-code", "2",
        "--stderr", "error: relation users does not exist", "--no-model",
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    mine = kronika("lessons", "--json")
    assert mine.returncode == 0, mine.stderr
    assert len(json.loads(mine.stdout)) == 1
    for who in (("--user", "bob"), ("--user", "bob", "--channel", "general")):
        other = kronika("lessons", "--json", *who)
        assert other.returncode == 0, other.stderr
        assert json.loads(other.stdout) == [], who
        served_task = kronika("lessons", "--json", "--task", "deploy billing", *who)
        assert json.loads(served_task.stdout) == [], who
