"""A recall asked as one :class:`RecallQuery`: made and checked once, the same answer
as the keyword arguments, and refused with a clear error when it is out of bounds."""

from __future__ import annotations

import dataclasses
import re
from datetime import UTC, datetime

import pytest

from kronika import Memory
from kronika.core.model import ItemType, Scope
from kronika.core.query import OPTIONS, RecallQuery
from kronika.errors import InvalidQuery


def test_a_query_object_finds_what_the_keywords_find(memory: Memory) -> None:
    memory.remember("Peter likes green tea", key="peter drink")
    memory.remember("Ana plays the cello")
    by_words = memory.recall("tea", k=3, types=["fact"], record_access=False)
    asked = RecallQuery("tea", k=3, types=["fact"], record_access=False)
    by_query = memory.recall(asked)
    assert [h.item.id for h in by_query.hits] == [h.item.id for h in by_words.hits]
    assert by_query.hits and "green tea" in by_query.hits[0].item.content


def test_a_query_is_frozen_hashable_and_keeps_its_lists_as_tuples() -> None:
    asked = RecallQuery("tea", types=["fact"], scopes=["team"], keys=["drink"])
    assert asked.types == (ItemType.FACT,)
    assert asked.scopes == (Scope.TEAM,)
    assert asked.keys == ("drink",)
    assert hash(asked) == hash(
        RecallQuery("tea", types=("fact",), scopes=("team",), keys=("drink",))
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        asked.k = 5  # type: ignore[misc]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"k": 0}, "k must be between 1 and 10000"),
        ({"k": "5"}, "k must be a whole number"),
        ({"budget_tokens": 10**8}, "the token budget must be between 1 and 10000000"),
        ({"mode": "fuzzy"}, "unknown recall mode 'fuzzy'"),
        ({"since": 5}, "since must be text or a datetime"),
        ({"as_of": datetime(2025, 1, 1)}, "as_of must be a datetime with a time zone"),
        ({"types": ["dream"]}, "'dream' is not a valid ItemType"),
        ({"scopes": "team"}, "scopes must be a list of texts"),
        ({"entities": "Peter"}, "entities must be a list of texts"),
        ({"include_superseded": "yes"}, "include_superseded must be True or False"),
        ({"channel": 7}, "the channel must be text"),
    ],
)
def test_a_query_out_of_bounds_is_refused_when_it_is_made(
    options: dict[str, object], message: str
) -> None:
    with pytest.raises(InvalidQuery, match=message):
        RecallQuery("tea", **options)  # type: ignore[arg-type]


def test_a_time_it_cannot_read_is_refused_when_the_recall_reads_it(memory: Memory) -> None:
    asked = RecallQuery("tea", since="the day after never")
    with pytest.raises(InvalidQuery):
        memory.recall(asked)


def test_options_beside_a_query_object_are_refused_not_dropped(memory: Memory) -> None:
    with pytest.raises(InvalidQuery, match="give k, since in the RecallQuery, not beside it"):
        memory.recall(RecallQuery("tea"), k=3, since="30d")
    # the asker's context goes beside it
    now = datetime(2030, 1, 1, tzinfo=UTC)
    assert memory.recall(RecallQuery("tea", record_access=False), now=now).hits == ()


def test_the_keyword_signature_names_every_option_of_the_query() -> None:
    import inspect

    keywords = set(inspect.signature(Memory.recall).parameters) - {"self"}
    assert set(OPTIONS) <= keywords
    # what is beside the query is the asker's context, never a question
    assert keywords - set(OPTIONS) == {"now", "query_vector", "reader"}
    defaults = {f.name: f.default for f in dataclasses.fields(RecallQuery) if f.name != "query"}
    signature = inspect.signature(Memory.recall).parameters
    assert {name: signature[name].default for name in defaults} == defaults


def test_the_llm_tool_asks_the_same_query_and_answers_a_bad_one_with_its_error(
    memory: Memory,
) -> None:
    from kronika.workflows.tools import call_tool

    memory.remember("Peter likes green tea", key="peter drink")
    found = call_tool(memory, "default", "recall", {"query": "green tea", "k": 2})
    assert found["ok"] and "green tea" in found["results"][0]["content"]
    bad = call_tool(memory, "default", "recall", {"query": "tea", "since": "the day after never"})
    assert bad["ok"] is False and bad["error"]


def test_the_python_api_page_lists_every_option_with_its_default() -> None:
    from pathlib import Path

    page = (Path(__file__).parents[2] / "docs" / "python-api.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `(\w+)` \| ([^|]+) \|", page, re.M))
    for f in dataclasses.fields(RecallQuery):
        shown = rows[f.name].strip()
        if f.name == "query":
            assert shown == "(required)"
        else:
            assert shown == f"`{f.default!r}`".replace("'", '"'), f.name


def test_one_constructor_makes_the_query_of_a_call_from_its_arguments() -> None:
    # Memory.recall and Client.recall both hand their arguments to RecallQuery.from_call
    arguments = {name: f.default for name, f in RecallQuery.__dataclass_fields__.items()}
    arguments |= {"k": 4, "since": "30d", "types": ["fact"], "now": None, "reader": None}
    asked = RecallQuery.from_call("tea", arguments)
    assert asked == RecallQuery("tea", k=4, since="30d", types=["fact"])
    whole = RecallQuery("coffee", k=2)
    plain = {name: f.default for name, f in RecallQuery.__dataclass_fields__.items()}
    assert RecallQuery.from_call(whole, plain) is whole
    with pytest.raises(InvalidQuery, match="give k in the RecallQuery"):
        RecallQuery.from_call(whole, plain | {"k": 3})
    with pytest.raises(TypeError, match="budget_tokens"):
        RecallQuery.from_call("tea", {n: v for n, v in plain.items() if n != "budget_tokens"})


def test_a_query_s_times_go_into_json_in_utc_to_the_microsecond() -> None:
    from datetime import timedelta, timezone

    kyiv = timezone(timedelta(hours=2))
    asked = RecallQuery(
        "tea",
        since=datetime(2025, 11, 30, 1, 30, 0, 250000, tzinfo=kyiv),
        as_of=datetime(2024, 2, 29, 12, 0, tzinfo=UTC),
        until="yesterday",
    )
    body = asked.as_json()
    assert body["since"] == "2025-11-29T23:30:00.250000Z"
    assert body["as_of"] == "2024-02-29T12:00:00Z"
    assert body["until"] == "yesterday"
    assert datetime.fromisoformat(body["since"]) == asked.since
