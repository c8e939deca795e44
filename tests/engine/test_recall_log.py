"""The recall log and the chart figures counted in the index, on every backend.

A generated workload (items of several users, channels and scopes over several days,
recalls made for several readers) is counted two ways: by the index
(:mod:`kronika.workflows.charts`) and by reading the reader's items whole, as the charts
did before (pages of ``Memory.items``), or from what each recall returned and the
visibility rule itself (:func:`kronika.core.visibility.visible`). They must agree for
every reader."""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from datetime import date, timedelta
from pathlib import Path

import pytest
from tests.conftest import START

from backends import Backend
from kronika import Memory
from kronika.core import charts
from kronika.core.model import Reader, RecallResult
from kronika.core.visibility import visible
from kronika.testing import FrozenClock
from kronika.workflows import charts as figures

USERS = (None, "ann", "bob")
CHANNELS = (None, "ops", "dev")
WORDS = ("Kraków", "pierogi", "Burek", "mate", "Lviv", "server", "deploy")
AGENT = "default"


def fill(memory: Memory, clock: FrozenClock, seed: int = 7) -> None:
    """Items of every user and channel (personal, channel and global ones) over 12 days."""
    rng = random.Random(seed)
    for n in range(60):
        at = START - timedelta(days=rng.randrange(12), hours=rng.randrange(24))
        user, channel = rng.choice(USERS), rng.choice(CHANNELS)
        scope = "global" if n % 9 == 0 else ("channel" if channel else "personal")
        text = f"{rng.choice(WORDS)} {rng.choice(WORDS)} note {n}"
        if n % 4 == 0:
            memory.remember(
                text, key=f"k{n}", at=at, user=user, channel=channel, scope=scope, agent=AGENT
            )
        else:
            memory.note(text, at=at, user=user, channel=channel, scope=scope, agent=AGENT)


def readers(memory: Memory) -> list[Reader | None]:
    return [None] + [memory.reader(user=u, channel=c) for u in USERS for c in CHANNELS]


Series = dict[str, list[int]]


def old_growth(view: Memory, days: list[date]) -> tuple[int, Series, Series]:
    """The growth chart as it was computed: every item the reader may see, read whole."""
    items = view.items(agent=AGENT, limit=100_000)
    first = days[0]
    recent = [i for i in items if charts.utc_day(i.created_at) >= first]
    return (
        len(items) - len(recent),
        charts.per_day_by(((i.created_at, i.tier.value) for i in recent), days),
        charts.per_day_by(((i.created_at, i.type.value) for i in recent), days),
    )


def test_growth_counted_in_the_index_matches_reading_every_item(
    backend: Backend, tmp_path: Path
) -> None:
    clock = FrozenClock(START)
    memory = backend.open(clock=clock)
    fill(memory, clock)
    days = charts.axis(charts.utc_day(clock.now()), 7)
    checked = 0
    for reader in readers(memory):
        view = memory if reader is None else memory.as_reader(reader)
        found = figures.growth(view, AGENT, days)
        before, by_tier, by_type = old_growth(view, days)
        assert (found.before, found.by_tier, found.by_type) == (before, by_tier, by_type), reader
        checked += sum(map(sum, found.by_tier.values()))
    assert checked > 20  # the window holds items for most readers


def expected_use(
    made: list[tuple[Reader | None, RecallResult]],
    viewer: Reader | None,
    view: Memory,
    days: list[date],
) -> tuple[list[int], list[int], list[int]]:
    """What counts for ``viewer`` (kronika.core.recall_log): its own recalls, and any
    that used an item it may see; only those items are counted."""
    seen_ids = {i.id for i in view.items(agent=AGENT, limit=100_000, include_superseded=True)}
    recalls: Counter[int] = Counter()
    uses: Counter[int] = Counter()
    items: defaultdict[int, set[str]] = defaultdict(set)
    for reader, result in made:
        n = charts.slot(START, days)
        assert n is not None
        own = viewer is None or (
            reader is not None
            and (reader.tenant, reader.user, reader.channel)
            == (viewer.tenant, viewer.user, viewer.channel)
        )
        used = [h.item.id for h in result.hits if h.item.id in seen_ids]
        if viewer is not None:  # the rule itself agrees with the reader's list
            assert all(visible(h.item, viewer) == (h.item.id in seen_ids) for h in result.hits)
        if own or used:
            recalls[n] += 1
        uses[n] += len(used)
        items[n].update(used)
    size = len(days)
    return (
        [recalls[n] for n in range(size)],
        [uses[n] for n in range(size)],
        [len(items[n]) for n in range(size)],
    )


