"""``Memory`` is one small object over named parts (``memory.proposals``,
``memory.sessions``, ``memory.links``, ``memory.lessons``, ``memory.prompt``,
``memory.admin``), not a stack of mixins; each part does its work through the public
API, over a real workspace, and the flat names (``memory.approve``) are the same calls."""

from __future__ import annotations

import inspect
from collections.abc import Iterator

import pytest

from kronika import Memory, build_memory
from kronika.core.alias import Alias
from kronika.core.lessons import exit_code
from kronika.core.model import LinkKind
from kronika.engine.changes import AppendTurn
from kronika.errors import InvalidInput, NotFound
from kronika.memory.base import MemoryContext
from kronika.settings import AgentPolicy, Settings
from kronika.testing import FrozenClock

PARTS = ("proposals", "sessions", "links", "lessons", "prompt", "admin")


@pytest.fixture
def careful(settings: Settings, clock: FrozenClock) -> Iterator[Memory]:
    """The default agent at autonomy 1: what it writes to itself waits for approval."""
    policy = {"default": AgentPolicy(autonomy=1)}
    with build_memory(settings.with_overrides(agents=policy), create=True, clock=clock) as mem:
        yield mem


def test_memory_is_one_object_not_a_mixin_stack(memory: Memory) -> None:
    assert len(Memory.__mro__) <= 3
    for name in PARTS:
        part = type(getattr(memory, name))
        assert part.__mro__ == (part, object), f"memory.{name} inherits: {part.__mro__}"
    assert MemoryContext.__mro__ == (MemoryContext, object)


def test_every_flat_name_calls_the_parts_verb_with_its_signature(memory: Memory) -> None:
    aliases = {n: a for n, a in vars(Memory).items() if isinstance(a, Alias)}
    assert {"approve", "load_session", "link", "lessons_for", "sync", "recall"} <= set(aliases)
    for name, alias in aliases.items():
        part = getattr(memory, alias.part)
        assert isinstance(part, _owner(alias)), (name, alias.part)
        flat, home = getattr(memory, name), getattr(part, alias.verb)
        assert flat == home, name  # the same bound method of the same part
        assert inspect.signature(flat) == inspect.signature(home), name


def _owner(alias: Alias[object, ..., object]) -> type:
    method = inspect.unwrap(alias.method)  # a context manager's verb: the function it wraps
    owner = method.__globals__[method.__qualname__.split(".")[0]]
    assert isinstance(owner, type)
    return owner


def test_a_write_at_autonomy_1_is_listed_by_memory_proposals_and_approved_there(
    careful: Memory,
) -> None:
    receipt = careful.remember(key="city", value="Kraków", source_agent="default")
    assert receipt.outcome == "proposed" and careful.facts() == []
    [waiting] = careful.proposals.list()
    assert waiting.id == receipt.proposal and "Kraków" in waiting.summary
    assert careful.proposals() == [waiting]  # the flat call, as before the part
    careful.proposals.approve(waiting.id)
    assert [f.value for f in careful.facts()] == ["Kraków"]
    assert careful.proposals.list() == []


def test_a_rejected_proposal_leaves_nothing(careful: Memory) -> None:
    pid = careful.remember(key="pet", value="a cat", source_agent="default").proposal
    assert pid is not None
    assert careful.proposals.reject(pid).status == "rejected"
    assert careful.proposals.list() == [] and careful.facts() == []


def test_memory_sessions_saves_turns_and_reads_them_back(memory: Memory) -> None:
    first = memory.sessions.save_turn("trip", "user", "We fly to Lisbon on Friday.")
    memory.sessions.save_turn("trip", "assistant", "Noted: Lisbon, Friday.")
    assert first == "trip_1" and first.outcome == "applied"
    turns = memory.sessions.load("trip")
    assert [t.content for t in turns] == ["We fly to Lisbon on Friday.", "Noted: Lisbon, Friday."]
    assert memory.load_session("trip") == turns
    assert [t.content for t in memory.sessions.last_turns(limit=1)] == ["Noted: Lisbon, Friday."]


def test_memory_links_adds_and_lists_links(memory: Memory) -> None:
    a = memory.remember(key="city", value="Kraków").item
    b = memory.note("Moved to Kraków for the new job").item
    assert a is not None and b is not None
    made = memory.links.add(b.id, a.id, "related")
    assert memory.links.list(a.id) == [made] == memory.links(a.id)
    assert made.kind is LinkKind.RELATED


