"""A lesson is for the audience of the outcome it was drawn from, on every backend.

User A's private outcome teaches A alone; a team's outcome teaches the team. Every
read path — listing, the lessons served for a task, recall, get, a conversation's
payload, another worker's view — shows a reader exactly the lessons they may see.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from backends import Backend
from kronika import Memory
from kronika.core.lessons import exit_code
from kronika.core.model import ItemType, Reader, Scope
from kronika.errors import NotFound
from kronika.testing import FrozenClock
from kronika.workflows.session import Session

PRIVATE = "rotate the vault keys"
SHARED = "ship the quarterly ledger report"
LESSONS = [ItemType.REFLECTION, ItemType.STRATEGY]


def _readers(memory: Memory) -> dict[str, Reader]:
    return {
        "anna": memory.reader(user="anna", teams=["core"]),
        "bob": memory.reader(user="bob", teams=["core"]),
        "carl": memory.reader(user="carl", teams=["sales"]),
        "carl in general": memory.reader(user="carl", channel="general"),
    }


def _learn(memory: Memory) -> tuple[str, str]:
    """Anna's private lesson and the core team's; their ids."""
    who = _readers(memory)
    mine = memory.record_outcome(
        PRIVATE, "vault rotate", exit_code(1, "error: the vault is sealed"), reader=who["anna"]
    )
    ours = memory.record_outcome(
        SHARED,
        "make report",
        exit_code(2, "error: the ledger is missing"),
        reader=who["bob"],
        scope="team",
    )
    [private], [team] = mine.learned, ours.learned
    assert (private.owners.scope, private.owners.user) == (Scope.PERSONAL, "anna")
    assert (team.owners.scope, team.owners.team) == (Scope.TEAM, "core")
    return private.id, team.id


def test_a_lesson_reaches_exactly_the_readers_of_its_outcome_on_every_read_path(
    backend: Backend, clock: FrozenClock
) -> None:
    memory = backend.open(clock=clock)
    private, team = _learn(memory)
    expected = {"anna": {private, team}, "bob": {team}, "carl": set(), "carl in general": set()}
    for mem in (memory, backend.open("b", clock=clock)):
        for name, reader in _readers(mem).items():
            want = expected[name]
            listed = {x.id for x in mem.lessons(reader=reader, include_retired=True)}
            assert listed == want, name
            served = {
                h.item.id
                for task in (PRIVATE, SHARED)
                for h in mem.lessons_for(task, reader=reader)
            }
            assert served == want, name
            recalled = mem.recall("vault keys ledger report", k=50, types=LESSONS, reader=reader)
            assert {h.item.id for h in recalled.hits} == want, name
            everything = mem.recall("vault keys ledger report", k=50, reader=reader)
            assert {h.item.id for h in everything.hits} & {private, team} == want, name
            for lesson_id in {private, team}:
                if lesson_id in want:
                    assert mem.get(lesson_id, reader=reader).id == lesson_id
                else:
                    with pytest.raises(NotFound):
                        mem.get(lesson_id, reader=reader)
        assert {x.id for x in mem.lessons()} == {private, team}  # the owner, unrestricted


def test_a_conversation_carries_only_the_lessons_its_reader_may_see(
    backend: Backend, clock: FrozenClock
) -> None:
    memory = backend.open(clock=clock)
    private, team = _learn(memory)
    who = _readers(memory)
    asked = f"Please {PRIVATE} and {SHARED} again"
    for name, want in (("anna", {private, team}), ("bob", {team}), ("carl", set())):
        turn = Session(memory, llm=None, reader=who[name]).user(asked)
        assert {h.item.id for h in turn.lessons} == want, name
        system = turn.messages[0].content
        assert ("the vault is sealed" in system) == (private in want), name
        assert ("the ledger is missing" in system) == (team in want), name


def test_an_outcome_credits_and_reinforces_only_lessons_of_its_own_audience(
    backend: Backend, clock: FrozenClock
) -> None:
    memory = backend.open(clock=clock)
    private, _team = _learn(memory)
    bob = _readers(memory)["bob"]
    broken = exit_code(1, "error: the vault is sealed")
    again = memory.record_outcome(PRIVATE, "vault rotate", broken, reader=bob, served=[private])
    assert again.credited == () and again.reinforced == ()  # anna's lesson is not bob's
    [bobs] = again.learned
    assert bobs.id != private and bobs.owners.user == "bob"
    anna = {x.id: x for x in memory.lessons(reader=_readers(memory)["anna"])}
    assert anna[private].hurt == 0 and len(anna[private].evidence) == 1


def test_the_cli_learns_for_the_user_it_names(backend: Backend) -> None:
    backend.open()  # the workspace (and on PostgreSQL the tenant) exists
    backend.close()
    env = backend.environ()

    def kronika(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "kronika", *argv],
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )

    made = kronika(
        "lessons", "record", PRIVATE, "--action", "vault rotate", "--exit-code", "1",
        "--stderr", "error: the vault is sealed", "--no-model", "--user", "anna",
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    for who, count in ((("--user", "anna"), 1), (("--user", "bob"), 0), ((), 1)):
        listed = kronika("lessons", "--json", *who)
        assert listed.returncode == 0, listed.stderr
        assert listed.stdout.count('"id"') == count, who
        task = kronika("lessons", "--json", "--task", PRIVATE, *who)
        assert task.stdout.count('"id"') == count, who
