"""``save_turns`` saves a batch of turns as that many ``save_turn`` calls would (the same
file, ids, outcomes, audit entries and recall answers), checks every turn before it
writes one, and leaves nothing of the batch stored when it fails."""

from __future__ import annotations

import re
import shutil
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from tests.sessions.test_turn_appends import _recalls, _rowids, _rows

from kronika import Memory, build_memory, load_settings
from kronika.errors import Conflict, InvalidInput, PermissionDenied, WorkspaceError
from kronika.testing import FrozenClock

POLICY = "[retention]\nshort = 30\n"
QUERIES = ("lighthouse heron", "Bob tide", "kettle")


def _open(root: Path, clock: FrozenClock, config: str = "", **overrides: Any) -> Memory:
    root.mkdir(parents=True, exist_ok=True)
    (root / "kronika.toml").write_text(config)
    settings = load_settings(root, environ={}, embedder="hashing", **overrides)
    return build_memory(settings, create=True, clock=clock)


def _turns(clock: FrozenClock) -> list[Any]:
    """Turns of every kind: pairs, mappings with a time or an id of their own, a turn
    dated past the short-term retention (refused: it takes no id), a hand id that
    numbers the turns after it."""
    now = clock.now()
    return [
        ("user", "the lighthouse keeper saw a heron"),
        {"speaker": "assistant", "content": "a grey heron?", "at": now + timedelta(seconds=5)},
        {"speaker": "Bob", "content": "the tide was high", "at": now - timedelta(days=40)},
        {"speaker": "user", "content": "yes, by the kettle", "turn_id": "s1_7"},
        ["assistant", "noted"],
        {"speaker": "user", "content": "my own id", "turn_id": "opening"},
        ("Bob", "and Bob says the tide turned"),
    ]


def _state(memory: Memory, session: str = "s1") -> dict[str, Any]:
    """What a user sees of a session: its file, its turns, the audit and recall answers."""
    file = memory.workspace.agent_dir("default") / f"sessions/{session}.md"
    return {
        "file": file.read_text() if file.exists() else None,
        "turns": [(t.id, t.content) for t in memory.load_session(session)],
        "audit": [
            (
                e.action,
                e.target_agent,
                e.source_agent,
                e.section,
                e.item_id,
                e.outcome,
                re.sub(r"\[p-[0-9a-f]+\]", "[p]", e.summary),
            )
            for e in memory.audit()
        ],  # fmt: skip
        "recall": [
            [(h.item.id, h.item.content) for h in memory.recall(q, k=6).hits] for q in QUERIES
        ],  # fmt: skip
        "proposals": [p.summary for p in memory.proposals()],
    }


def _outcomes(saved: list[Any]) -> list[tuple[str, str, bool, str | None]]:
    return [(str(s), s.outcome, s.proposal is not None, s.policy) for s in saved]


def _one_by_one(memory: Memory, turns: list[Any], **kwargs: Any) -> list[Any]:
    saved = []
    for turn in turns:
        fields = turn if isinstance(turn, dict) else {"speaker": turn[0], "content": turn[1]}
        saved.append(memory.save_turn("s1", **fields, **kwargs))
    return saved


def test_a_batch_saves_what_the_same_turns_saved_one_by_one_save(
    tmp_path: Path, clock: FrozenClock
) -> None:
    batch, single = _open(tmp_path / "batch", clock, POLICY), _open(tmp_path / "one", clock, POLICY)
    turns = _turns(clock)
    with batch, single:
        made = batch.save_turns("s1", turns)
        expected = _one_by_one(single, turns)
        assert _outcomes(made) == _outcomes(expected)
        assert [str(s) for s in made] == [
            "s1_1",
            "s1_2",
            "s1_3",
            "s1_7",
            "s1_8",
            "opening",
            "s1_6",
        ]  # fmt: skip (after a hand id the count of turns numbers the next, as in save_turn)
        assert made[2].outcome == "refused" and "retention" in str(made[2].policy)
        assert _state(batch) == _state(single)
        # a second batch goes on where the session stands, as the calls do
        more = [("user", "one more about the kettle"), ("assistant", "and the heron")]
        assert _outcomes(batch.save_turns("s1", more)) == _outcomes(_one_by_one(single, more))
        assert _state(batch) == _state(single)
        assert "\nsource: api\nstatus: open\n" in str(_state(batch)["file"])


def test_turns_proposed_at_autonomy_1_wait_as_the_calls_make_them_wait(
    tmp_path: Path, clock: FrozenClock
) -> None:
    config = "[agents.default]\nautonomy = 1\n" + POLICY
    batch, single = _open(tmp_path / "batch", clock, config), _open(tmp_path / "one", clock, config)
    turns = _turns(clock)
    with batch, single:
        made = batch.save_turns("s1", turns, source_agent="default")
        expected = _one_by_one(single, turns, source_agent="default")
        assert _outcomes(made) == _outcomes(expected)
        assert [s.outcome for s in made].count("proposed") == 6
        assert _state(batch) == _state(single)
        assert batch.load_session("s1") == []
        waiting = {p.id for p in batch.proposals()}
        assert {s.proposal for s in made if s.proposal} == waiting
        batch.approve(made[0].proposal or "")
        assert [t.content for t in batch.load_session("s1")] == [turns[0][1]]


