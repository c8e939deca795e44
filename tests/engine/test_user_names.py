"""The user's name, read for recall, is the one the memory holds now: on every backend.

Recall keeps the user's names between recalls (:class:`kronika.engine.owner.UserNames`)
and reads them again when the index's items may have changed. Each test sees which
name recall reads the way a user does: a keyword search for "Which city does David
like?" finds the note "David fixed the bike" by the word "David", unless David is the
user, whose name is then read as "I" (and the note shares no word with the question).
Run on the Markdown workspace with its SQLite index and on PostgreSQL (the ``backend``
fixture), with two workers of one memory where it matters: the second must see the
first one's change at its next recall.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from backends import Backend
from kronika import Memory
from kronika.core.model import (
    ItemType,
    Layer,
    MemoryItem,
    Provenance,
    Reader,
    RecallFilter,
    Scope,
    Tier,
)
from kronika.engine.owner import NAME_READ, UserNames, names_of_the_user
from kronika.ports import ItemIndex, SourceState
from kronika.stores.sqlite import SqliteIndex
from kronika.testing import FrozenClock

NOTE = "{name} fixed the bike"
QUESTION = "Which city does {name} like?"
T0 = datetime(2025, 11, 1, 12, 0, tzinfo=UTC)


def named(memory: Memory, name: str, **how: object) -> bool:
    """Whether recall reads ``name`` as the user's: the note naming them is then no
    keyword match for a question naming them."""
    hits = memory.recall(QUESTION.format(name=name), mode="lexical", k=10, **how).hits  # type: ignore[arg-type]
    found = NOTE.format(name=name) in [hit.item.content for hit in hits]
    if not found:
        # the note is there to be found by any other word of it
        other = memory.recall("Who fixed the bike?", mode="lexical", k=10, **how).hits  # type: ignore[arg-type]
        assert NOTE.format(name=name) in [hit.item.content for hit in other]
    return not found


def test_a_changed_name_is_read_at_the_next_recall(backend: Backend, clock: FrozenClock) -> None:
    """``name: Tomasz``, then ``name: David``, then forgotten: each recall reads the name
    the memory holds at that moment, in the worker that wrote it and in another."""
    first = backend.open(clock=clock)
    second = backend.open("b", clock=clock)
    first.note(NOTE.format(name="David"))
    first.note(NOTE.format(name="Tomasz"))
    first.remember("Tomasz", key="name")
    for memory in (first, second):
        assert named(memory, "Tomasz")
        assert not named(memory, "David")
    first.remember("David", key="name")
    for memory in (second, first):  # the second asks first: nothing warmed it for it
        assert named(memory, "David")
        assert not named(memory, "Tomasz")
    first.forget(key="name")  # takes the name out of every text too: written again
    first.note(NOTE.format(name="David"))
    first.note(NOTE.format(name="Tomasz"))
    for memory in (first, second):
        assert not named(memory, "David")
        assert not named(memory, "Tomasz")
    second.remember("Tomasz", key="name")  # the other way round
    for memory in (first, second):
        assert named(memory, "Tomasz")
        assert not named(memory, "David")


def test_the_user_is_known_by_the_everyday_forms_of_their_name(backend: Backend) -> None:
    """``imię: Katarzyna`` is asked about as Kasia, ``name: Thomas`` as Tom, ``ім'я:
    Юра`` as Юрій; a form two names share (Alex: Alexander or Alexandra) says nothing
    of the other name, and another person's name stays theirs."""
    memory = backend.open()
    for name in ("Kasia", "Tom", "Юрій", "Sandra", "Tomasz"):
        memory.note(NOTE.format(name=name))
    memory.remember("Katarzyna", key="imię")
    memory.remember("Thomas", key="name")
    memory.remember("Юра", key="ім'я")
    assert named(memory, "Kasia")
    assert named(memory, "Tom")
    assert named(memory, "Юрій")
    assert not named(memory, "Tomasz")
    memory.forget(key="name")
    memory.forget(key="imię")
    memory.forget(key="ім'я")
    memory.remember("Alex", key="name")
    memory.note(NOTE.format(name="Sandra"))
    assert not named(memory, "Sandra")


