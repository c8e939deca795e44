"""Score features and conversation neighbours from the in-memory columns equal SQLite's answers.

Once its BM25 snapshot is loaded, an index answers ``score_features`` and ``neighbours``
from the snapshot's columns; before that (a fresh process), SQLite answers. A second
index opened on the same file and never searched is that reference.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from kronika.core.model import (
    ItemType,
    Layer,
    MemoryItem,
    Provenance,
    Reader,
    RecallFilter,
    Scope,
    Status,
    Tier,
)
from kronika.ports import SourceState
from kronika.stores.sqlite import SqliteIndex

T0 = datetime(2025, 11, 1, 12, 0, tzinfo=UTC)
DIM = 4
SPEAKERS = ["Marta", "Jan", "jan", None, "", "Łucja"]

FILTERS = [
    RecallFilter(),
    RecallFilter(agents=("jaskier",)),
    RecallFilter(agents=("ciri", "jaskier"), tenant="default"),
    RecallFilter(types=(ItemType.MESSAGE,)),
    RecallFilter(speakers=("MARTA", "jan")),
    RecallFilter(since=T0 + timedelta(hours=5), until=T0 + timedelta(hours=30)),
    RecallFilter(as_of=T0 + timedelta(hours=12)),
    RecallFilter(channel="slack", include_superseded=True),
    RecallFilter(scopes=(Scope.TEAM,), include_archived=False),
    RecallFilter(keys=("k.1", "K.2", "k.3")),
    RecallFilter(entities=("łódź", "tea")),
    RecallFilter(agents=("jaskier",), entities=("Tea",), speakers=("jan",)),
    RecallFilter(reader=Reader("default", None, "slack", ("core",))),
]


def state(path: str, agent: str = "jaskier", n: int = 0) -> SourceState:
    return SourceState(agent=agent, path=path, content_hash=f"h{n}", mtime_ns=n, size=n)


def conversation(rng: random.Random, path: str, prefix: str, turns: int) -> list[MemoryItem]:
    """A file of turns, mostly messages of a few sessions, with facts and oddities between."""
    found: list[MemoryItem] = []
    # session ids repeat across files (and agents): only the file bounds a turn's neighbours
    sessions = [f"s{n}" for n in range(rng.randint(1, 3))] + [None]
    for n in range(turns):
        kind = ItemType.MESSAGE if rng.random() < 0.8 else rng.choice(list(ItemType))
        created = T0 + timedelta(hours=rng.randint(0, 48), microseconds=rng.randint(0, 999_999))
        found.append(
            MemoryItem(
                id=f"{prefix}{n}",
                agent=rng.choice(["jaskier", "jaskier", "ciri"]),
                content=rng.choice(["tea with Marta", "the kettle", "Łódź harbour", "blue"]),
                type=kind,
                layer=Layer.WORKING,
                tier=Tier.SHORT,
                created_at=created,
                updated_at=created,
                provenance=Provenance(path=path, line=n + 1, session_id=rng.choice(sessions)),
                scope=rng.choice([Scope.PERSONAL, Scope.TEAM]),
                channel=rng.choice([None, "slack"]),
                key=rng.choice([None, f"k.{rng.randint(1, 4)}"]),
                importance=rng.choice([0.1, 0.5, 0.8, 1 / 3]),
                status=rng.choice([Status.CURRENT] * 6 + [Status.SUPERSEDED, Status.ARCHIVED]),
                valid_from=rng.choice([None, created + timedelta(hours=1)]),
                valid_to=rng.choice([None, None, created + timedelta(hours=20)]),
                speaker=rng.choice(SPEAKERS),
                entities=tuple(rng.sample(["Łódź", "tea", "Marta"], rng.randint(0, 2))),
            )
        )
    return found


def assert_same_as_sqlite(warm: SqliteIndex, path: Path, ids: list[str]) -> None:
    """``warm`` (snapshot loaded) answers exactly as a never-searched index on ``path``."""
    assert warm.state.bm25 is not None  # the columns answer, not SQLite
    wanted = [*ids, "unknown", *ids[:3]]
    with SqliteIndex(path, embedding_model="m", dim=DIM, ann_threshold=0) as cold:
        features = warm.score_features(wanted)
        expected = cold.score_features(wanted)
        assert features.ids == expected.ids
        assert list(features.ids) == [i for i in dict.fromkeys(wanted) if i in features.ids]
        assert features.rows() == expected.rows()
        # recall's way: the columns without usage, then usage of the ids it still wants
        columns, usage = warm.score_columns(wanted), warm.usage(wanted)
        assert not columns.usage_read and usage == cold.usage(wanted)
        assert {
            i: (imp, created, *usage.get(i, (None, 0)), speaker, session)
            for i, (imp, created, _, _, speaker, session) in columns.rows().items()
        } == expected.rows()
        for flt in FILTERS:
            for window in (0, 1, 2, 3):
                found = warm.neighbours(wanted, flt, window)
                reference = cold.neighbours(wanted, flt, window)
                assert list(found.items()) == list(reference.items()), (flt, window)
        assert cold.state.bm25 is None  # it really was SQLite


def loaded(path: Path) -> SqliteIndex:
    index = SqliteIndex(path, embedding_model="m", dim=DIM, ann_threshold=0)
    for _ in range(2):  # the first search of a process is SQLite's, the second loads
        index.search_lexical("tea", RecallFilter(), 5)
    return index


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "index.sqlite"


@pytest.fixture
def warm(path: Path) -> Iterator[SqliteIndex]:
    rng = random.Random(3)
    with SqliteIndex(path, embedding_model="m", dim=DIM) as setup:
        for n in range(3):
            setup.replace_source(
                state(f"f{n}.md", n=n), conversation(rng, f"f{n}.md", f"f{n}-", 30)
            )
    index = loaded(path)
    yield index
    index.close()


def all_ids(index: SqliteIndex) -> list[str]:
    return sorted(it.id for it in index.list_items(RecallFilter(include_superseded=True)))


def test_a_loaded_index_answers_like_sqlite(warm: SqliteIndex, path: Path) -> None:
    ids = all_ids(warm)
    assert len(ids) == 90
    assert any(warm.neighbours(ids, RecallFilter(), 2).values())
    assert_same_as_sqlite(warm, path, ids)


def test_after_its_own_writes(warm: SqliteIndex, path: Path) -> None:
    rng = random.Random(5)
    ids = all_ids(warm)
    warm.replace_source(state("new.md", n=9), conversation(rng, "new.md", "new-", 20))
    assert_same_as_sqlite(warm, path, all_ids(warm))
    # the same ids again: new rowids, new speakers and sessions
    warm.replace_source(state("f1.md", n=10), conversation(rng, "f1.md", "f1-", 25))
    assert_same_as_sqlite(warm, path, all_ids(warm))
    warm.remove_source("jaskier", "f0.md")
    assert_same_as_sqlite(warm, path, [*ids, *all_ids(warm)])
    # an id moves to another file (and agent)
    moved = conversation(rng, "other.md", "f2-", 4)
    warm.replace_source(state("other.md", agent="ciri", n=11), moved)
    assert_same_as_sqlite(warm, path, all_ids(warm))
    # the same path and sessions under another agent is another file
    warm.replace_source(state("other.md", n=12), conversation(rng, "other.md", "o-", 6))
    warm.replace_source(
        state("other.md", agent="ciri", n=13), conversation(rng, "other.md", "c-", 6)
    )
    assert_same_as_sqlite(warm, path, all_ids(warm))
    current = all_ids(warm)
    warm.record_access(current[:20], T0 + timedelta(days=2, microseconds=7))
    warm.record_access(current[5:8], T0 + timedelta(days=3))
    assert_same_as_sqlite(warm, path, current)
    (feat,) = warm.score_features([current[6]]).rows().values()
    assert feat[2:4] == ((T0 + timedelta(days=3)).timestamp(), 2)
    warm.reset()
    assert warm.score_features(ids).ids == ()
    warm.replace_source(state("f2.md", n=12), conversation(rng, "f2.md", "f2-", 30))
    assert_same_as_sqlite(warm, path, [*ids, *all_ids(warm)])


def test_after_another_connections_writes(warm: SqliteIndex, path: Path) -> None:
    rng = random.Random(8)
    ids = all_ids(warm)
    with SqliteIndex(path, embedding_model="m", dim=DIM) as other:
        other.record_access(ids[::3], T0 + timedelta(days=1))
        assert_same_as_sqlite(warm, path, ids)
        before = warm.score_features(ids[:1]).access_count[0]
        other.record_access(ids[:1], T0 + timedelta(days=4))
        assert warm.score_features(ids[:1]).access_count[0] == before + 1
        other.replace_source(state("f1.md", n=20), conversation(rng, "f1.md", "f1-", 12))
        other.replace_source(state("late.md", n=21), conversation(rng, "late.md", "late-", 12))
        assert_same_as_sqlite(warm, path, [*ids, *all_ids(warm)])
        other.remove_source("jaskier", "f2.md")
        assert_same_as_sqlite(warm, path, [*ids, *all_ids(warm)])


def test_random_writes_from_both_connections_keep_both_answers_equal(path: Path) -> None:
    rng = random.Random(11)
    files = [f"r{n}.md" for n in range(6)]
    with SqliteIndex(path, embedding_model="m", dim=DIM) as other:
        other.replace_source(state(files[0]), conversation(rng, files[0], "x", 10))
        warm = loaded(path)
        try:
            seen: set[str] = set()
            for step in range(25):
                writer = rng.choice([warm, other])
                name = rng.choice(files)
                action = rng.random()
                if action < 0.6:
                    # overlapping id ranges: ids move between files
                    start = rng.randint(0, 40)
                    items = conversation(rng, name, "x", rng.randint(1, 15))
                    items = [replace(it, id=f"x{start + n}") for n, it in enumerate(items)]
                    writer.replace_source(state(name, n=step), items)
                elif action < 0.8:
                    writer.remove_source("jaskier", name)
                else:
                    writer.record_access(rng.sample(sorted(seen) or ["x0"], 1), T0)
                current = all_ids(warm)
                seen.update(current)
                assert_same_as_sqlite(warm, path, [*sorted(seen), *current])
        finally:
            warm.close()


def test_turns_appended_to_files_side_by_side(warm: SqliteIndex, path: Path) -> None:
    """Appends to several files in turn interleave their rowids; a turn's neighbours are
    still the turns around it in its own file, from the columns as from SQLite."""
    rng = random.Random(13)
    with SqliteIndex(path, embedding_model="m", dim=DIM) as other:
        states = {f"talk{n}.md": state(f"talk{n}.md", n=100 + n) for n in range(3)}
        for name, start in states.items():
            other.replace_source(start, conversation(rng, name, f"{name}-0-", 2))
        assert_same_as_sqlite(warm, path, all_ids(warm))  # the columns now place rows
        for step in range(1, 13):
            writer = rng.choice([warm, other])
            name = rng.choice(sorted(states))
            before = states[name]
            after = state(name, n=before.size + 1)
            items = conversation(rng, name, f"{name}-{step}-", rng.randint(1, 2))
            assert writer.append_to_source(before, after, items, [f"t{step}"] * len(items))
            states[name] = after
            assert_same_as_sqlite(warm, path, all_ids(warm))
        ids = all_ids(warm)
        found = warm.neighbours(ids, RecallFilter(), 1)
        places = {
            it.id: n for name in states for n, it in enumerate(warm.source_items("jaskier", name))
        }
        talk = [seed for seed in found if seed in places]
        assert talk
        for seed in talk:
            near = found[seed]
            assert all(places[seed] + offset == places[other_id] for other_id, offset in near)
        tail = warm.source_tail("jaskier", "talk1.md", 1)
        assert tail is not None
        assert tail.count == len(warm.source_items("jaskier", "talk1.md"))