def test_recall_use_counts_only_what_each_reader_may_see(backend: Backend) -> None:
    clock = FrozenClock(START)
    memory = backend.open(clock=clock)
    fill(memory, clock)
    rng = random.Random(3)
    made: list[tuple[Reader | None, RecallResult]] = []
    for _ in range(25):
        reader = rng.choice(readers(memory)[1:])
        query = f"{rng.choice(WORDS)} {rng.choice(WORDS)}"
        made.append((reader, memory.recall(query, agent=AGENT, k=4, reader=reader)))
    memory.recall("Burek", agent=AGENT, k=4, record_access=False)  # does not count
    days = charts.axis(charts.utc_day(clock.now()), 3)
    for viewer in readers(memory):
        view = memory if viewer is None else memory.as_reader(viewer)
        found = figures.recall_use(view, AGENT, days)
        assert (found.recalls, found.uses, found.items) == expected_use(made, viewer, view, days)
        entries = figures.recall_entries(view, AGENT)
        assert len(entries) == sum(found.recalls)
        for entry in entries:  # another reader's recall names neither them nor the query
            if viewer is not None and (entry.user, entry.channel) != (viewer.user, viewer.channel):
                assert entry.user is None and entry.channel is None and entry.query is None
    assert sum(figures.recall_use(memory, AGENT, days).recalls) == 25


def test_forgotten_items_leave_the_log_and_take_the_queries_with_them(
    backend: Backend,
) -> None:
    clock = FrozenClock(START)
    memory = backend.open(clock=clock, recall_log_queries=True)
    kept = memory.note("Burek lubi kości", agent=AGENT).item
    gone = memory.note("Burek ma chip 4711", agent=AGENT).item
    assert kept is not None and gone is not None
    memory.recall("Burek chip", agent=AGENT, k=5)
    memory.recall("kości", agent=AGENT, k=1)
    before = figures.recall_entries(memory, AGENT)
    assert [e.query for e in before] == ["Burek chip", "kości"]
    assert gone.id in before[0].item_ids
    memory.forget(gone.id, agent=AGENT)
    after = figures.recall_entries(memory, AGENT)
    assert [e.query for e in after] == [None, "kości"]  # it led to what was forgotten
    assert all(gone.id not in e.item_ids for e in after)
    assert kept.id in after[0].item_ids
    other = backend.open("b")  # a worker that opens it afresh finds it gone too
    assert gone.id not in str(figures.recall_entries(other, AGENT))
    if not backend.database_url:  # no readable byte of the query is left in the files
        files = sorted(backend.home().glob("index.sqlite*"))
        assert files and all(b"Burek chip" not in f.read_bytes() for f in files)


def test_queries_are_kept_only_when_asked_and_never_a_secret(backend: Backend) -> None:
    clock = FrozenClock(START)
    memory = backend.open(clock=clock)
    memory.note("deploy key rotated", agent=AGENT)
    memory.recall("deploy key sk-abcdefghijklmnopqrstuvwxyz0123456789", agent=AGENT)
    assert [e.query for e in figures.recall_entries(memory, AGENT)] == [None]
    asking = backend.open("b", clock=clock, recall_log_queries=True, secrets="allow")
    asking.recall("deploy", agent=AGENT)
    asking.recalls.flush()  # another process's entries are written by the next of its own
    refusing = backend.open("c", clock=clock, recall_log_queries=True, secrets="refuse")
    refusing.recall("deploy sk-abcdefghijklmnopqrstuvwxyz0123456789", agent=AGENT)
    queries = [e.query for e in figures.recall_entries(refusing, AGENT)]
    assert queries == [None, "deploy", "deploy [secret: openai-key]"]


def test_the_log_keeps_recall_log_days_and_none_at_0(backend: Backend) -> None:
    clock = FrozenClock(START)
    memory = backend.open(clock=clock, recall_log_days=10)
    memory.note("Kraków", agent=AGENT)
    memory.recall("Kraków", agent=AGENT, now=START - timedelta(days=30))
    memory.recalls.flush()  # written; the next process prunes it with its first write
    again = backend.open("b", clock=clock, recall_log_days=10)
    again.recall("Kraków", agent=AGENT)
    assert [e.at for e in figures.recall_entries(again, AGENT)] == [START]
    off = backend.open("c", clock=clock, recall_log_days=0)
    off.recall("Kraków", agent=AGENT)
    assert len(figures.recall_entries(off, AGENT)) == 1


@pytest.mark.parametrize("k", [1, 3])
def test_an_entry_names_the_hits_best_first(backend: Backend, k: int) -> None:
    memory = backend.open(clock=FrozenClock(START))
    for word in WORDS:
        memory.note(f"{word} one", agent=AGENT)
    result = memory.recall("Kraków pierogi Burek", agent=AGENT, k=k)
    (entry,) = figures.recall_entries(memory, AGENT)
    assert entry.item_ids == tuple(h.item.id for h in result.hits) and entry.hits == k
    assert (entry.agent, entry.user, entry.channel) == (AGENT, None, None)


def test_a_log_that_cannot_be_written_never_fails_a_recall(
    memory: Memory, caplog: pytest.LogCaptureFixture
) -> None:
    import sqlite3

    memory.note("Kraków", agent=AGENT)
    with sqlite3.connect(memory.settings.home / "index.sqlite") as conn:
        conn.execute("DROP TABLE recall_log_items")  # damage of the log alone
    for _ in range(70):  # past a batch: the write fails
        assert memory.recall("Kraków", agent=AGENT).hits
    assert "the recall log could not be written" in caplog.text
    memory.close()  # and closing does not fail either