def test_every_turn_is_checked_before_any_is_written(memory: Memory) -> None:
    memory.save_turn("s1", "user", "first")
    before = _state(memory)
    bad: list[tuple[Any, str]] = [
        ("hello", "a list of turns"),
        ({"speaker": "user", "content": "hi"}, "a list of turns"),
        (42, "a list of turns"),
        ([("user", "ok"), ("user", "ok"), ("user", "  ")], "turn 3: the turn is empty"),
        ([("user", "ok"), {"speaker": "user", "text": "hi"}], "turn 2: unknown field"),
        ([{"content": "who said it?"}], "turn 1: the speaker is missing"),
        ([("user", "ok"), ("user", "ok", "extra")], "turn 2: a turn is a mapping"),
        ([{"speaker": "user", "content": "hi", "at": "yesterday"}], "turn 1: at must be"),
        ([("user", "ok"), ("user", "nul\x00")], "turn 2: the turn holds a NUL"),
        ([{"speaker": "u", "content": "x", "turn_id": 7}], "turn 1: the turn id must be"),
    ]
    for turns, message in bad:
        with pytest.raises(InvalidInput, match=re.escape(message)):
            memory.save_turns("s1", turns)
    with pytest.raises(InvalidInput, match="the turn id holds a NUL"):
        memory.save_turn("s1", "user", "as save_turn checks it", turn_id="s1\x009")
    assert _state(memory) == before
    assert memory.save_turns("s1", []) == []


def test_a_failure_before_the_write_leaves_nothing_of_the_batch(
    tmp_path: Path, clock: FrozenClock
) -> None:
    with _open(tmp_path / "ws", clock, 'secrets = "refuse"\n') as memory:
        memory.save_turn("s1", "user", "first")
        before = _state(memory)
        key = "sk-" + "a1B2c3D4e5F6g7H8i9J0" * 2
        turns = [("user", "fine"), ("user", "also fine"), ("user", f"my key is {key}")]
        with pytest.raises(InvalidInput, match="turn 3: refusing to store a secret"):
            memory.save_turns("s1", turns)
        with pytest.raises(Conflict, match="session of its own"):
            memory.save_turns("s1", [("user", "for the channel")], scope="channel", channel="c")
        assert _state(memory) == before
        # the session file cannot be written: the batch fails whole, nothing is audited
        file = memory.workspace.agent_dir("default") / "sessions/s2.md"
        file.mkdir(parents=True)
        with pytest.raises(WorkspaceError):
            memory.save_turns("s2", [("user", "one"), ("user", "two")])
        file.rmdir()
        assert _state(memory) == before
        assert memory.save_turns("s2", [("user", "one"), ("user", "two")]) == ["s2_1", "s2_2"]


def test_an_agent_that_may_not_write_is_denied_before_anything_is_written(
    tmp_path: Path, clock: FrozenClock
) -> None:
    config = "[agents.default]\nautonomy = 0\n" + POLICY
    batch, single = _open(tmp_path / "batch", clock, config), _open(tmp_path / "one", clock, config)
    turns = _turns(clock)[2:]  # a refused turn, then the denied one
    with batch, single:
        with pytest.raises(PermissionDenied, match="autonomy 0"):
            batch.save_turns("s1", turns, source_agent="default")
        with pytest.raises(PermissionDenied, match="autonomy 0"):
            _one_by_one(single, turns, source_agent="default")
        assert _state(batch) == _state(single)
        assert [e.outcome for e in batch.audit()] == ["refused", "denied"]
        assert _state(batch)["file"] is None


def test_a_batch_is_appended_in_place_and_indexed_as_a_fresh_reindex_would(
    memory: Memory, clock: FrozenClock, tmp_path: Path
) -> None:
    memory.save_turns("s1", [("Bob", "Bob heron 1"), ("assistant", "assistant lighthouse 2")])
    file = memory.workspace.agent_dir("default") / "sessions" / "s1.md"
    before, inode = file.read_bytes(), file.stat().st_ino
    rowids = _rowids(memory, "sessions/s1.md")
    said = [
        (("user", "assistant", "Bob")[n % 3], f"says {n}: tide heron {n * 7}") for n in range(30)
    ]
    memory.save_turns("s1", said)
    assert file.stat().st_ino == inode  # appended, not rewritten through a temporary file
    assert file.read_bytes().startswith(before)
    assert _rowids(memory, "sessions/s1.md").items() >= rowids.items()  # rows kept
    assert len(memory.load_session("s1")) == 32
    fresh = tmp_path / "fresh"  # the same Markdown indexed from scratch in another home
    shutil.copytree(memory.settings.home / "agents", fresh / "agents")
    settings = load_settings(fresh, environ={}, embedder="hashing")
    with build_memory(settings, clock=clock) as other:
        other.sync()
        assert _rows(other, "sessions/s1.md") == _rows(memory, "sessions/s1.md")
        assert _recalls(other) == _recalls(memory)
