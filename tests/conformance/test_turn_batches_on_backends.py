"""``save_turns`` on every backend: a batch saves what the same turns saved one by one
save, as another worker reads it (on PostgreSQL: through the store of record), and a
batch that fails leaves nothing another worker could read."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from backends import Backend
from kronika import Memory
from kronika.errors import InvalidInput
from kronika.testing import FrozenClock

POLICY = "[retention]\nshort = 30\n"


def _config(backend: Backend, text: str) -> None:
    for worker in ("a", "b"):
        home = backend.home(worker)
        home.mkdir(parents=True, exist_ok=True)
        (home / "kronika.toml").write_text(text)


def _turns(clock: FrozenClock) -> list[Any]:
    now = clock.now()
    return [
        ("user", "¿recordás que me gusta el mate?"),
        {"speaker": "assistant", "content": "sí, el mate amargo", "at": now},
        {"speaker": "Olena", "content": "стара розмова", "at": now - timedelta(days=40)},
        {"speaker": "user", "content": "Зустрів Олену в Києві", "turn_id": "s1_5"},
        ("assistant", "and the mate?"),
    ]


def _seen(memory: Memory) -> dict[str, Any]:
    """What a worker reads of session s1: its turns, the audit, recall answers."""
    return {
        "turns": [
            (t.id, t.provenance.turn_ids, t.content, t.created_at)
            for t in memory.load_session("s1")
        ],
        "audit": [
            (
                e.action,
                e.source_agent,
                e.item_id,
                e.outcome,
                re.sub(r"\[p-[0-9a-f]+\]", "[p]", e.summary),
            )
            for e in memory.audit()
        ],  # fmt: skip
        "recall": [h.item.id for h in memory.recall("mate Олену", k=5).hits],
        "proposals": [p.summary for p in memory.proposals()],
    }


@pytest.mark.parametrize("config", ["", "[agents.default]\nautonomy = 1\n"])
def test_a_batch_reads_back_as_the_same_turns_saved_one_by_one(
    backend: Backend, clock: FrozenClock, tmp_path: Path, config: str
) -> None:
    other = backend.another(tmp_path / "one-by-one")
    try:
        _config(backend, config + POLICY)
        _config(other, config + POLICY)
        agent = {"source_agent": "default"} if config else {}
        turns = _turns(clock)
        made = backend.open(clock=clock).save_turns("s1", turns, **agent)
        single = other.open(clock=clock)
        expected = []
        for turn in turns:
            fields = turn if isinstance(turn, dict) else {"speaker": turn[0], "content": turn[1]}
            expected.append(single.save_turn("s1", **fields, **agent))
        said = [(str(s), s.outcome, s.proposal is None, s.policy) for s in made]
        assert said == [(str(s), s.outcome, s.proposal is None, s.policy) for s in expected]
        assert [s.outcome for s in made].count("refused") == 1
        seen = _seen(backend.open("b", clock=clock))
        assert seen == _seen(other.open("b", clock=clock))
        if not config:
            assert [t[1] for t in seen["turns"]] == [("s1_1",), ("s1_2",), ("s1_5",), ("s1_6",)]
        else:
            assert seen["turns"] == [] and len(seen["proposals"]) == 4
    finally:
        other.close()


def test_a_failed_batch_leaves_nothing_for_another_worker(
    backend: Backend, clock: FrozenClock
) -> None:
    _config(backend, 'secrets = "refuse"\n')
    memory = backend.open(clock=clock)
    memory.save_turn("s1", "user", "¿recordás que me gusta el mate?")
    key = "sk-" + "a1B2c3D4e5F6g7H8i9J0" * 2
    for turns, message in (
        ([("user", "one"), ("user", f"my key is {key}")], "turn 2: refusing to store a secret"),
        ([("user", "one"), ("user", "")], "turn 2: the turn is empty"),
    ):
        with pytest.raises(InvalidInput, match=message):
            memory.save_turns("s1", turns)
    other = backend.open("b", clock=clock)
    assert [t.content for t in other.load_session("s1")] == ["¿recordás que me gusta el mate?"]
    assert [e.action for e in other.audit()] == ["save_turn"]
    saved = memory.save_turns("s1", [("user", "one"), ("assistant", "two")])
    assert saved == ["s1_2", "s1_3"]
    assert [t.content for t in other.load_session("s1")][1:] == ["one", "two"]