def test_each_agent_and_reader_reads_their_own_users_name(
    backend: Backend, clock: FrozenClock
) -> None:
    """Two agents of one memory serve two people; a name kept for one is never the
    other's, in whichever order they ask. A name only its user may see is not read
    for another reader."""
    memory = backend.open(clock=clock)
    memory.create_agent("other")
    memory.create_agent("shared")
    for agent in ("default", "other"):
        for name in ("David", "Zofia"):
            memory.note(NOTE.format(name=name), agent=agent)
    memory.remember("David", key="name")
    memory.remember("Zofia", key="name", agent="other")
    for _ in range(2):  # asked again, from what recall keeps
        assert named(memory, "David") and not named(memory, "Zofia")
        assert named(memory, "Zofia", agent="other") and not named(memory, "David", agent="other")
    # Alice's name, hers alone, in a third agent: Bob does not read it
    for name in ("Alice", "David"):
        memory.note(NOTE.format(name=name), agent="shared", scope="global")
    memory.remember("Alice", key="name", agent="shared", scope="personal", user="alice")
    alice, bob = Reader(user="alice"), Reader(user="bob")
    for _ in range(2):
        assert named(memory, "Alice", agent="shared", reader=alice)
        assert not named(memory, "Alice", agent="shared", reader=bob)
    memory.remember("David", key="name", agent="shared", scope="personal", user="bob")
    assert named(memory, "David", agent="shared", reader=bob)
    assert not named(memory, "Alice", agent="shared", reader=bob)
    assert not named(memory, "David", agent="shared", reader=alice)


def test_two_tenants_read_their_own_users_names(
    backend: Backend, clock: FrozenClock, tmp_path: Path
) -> None:
    """Two tenants (on PostgreSQL sharing one database): each one's user has a name of
    their own, and neither reads the other's."""
    other = backend.another(tmp_path / "other")
    try:
        ours, theirs = backend.open(clock=clock), other.open(clock=clock)
        for memory in (ours, theirs):
            memory.note(NOTE.format(name="David"))
            memory.note(NOTE.format(name="Zofia"))
        ours.remember("David", key="name")
        assert named(ours, "David")
        assert not named(theirs, "David")
        theirs.remember("Zofia", key="name")
        for _ in range(2):
            assert named(ours, "David") and not named(ours, "Zofia")
            assert named(theirs, "Zofia") and not named(theirs, "David")
    finally:
        other.close()


@pytest.fixture(params=["sqlite", "postgres"])
def index(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ItemIndex]:
    if request.param == "sqlite":
        with SqliteIndex(tmp_path / "index.sqlite", embedding_model="m1", dim=4) as sqlite:
            yield sqlite
        return
    from kronika.stores.postgres.index import PostgresIndex

    url = request.getfixturevalue("postgres_url")
    with PostgresIndex(url, embedding_model="m1", dim=4) as postgres:
        yield postgres


def name_fact(n: int, value: str, agent: str, **fields: object) -> MemoryItem:
    base = MemoryItem(
        id=f"name-{agent}-{n}",
        agent=agent,
        content=f"name: {value}",
        type=ItemType.PROFILE,
        layer=Layer.LONG_TERM,
        tier=Tier.LONG,
        created_at=T0 + timedelta(minutes=n),
        updated_at=T0 + timedelta(minutes=n),
        provenance=Provenance(path="profile.md", line=n + 1),
        key="name",
        value=value,
    )
    return replace(base, **fields)  # type: ignore[arg-type]


def test_the_names_are_read_for_the_reader_alone(index: ItemIndex) -> None:
    """The index is asked for the reader's own name facts: however many newer ones other
    agents, tenants and users keep, the reader's name is found, and theirs are never
    read for them."""
    ours = [name_fact(0, "David", "ours", scope=Scope.GLOBAL)]
    ours.append(name_fact(1, "Alice", "ours", scope=Scope.PERSONAL, user="alice"))
    ours.append(name_fact(2, "Marek", "ours", scope=Scope.GLOBAL, tenant="elsewhere"))
    index.replace_source(SourceState("ours", "profile.md", "h", 1, 1), ours)
    crowd = [name_fact(n + 10, f"Person{n}", "crowd") for n in range(NAME_READ + 1)]
    index.replace_source(SourceState("crowd", "profile.md", "h", 1, 1), crowd)
    flt = RecallFilter(agents=("ours",), tenant="default", reader=Reader(user="bob"))
    assert names_of_the_user(index, flt) == ("david",)
    names = UserNames(index)
    assert names.of(flt) == ("david",)
    alice = RecallFilter(agents=("ours",), tenant="default", reader=Reader(user="alice"))
    # with the everyday forms of Alice (kronika.core.given_names)
    assert sorted(names.of(alice)) == ["alice", "allie", "ally", "david"]
    assert names.of(flt) == ("david",)  # kept apart per reader
    assert names.of(RecallFilter(agents=("crowd",), tenant="elsewhere")) == ()


