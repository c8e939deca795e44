"""What recall reads of its candidates is the same whether the index answers each
question apart (SQLite) or everything at once (PostgreSQL's ``read_candidates``)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from tests.conformance.test_index_conformance import T0, Opener, item, state

from kronika.core.model import ItemType, Provenance, Reader, RecallFilter, Scope
from kronika.engine.candidates import CandidateReads
from kronika.ports import CandidateReader, FeatureRow, ItemTexts, UsageApart


@pytest.fixture(params=["sqlite", "postgres"])
def index(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[Any]:
    if request.param == "sqlite":
        ix = Opener("sqlite", str(tmp_path / "index.sqlite"))()
    else:
        ix = Opener("postgres", request.getfixturevalue("postgres_url"))()
    yield ix
    ix.close()


def _conversation() -> list[Any]:
    speakers = ["Ann", "Bob", "Bob", "Ann", "Bob", "Ann", "Ann", "Bob"]
    return [
        item(
            f"m{n}",
            f"turn {n} about tea",
            type=ItemType.MESSAGE,
            speaker=who,
            provenance=Provenance("s.md", n + 1, "s1" if n < 6 else "s2"),
            created_at=T0 + timedelta(minutes=n),
            importance=0.1 * n,
            # m5 is Bob's own: a reader who is not Bob must not see it, nor read it ahead
            scope=Scope.PERSONAL if n == 5 else Scope.GLOBAL,
            user="bob" if n == 5 else None,
        )
        for n, who in enumerate(speakers)
    ]


@pytest.mark.parametrize(
    "flt",
    [
        RecallFilter(),
        RecallFilter(speakers=("Bob",)),
        RecallFilter(reader=Reader(tenant="default", user="ann")),
        RecallFilter(reader=Reader(tenant="default", user="bob")),
    ],
    ids=["all", "one-speaker", "reader-ann", "reader-bob"],
)
def test_reads_ahead_answer_as_the_index_does(index: Any, flt: RecallFilter) -> None:
    index.replace_source(state("s.md"), _conversation())
    index.replace_source(state("facts.md"), [item("f1", "tea facts")])
    index.record_access(["m1", "f1"], T0 + timedelta(days=1))
    candidates = ["m3", "f1", "m0", "nope", "m6"]
    seeds = ["m3", "m0", "nope", "m7"]
    reads = CandidateReads(index, candidates, seeds, flt, 2)
    assert reads.links == index.neighbours(seeds, flt, 2)
    linked = sorted({n for pairs in reads.links.values() for n, _ in pairs})
    for wanted in (candidates, [*candidates, *linked], linked[::-1], ["m4", "zz", "m4"]):
        assert _with_usage(reads, wanted) == index.score_features(wanted).rows()
    for wanted in (seeds, ["m7", "m2", "f1", "nope", "m7"], linked):
        assert reads.get_items(wanted) == index.get_items(wanted)
        # the text alone, read ahead or not, is the items' own
        assert reads.texts(wanted) == {i.id: i.content for i in index.get_items(wanted)}
    # the one-round-trip path is the one under test on PostgreSQL
    assert isinstance(index, CandidateReader) == (type(index).__name__ == "PostgresIndex")


def _with_usage(reads: CandidateReads, wanted: list[str]) -> dict[str, FeatureRow]:
    """The reads' score features, their usage read apart when they left it unread."""
    features = reads.score_features(wanted)
    rows = features.rows()
    if features.usage_read:
        return rows
    usage = reads.usage(list(rows))
    assert set(usage) <= set(rows)
    return {
        item_id: (imp, created, *usage.get(item_id, (None, 0)), speaker, session)
        for item_id, (imp, created, _, _, speaker, session) in rows.items()
    }


def test_usage_read_apart_is_the_index_own(index: Any) -> None:
    """Where an index keeps usage apart (SQLite, once its columns are in memory), the
    score columns come without it and recall reads it for the few candidates that can
    still reach the top: together they are what ``score_features`` gives."""
    index.replace_source(state("s.md"), _conversation())
    index.record_access(["m1", "m4"], T0 + timedelta(days=1))
    index.record_access(["m4"], T0 + timedelta(days=2))
    wanted = ["m4", "zz", "m1", "m2", "m4"]
    for _ in range(3):  # SQLite answers the first searches, then loads its columns
        index.search_lexical("tea", RecallFilter(), 5)
        reads = CandidateReads(index, wanted, [], RecallFilter(), 1)
        assert _with_usage(reads, wanted) == index.score_features(wanted).rows()
    if isinstance(index, UsageApart):
        assert index.usage(wanted) == {
            "m4": ((T0 + timedelta(days=2)).timestamp(), 2),
            "m1": ((T0 + timedelta(days=1)).timestamp(), 1),
        }
        assert not index.score_columns(wanted).usage_read
    assert isinstance(index, UsageApart) == (type(index).__name__ == "SqliteIndex")


def test_text_alone_is_the_items_text(index: Any) -> None:
    """Recall weighs some candidates by their text without building whole items; an
    index that reads text alone gives what its whole items hold."""
    index.replace_source(state("s.md"), _conversation())
    wanted = ["m4", "nope", "m0", "m4", "m7"]
    whole = {i.id: i.content for i in index.get_items(wanted)}
    assert whole == {"m4": "turn 4 about tea", "m0": "turn 0 about tea", "m7": "turn 7 about tea"}
    if isinstance(index, ItemTexts):
        assert index.item_texts(wanted) == whole
    assert CandidateReads(index, wanted, [], RecallFilter(), 1).texts(wanted) == whole
    assert isinstance(index, ItemTexts) == (type(index).__name__ == "SqliteIndex")


def test_no_seeds_reads_no_neighbours(index: Any) -> None:
    index.replace_source(state("s.md"), _conversation())
    reads = CandidateReads(index, ["m1", "m2"], [], RecallFilter(), 3)
    assert reads.links == {}
    assert reads.score_features(["m2", "m1"]).ids == ("m2", "m1")
    assert [i.id for i in reads.get_items(["m2", "m1"])] == ["m2", "m1"]
