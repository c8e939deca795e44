"""``POST /v1/agents/{a}/sessions/{s}/turns/batch`` over real HTTP and through the
Python client: the turns saved as ``save_turns`` saves them, a receipt each; bad input
and a batch over the limit are a clear 422 that stores nothing."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from tests.server.conftest import Served

from kronika.client import Client
from kronika.errors import InvalidInput
from kronika.server.schemas import MAX_TURNS_PER_BATCH

PATH = "/v1/agents/alice/sessions/chat-1/turns/batch"


def _contents(served: Served, session: str = "chat-1", agent: str = "alice") -> list[str]:
    answer = served.call("GET", f"/v1/agents/{agent}/sessions/{session}")
    return [t["content"] for t in answer.body["turns"]]


def test_a_batch_of_turns_is_saved_with_a_receipt_each(served: Served) -> None:
    served.call(
        "POST", "/v1/agents/alice/sessions/chat-1/turns", {"speaker": "user", "content": "hi"}
    )
    turns = [
        {"speaker": "user", "content": "we fly to Lisbon"},
        {"speaker": "assistant", "content": "when?", "at": "2026-11-20T10:00:00Z"},
        {"speaker": "user", "content": "on Friday", "turn_id": "chat-1_9"},
        {"speaker": "assistant", "content": "noted"},
    ]
    answer = served.call("POST", PATH, {"turns": turns})
    assert answer.status == 201, answer
    assert answer.body["session_id"] == "chat-1"
    assert [(t["turn_id"], t["outcome"]) for t in answer.body["turns"]] == [
        ("chat-1_2", "applied"), ("chat-1_3", "applied"), ("chat-1_9", "applied"),
        ("chat-1_10", "applied"),
    ]  # fmt: skip
    assert _contents(served) == ["hi", *(t["content"] for t in turns)]
    one = served.call("GET", "/v1/agents/alice/sessions/chat-1").body["turns"][2]
    assert one["created_at"].startswith("2026-11-20T10:00:00")
    audit = served.call("GET", "/v1/agents/alice/audit?limit=10").body["entries"]
    assert [e["summary"] for e in audit if e["action"] == "save_turn"][-4:] == [
        "chat-1/chat-1_2 user", "chat-1/chat-1_3 assistant", "chat-1/chat-1_9 user",
        "chat-1/chat-1_10 assistant",
    ]  # fmt: skip


def test_an_agent_at_autonomy_1_proposes_every_turn(served: Served) -> None:
    path = "/v1/agents/carol/sessions/chat-7/turns/batch"
    turns = [{"speaker": "user", "content": "I moved"}, {"speaker": "carol", "content": "Where?"}]
    answer = served.call("POST", path, {"turns": turns}, key="acme-carol")
    assert answer.status == 201
    said = answer.body["turns"]
    assert [(t["turn_id"], t["outcome"]) for t in said] == [
        ("chat-7_1", "proposed"),
        ("chat-7_2", "proposed"),
    ]
    waiting = served.call("GET", "/v1/agents/carol/proposals").body["proposals"]
    assert sorted(p["id"] for p in waiting) == sorted(t["proposal"] for t in said)
    assert _contents(served, "chat-7", "carol") == []


def test_bad_turns_and_too_many_turns_are_a_422_that_stores_nothing(served: Served) -> None:
    ok = {"speaker": "user", "content": "fine"}
    too_many = [ok] * (MAX_TURNS_PER_BATCH + 1)
    cases: list[tuple[Any, str]] = [
        ({"turns": too_many}, f"at most {MAX_TURNS_PER_BATCH}"),
        ({"turns": []}, "turns"),
        ({"turns": "hello"}, "turns"),
        ({"turns": [ok, {"speaker": "user"}]}, "content"),
        ({"turns": [ok, {"speaker": "user", "content": "x", "colour": "red"}]}, "colour"),
        ({"turns": [ok, {"speaker": "user", "content": "x", "at": 5}]}, "iso 8601"),
        ({"turns": [ok, ok, {"speaker": "user", "content": "   "}]}, "turn 3: the turn is empty"),
        ({"turns": [ok], "scope": "cosmic"}, "scope"),
    ]
    for body, words in cases:
        answer = served.call("POST", PATH, body)
        assert answer.status == 422, (body, answer)
        assert answer.body["error"] == "InvalidInput", answer
        assert words.lower() in answer.body["message"].lower(), answer
    assert served.call("GET", "/v1/agents/alice/sessions/chat-1").body["turns"] == []
    fits = served.call("POST", PATH, {"turns": [ok] * MAX_TURNS_PER_BATCH})
    assert fits.status == 201 and len(fits.body["turns"]) == MAX_TURNS_PER_BATCH


def test_the_client_saves_a_batch_as_memory_does(served: Served) -> None:
    client = Client(served.url, served.keys["acme-admin"])
    at = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
    made = client.save_turns(
        "trip",
        [("user", "we fly to Lisbon"), {"speaker": "assistant", "content": "when?", "at": at}],
        agent="alice",
    )
    assert made == ["trip_1", "trip_2"] and [m.outcome for m in made] == ["applied", "applied"]
    assert made[0].turn_id == "trip_1" and made[0].proposal is None
    in_process = served.memories["acme"].save_turns("trip", [("user", "on Friday")], agent="alice")
    assert in_process == ["trip_3"]
    assert _contents(served, "trip") == ["we fly to Lisbon", "when?", "on Friday"]
    with pytest.raises(InvalidInput, match="a list of turns"):
        client.save_turns("trip", "hello", agent="alice")
    with pytest.raises(InvalidInput, match="turn 2: the turn is empty"):
        client.save_turns("trip", [("user", "x"), ("user", " ")], agent="alice")
    assert _contents(served, "trip") == ["we fly to Lisbon", "when?", "on Friday"]