def test_a_turn_is_linked_and_its_links_listed_by_the_turn_id_save_turn_gave(
    memory: Memory,
) -> None:
    fact = memory.remember(key="city", value="Kraków").item
    assert fact is not None
    said = memory.save_turn("move", "user", "I moved to Kraków last week")
    made = memory.links.add(said, fact.id, "related")
    turn = memory.get(said)
    assert {made.from_id, made.to_id} == {turn.id, fact.id}
    assert memory.links.list(said) == [made] == memory.links.list(turn.id)
    with pytest.raises(InvalidInput, match="itself"):
        memory.links.add(said, turn.id)
    with pytest.raises(NotFound, match="move_9"):
        memory.links.add("move_9", fact.id)


def test_memory_lessons_learns_from_an_outcome_and_serves_the_lesson(memory: Memory) -> None:
    report = memory.lessons.record_outcome(
        "deploy the billing service", "make deploy", exit_code(2, "relation users is missing")
    )
    [reflection] = report.learned
    assert [x.id for x in memory.lessons.list()] == [reflection.id]
    assert [h.item.id for h in memory.lessons.for_task("billing deploy")] == [reflection.id]
    assert memory.lessons() == memory.lessons.list()


def test_memory_prompt_shows_what_the_reader_may_see(memory: Memory) -> None:
    memory.remember(key="diet", value="vegetarian", scope="personal", user="ana")
    memory.remember(key="city", value="Kraków", scope="global")
    ana, bob = memory.as_reader(user="ana"), memory.as_reader(user="bob")
    assert "vegetarian" in ana.prompt.brain() and "vegetarian" not in bob.prompt.brain()
    assert "Kraków" in bob.prompt.blocks(query="where does he live")
    assert memory.format_for_prompt() == memory.prompt.blocks()


def test_memory_admin_audits_syncs_and_rebuilds(memory: Memory) -> None:
    memory.remember(key="city", value="Kraków")
    assert [e.target_agent for e in memory.admin.audit()] == ["default"]
    log = memory.workspace.agent_dir("default") / "memory" / "2026-11-22.md"
    log.write_text("# 2026-11-22\n\n## Retain\n\n- Written by hand: the cat is called Mruczek\n")
    report = memory.admin.sync("default")
    assert report.files_indexed == 1  # the hand-edited log, read again
    assert any("Mruczek" in i.content for i in memory.items())
    before = memory.count()
    memory.admin.reindex()
    assert memory.count() == before and memory.admin.stats()["items"] == before


def test_turns_waiting_for_approval_in_one_session_each_get_their_own_id(
    careful: Memory,
) -> None:
    """At autonomy 1 an agent's saved turns wait as proposals; each names the turn it
    would append, and two waiting turns of one session must not name the same one (or
    approving both would write two turns with one id)."""
    said = [
        careful.save_turn("trip", "user", text, source_agent="default")
        for text in ("We fly to Lisbon on Friday.", "Book a window seat.", "And a taxi.")
    ]
    assert [s.outcome for s in said] == ["proposed"] * 3
    assert len(set(said)) == 3, said
    first, second, third = said
    assert said[0].proposal is not None
    careful.proposals.reject(said[1].proposal or "")  # a gap must not bring an id back
    fourth = careful.save_turn("trip", "user", "Thanks.", source_agent="default")
    assert fourth not in (first, third)
    for waiting in careful.proposals.list():
        careful.proposals.approve(waiting.id)
    turns = careful.load_session("trip")
    ids = [i for t in turns for i in t.provenance.turn_ids]
    assert len(ids) == len(set(ids)) == 3, ids
    assert [t.content.split(": ", 1)[-1] for t in turns] == [
        "We fly to Lisbon on Friday.",
        "And a taxi.",
        "Thanks.",
    ]


def test_a_chat_that_mixes_written_and_proposed_turns_never_repeats_an_id(
    careful: Memory,
) -> None:
    """A chat at autonomy 1: the person's turns are written at once, the agent's wait
    for approval. A turn written while the agent's waits must not take a number a later
    proposal takes too, and approving in any order keeps every id once, growing along
    the file."""
    said = []
    for n in range(3):
        said.append(careful.save_turn("chat", "user", f"Question {n}?"))
        said.append(careful.save_turn("chat", "assistant", f"Answer {n}.", source_agent="default"))
    assert [s.outcome for s in said] == ["applied", "proposed"] * 3
    assert len(set(said)) == 6, said
    receipts = [careful.proposals.approve(w.id) for w in reversed(careful.proposals.list())]
    later = careful.save_turn("chat", "user", "One more?")
    turns = careful.load_session("chat")
    ids = [i for t in turns for i in t.provenance.turn_ids]
    assert len(ids) == len(set(ids)) == 7, ids
    numbers = [int(i.rsplit("_", 1)[1]) for i in ids]
    assert numbers == sorted(numbers), ids
    assert ids[-1] == later
    approved = [r.change.turn.turn_id for r in receipts if isinstance(r.change, AppendTurn)]
    assert approved == ids[3:6], (approved, ids)  # each receipt names the id it got
