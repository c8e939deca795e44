"""`kronika.client.Client`: the same calls as Memory, over HTTP, with the same results
and the same errors."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, get_type_hints

import pytest
from tests.server.conftest import Served

from kronika import Memory, RecallResult, errors
from kronika.client import Client, ClientAuthError, ServerError
from kronika.engine.changes import AddFact, AppendNote, SupersedeFact


def _script(memory: Memory | Client, agent: str) -> tuple[RecallResult, list[str], str]:
    """Code written against Memory; run unchanged against a Client."""
    first = memory.remember("prefiere TypeScript", key="lenguaje", agent=agent)
    assert first.outcome == "applied" and isinstance(first.change, AddFact)
    second = memory.remember("prefiere Rust", key="lenguaje", agent=agent)
    assert isinstance(second.change, SupersedeFact) and first.item is not None
    assert second.change.old_id == first.item.id
    noted = memory.note("Ola thinks Rust is worth it", agent=agent, kind="O", confidence=0.7)
    assert isinstance(noted.change, AppendNote) and noted.item is not None
    assert noted.item.kind == "O" and noted.item.confidence == 0.7
    memory.save_turn("chat-1", "user", "my cat is Mruczek", agent=agent)
    result = memory.recall("lenguaje", agent=agent, k=3)
    history = [f.value or "" for f in memory.history("lenguaje", agent=agent)]
    return result, history, memory.format_for_prompt(agent=agent)


def test_the_same_code_runs_in_process_and_over_http(served: Served) -> None:
    client = Client(served.url, served.keys["acme-admin"])
    over_http = _script(client, "alice")
    in_process = _script(served.memories["acme"], "bob")
    assert type(over_http[0]) is RecallResult
    assert over_http[0].hits[0].item.value == in_process[0].hits[0].item.value == "prefiere Rust"
    assert over_http[0].hits[0].citation == in_process[0].hits[0].citation
    assert over_http[1] == in_process[1] == ["prefiere TypeScript", "prefiere Rust"]
    assert over_http[2] == in_process[2]
    turns = client.load_session("chat-1", agent="alice")
    assert [t.content for t in turns] == ["my cat is Mruczek"]
    item = client.items(agent="alice", types=["note"])[0]
    assert client.get(item.id, agent="alice") == item
    receipt = client.forget(item.id, agent="alice")
    assert receipt.applied and [i.id for i in receipt.items] == [item.id]
    assert receipt.index_removed >= 1 and receipt.phrases == ()
    with pytest.raises(errors.NotFound):
        client.get(item.id, agent="alice")
    assert client.agents() == ["alice", "bob", "carol", "default"]
    assert client.count(agent="alice") >= 2
    assert "Rust" in client.brain(agent="alice")
    assert "Rust" in client.wake(agent="alice")["memory_block"]
    assert [f.key for f in client.facts(agent="alice")] == ["lenguaje"]
    entry = client.audit(agent="alice", limit=2)[-1]
    assert (entry.action, entry.target_agent) == ("forget", "alice")
    assert set(client.export("alice")["agents"]) == {"alice"}


def test_an_agent_key_defaults_to_its_agent(served: Served) -> None:
    client = Client(served.url, served.keys["acme-alice"])
    client.remember("likes figs")
    assert [f.content for f in client.facts()] == ["likes figs"]
    job = client.distill(days=3)
    served.service.jobs.wait(10)
    assert client.job(job["id"])["status"] == "done"


def test_proposals_through_the_client(served: Served) -> None:
    carol = Client(served.url, served.keys["acme-carol"])
    asked = carol.remember("uses Zig")
    assert asked.outcome == "proposed" and asked.proposal
    admin = Client(served.url, served.keys["acme-admin"], agent="carol")
    waiting = admin.proposals("carol")
    assert [p.id for p in waiting] == [asked.proposal] and waiting[0].source_agent == "carol"
    assert isinstance(waiting[0].change, AddFact) and waiting[0].change.item.content == "uses Zig"
    assert admin.approve(waiting[0].id, "carol").outcome == "applied"
    carol.remember("uses Nim")
    rejected = admin.reject(admin.proposals("carol")[0].id, "carol")
    assert rejected.status == "rejected" and "Nim" in rejected.summary
    assert [f.content for f in carol.facts()] == ["uses Zig"]


def test_errors_come_back_as_kronika_errors(served: Served) -> None:
    admin = Client(served.url, served.keys["acme-admin"])
    with pytest.raises(errors.InvalidInput):
        admin.remember("   ", agent="alice")
    with pytest.raises(errors.InvalidQuery):
        admin.recall("x", agent="alice", since="the other day maybe")
    with pytest.raises(errors.AgentError):
        admin.facts(agent="nobody")
    with pytest.raises(ClientAuthError):
        Client(served.url, served.keys["acme-revoked"]).agents()
    with pytest.raises(errors.PermissionDenied):
        Client(served.url, served.keys["acme-reader"]).remember("x", agent="alice")
    with pytest.raises(ServerError, match="cannot be reached"):
        Client("http://127.0.0.1:9", "kro_x", timeout=2).agents()
    new = Client(served.url, served.keys["acme-admin"])
    new.create_agent("dave")
    assert "dave" in new.agents()
    document = new.export()
    assert new.import_export(document, replace=True)["agents"] == 5


# What Memory takes from its caller, a server takes from the key and the request:
# who writes (source_agent) and who reads (reader) from the key, the user from the
# X-Kronika-User header and their teams from the server's settings; the server's
# clock dates writes and recalls (at, now); a query vector is made by the server.
_FROM_THE_SERVER = {
    *("reader", "source_agent", "user", "team", "at", "now", "query_vector"),
    "llm",  # the server's own background model writes an outcome's lesson
}


def _methods(cls: type) -> dict[str, Callable[..., Any]]:
    return {n: f for n, f in vars(cls).items() if callable(f) and not n.startswith("_")}


def test_the_client_takes_what_memory_takes_and_returns_what_it_returns() -> None:
    from kronika.memory import Memory as Facade

    # a named part that is called (memory.proposals(agent)) is compared by its __call__
    hints = get_type_hints(Facade)
    parts = {n: vars(part)["__call__"] for n, part in hints.items() if "__call__" in vars(part)}
    shared = [n for n in _methods(Client) if hasattr(Facade, n) or n in parts]
    assert {"remember", "note", "forget", "recall", "save_turn", "approve", "audit"} <= set(shared)
    assert "proposals" in shared
    for name in shared:
        mine = inspect.signature(getattr(Client, name))
        theirs = inspect.signature(parts[name] if name in parts else getattr(Facade, name))
        assert mine.return_annotation == theirs.return_annotation, name
        for param in mine.parameters.values():
            twin = theirs.parameters.get(param.name)
            assert twin is not None, f"{name}({param.name}=…) is not a parameter of Memory"
            assert (twin.kind, twin.default) == (param.kind, param.default), (name, param.name)
        left_out = set(theirs.parameters) - set(mine.parameters) - _FROM_THE_SERVER
        assert not left_out or left_out == {"scopes"}, (name, left_out)
