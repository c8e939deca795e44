"""The Python API refuses bad input with a KronikaError saying what was wrong, never a
TypeError, OverflowError or UnicodeEncodeError from deep inside."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from kronika import Memory, build_memory, load_settings
from kronika.errors import (
    ConfigError,
    InvalidAgentName,
    InvalidInput,
    InvalidQuery,
    KronikaError,
)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda m: m.recall(123), InvalidQuery, "the query must be text"),
        (lambda m: m.recall("\ud800"), InvalidQuery, "not a Unicode character"),
        (lambda m: m.recall("tea", k="5"), InvalidQuery, "k must be a whole number"),
        (lambda m: m.recall("tea", k=True), InvalidQuery, "k must be a whole number"),
        (lambda m: m.recall("tea", k=0), InvalidQuery, "k must be between 1 and 10000"),
        (lambda m: m.recall("tea", k=10**12), InvalidQuery, "k must be between 1"),
        (lambda m: m.recall("tea", budget_tokens=-5), InvalidQuery, "budget must be between"),
        (lambda m: m.recall("tea", since=5), InvalidQuery, "since must be text or a datetime"),
        (lambda m: m.recall("tea", entities="Peter"), InvalidQuery, "must be a list of texts"),
        (lambda m: m.recall("tea", keys=[1]), InvalidQuery, "each of keys must be text"),
        (lambda m: m.recall("tea", entities=["\udcff"]), InvalidQuery, "not a Unicode"),
        (lambda m: m.remember(key=5, value="x"), InvalidInput, "the key must be text"),
        (lambda m: m.remember(b"tea"), InvalidInput, "the value must be text"),
        (lambda m: m.remember("\ud800"), InvalidInput, "not a Unicode character"),
        (lambda m: m.remember("x", key="\udcff"), InvalidInput, "not a Unicode character"),
        (lambda m: m.remember("x", importance="high"), InvalidInput, "must be a number"),
        (lambda m: m.remember("x", importance=float("nan")), InvalidInput, "between 0 and 1"),
        (lambda m: m.remember("x", scope="nowhere"), InvalidInput, "nowhere"),
        (lambda m: m.remember("x", source="magic"), InvalidInput, "magic"),
        (lambda m: m.remember("x", section=3), InvalidInput, "the section must be text"),
        (lambda m: m.remember("x", entities="Ana"), InvalidInput, "must be a list of texts"),
        (lambda m: m.remember("x", key="a**: b"), InvalidInput, "may not contain '**:'"),
        (lambda m: m.note(os.fsdecode(b"caf\xe9")), InvalidInput, "not a Unicode character"),
        (lambda m: m.save_turn("s1", "user", "\ud800"), InvalidInput, "not a Unicode"),
        (lambda m: m.save_turn(7, "user", "hi"), InvalidInput, "session id must be text"),
        (lambda m: m.items(limit=10**20), InvalidInput, "limit must be between 1 and 1000000"),
        (lambda m: m.items(offset=-1), InvalidInput, "offset must be between 0"),
        (lambda m: m.audit(limit=0), InvalidInput, "limit must be between 1"),
        (lambda m: m.get(42), InvalidInput, "the item id must be text"),
        (lambda m: m.history(None), InvalidInput, "the key must be text"),
        (lambda m: m.forget(123), InvalidInput, "the item id must be text"),
        (lambda m: m.forget(key=5), InvalidInput, "the key must be text"),
        (lambda m: m.load_session(5), InvalidInput, "the session id must be text"),
        (lambda m: m.remember("x", at=5), InvalidInput, "at must be a datetime"),
        (lambda m: m.note("x", at="now"), InvalidInput, "at must be a datetime"),
        (lambda m: m.items(types=5), InvalidQuery, "types must be a list of texts"),
        (lambda m: m.items(types="note"), InvalidQuery, "types must be a list of texts"),
        (lambda m: m.items(scopes=None), InvalidQuery, "scopes must be a list of texts"),
        (lambda m: m.load_short_term(limit=None), InvalidInput, "limit must be a whole number"),
        (lambda m: m.load_short_term(limit=0), InvalidInput, "limit must be between 1"),
        (lambda m: m.load_short_term(limit=-1), InvalidInput, "limit must be between 1"),
        (lambda m: m.load_short_term(session_id=3), InvalidInput, "session id must be text"),
        (lambda m: m.lessons_for(None), InvalidInput, "the task must be text"),
        (lambda m: m.links.add(5, "x"), InvalidInput, "the item id must be text"),
        (lambda m: m.links.add("x", ["y"]), InvalidInput, "the item id must be text"),
        (lambda m: m.links.list(b"x"), InvalidInput, "the item id must be text"),
        (lambda m: m.remember_many(None), InvalidInput, "takes a list of facts"),
        (lambda m: m.remember_many(5), InvalidInput, "takes a list of facts"),
        (lambda m: m.create_agent(["a"]), InvalidAgentName, "invalid agent name"),
        (lambda m: m.items(agent={"a": 1}), InvalidAgentName, "invalid agent name"),
        (lambda m: m.remember("x", agent=["a"]), InvalidAgentName, "invalid agent name"),
        (lambda m: m.import_sessions("default", None), InvalidInput, "list of SessionRecord"),
        (lambda m: m.import_sessions("default", [{"a": 1}]), InvalidInput, "session 1: a"),
    ],
)
def test_bad_arguments_raise_a_clear_kronika_error(
    memory: Memory,
    call: Callable[[Memory], Any],
    error: type[KronikaError],
    message: str,
) -> None:
    memory.remember("Peter likes green tea")
    before = (memory.settings.home / "agents" / "default" / "brain.md").read_bytes()
    with pytest.raises(error, match=message.replace("*", r"\*")):
        call(memory)
    assert (memory.settings.home / "agents" / "default" / "brain.md").read_bytes() == before


def test_what_is_valid_still_works_at_the_edges(memory: Memory) -> None:
    memory.remember("Peter likes green tea", importance=1)
    assert memory.recall("tea", k=10_000, budget_tokens=10_000_000).hits
    assert memory.recall("tea", since=datetime(1, 1, 1, tzinfo=UTC)).hits
    assert memory.recall("tea", until="9999-12-31", as_of="9999-12-31").hits
    assert memory.recall("tea", since="9999-12-31").hits == ()
    assert memory.recall("  ").hits == ()  # a blank query finds nothing, it is no error
    assert len(memory.items(limit=1_000_000, offset=0)) == 1
    memory.save_turn("s1", "user", "first")
    memory.save_turn("s1", "user", "second")
    assert [t.content for t in memory.load_short_term(limit=1)] == ["second"]
    assert len(memory.load_short_term(limit=1_000_000)) == 2


@pytest.mark.parametrize("key", ["a**b", "**bold**", "x*", "*y", "a** :b", "<!-- k -->", "a: b"])
def test_keys_round_trip_through_the_brain_and_can_be_forgotten(memory: Memory, key: str) -> None:
    memory.remember("first", key=key)
    memory.remember("second", key=key)
    assert [f.value for f in memory.history(key)] == ["first", "second"]
    (fact,) = memory.facts()
    assert fact.key == " ".join(key.split()) and fact.value == "second"
    assert len(memory.forget(key=key).items) == 2
    assert memory.facts() == []


def test_entity_filters_match_with_or_without_at_in_any_case(memory: Memory) -> None:
    memory.remember("I met @Peter at the station")
    memory.remember("the cellist plays on Sundays", entities=["@Anna"])
    memory.remember("Ola likes tea")
    for name in ("Peter", "@Peter", "peter", "@PETER", " Peter "):
        hits = memory.recall("met station", entities=[name]).hits
        assert [h.item.content for h in hits] == ["I met @Peter at the station"], name
    for name in ("Anna", "@anna"):
        hits = memory.recall("cellist", entities=[name]).hits
        assert [h.item.content for h in hits] == ["the cellist plays on Sundays"], name
    assert memory.recall("tea", entities=["@"]).hits == ()


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("recall_k", str(10**20)),
        ("recall_candidates", str(10**20)),
        ("neighbour_window", str(10**20)),
        ("idle_minutes", "1e300"),
        ("alpha", "nan"),
        ("decay_base", "inf"),
    ],
)
def test_numeric_settings_out_of_range_are_a_config_error(
    home: Path, name: str, value: str
) -> None:
    with pytest.raises(ConfigError, match=name):
        load_settings(home, environ={f"KRONIKA_{name.upper()}": value}, embedder="hashing")


def test_a_recall_k_setting_recall_cannot_use_names_the_setting(home: Path) -> None:
    settings = load_settings(home, environ={"KRONIKA_RECALL_K": "0"}, embedder="hashing")
    memory = build_memory(settings, create=True)
    with memory, pytest.raises(ConfigError, match="recall_k"):
        memory.recall("tea")