def greet(memory: Memory, session: str, greeting: str, **where: object) -> None:
    """A session the user opens and the assistant answers with ``greeting``."""
    memory.save_turn(session, "user", "hi", **where)  # type: ignore[arg-type]
    memory.save_turn(session, "assistant", greeting, **where)  # type: ignore[arg-type]


def test_the_name_the_assistant_greets_the_user_by_is_theirs_when_no_fact_holds_one(
    backend: Backend, clock: FrozenClock
) -> None:
    """No fact keeps the user's name, and the assistant greets them "Привіт, Юрію!": a
    question naming Юрій (or Jurij, as Polish writes it) is the user's own, in this
    worker and another. A fact keyed as a name is the user's word on it: while one is
    kept, the greeting is not read."""
    first = backend.open(clock=clock)
    second = backend.open("b", clock=clock)
    for name in ("Юрій", "Jurij", "Tomasz"):
        first.note(NOTE.format(name=name))
    assert not named(first, "Юрій")
    greet(first, "s1", "Привіт, Юрію! Чим допомогти?")
    for memory in (first, second):
        assert named(memory, "Юрій")
        assert named(memory, "Jurij")
        assert not named(memory, "Tomasz")
    first.remember("Tomasz", key="name")
    for memory in (second, first):
        assert named(memory, "Tomasz")
        assert not named(memory, "Юрій")
    first.forget(key="name")
    first.note(NOTE.format(name="Tomasz"))
    assert named(first, "Юрій") and not named(first, "Tomasz")


def test_a_greeting_is_read_only_by_those_who_may_see_it(
    backend: Backend, clock: FrozenClock
) -> None:
    """Another agent's greeting, one said in another channel, and one in a session only
    its user may see name no one for the rest: "Hej Zosiu!" to agent ``other`` does not
    make Zofia the user of ``default``, nor does "Hi Priya!" in channel ``c2`` in
    channel ``c1``, nor Alice's personal greeting for Bob."""
    memory = backend.open(clock=clock)
    memory.create_agent("other")
    for agent in ("default", "other"):
        memory.note(NOTE.format(name="Zofia"), agent=agent)
    for channel in ("c1", "c2"):
        for name in ("Priya", "Alice"):
            memory.note(NOTE.format(name=name), channel=channel, scope="global")
    greet(memory, "z1", "Hej Zosiu!", agent="other")
    assert named(memory, "Zofia", agent="other")
    assert not named(memory, "Zofia")
    greet(memory, "p1", "Hi Priya!", channel="c2")
    assert not named(memory, "Priya", channel="c1")
    assert named(memory, "Priya", channel="c2")
    greet(memory, "a1", "Hello Alice!", scope="personal", user="alice", channel="c1")
    alice, bob = Reader(user="alice"), Reader(user="bob")
    assert named(memory, "Alice", channel="c1", reader=alice)
    assert not named(memory, "Alice", channel="c1", reader=bob)


def test_a_question_about_the_greeted_user_finds_their_fact(backend: Backend) -> None:
    """ "Де працює Юрій?" asked of Юрій's own memory, which keeps no name but holds his
    employer and notes that name him: his employer comes first, not a note sharing his
    name, in Ukrainian and in Polish."""
    memory = backend.open()
    greet(memory, "s1", "Привіт, Юрію!")
    memory.remember("Ajax Systems", key="компанія")
    memory.remember("Київ", key="місто")
    memory.note("Юрій має алергію на котячу шерсть.")
    memory.note("Юрій позичив брату Богдану 20 000 гривень до Нового року.")
    hits = memory.recall("Де працює Юрій?", k=3).hits
    assert hits[0].item.content == "компанія: Ajax Systems"
    hits = memory.recall("Gdzie teraz mieszka Jurij?", k=3).hits
    assert hits[0].item.content == "місто: Київ"
