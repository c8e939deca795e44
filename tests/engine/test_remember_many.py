"""remember_many: many facts through the one write path, under one hold of the lock."""

from __future__ import annotations

import random
import re
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from kronika import Memory, build_memory, load_settings
from kronika.core.prompt import render_brain
from kronika.engine.changes import AddFact, SupersedeFact, TouchFact
from kronika.errors import InvalidInput, PermissionDenied
from kronika.testing import FrozenClock


def test_duplicates_inside_the_batch_and_against_stored_facts(memory: Memory) -> None:
    memory.remember("Kraków", key="city")
    receipts = memory.remember_many(
        [
            {"key": "city", "value": "kraków."},  # the stored value again
            {"key": "drink", "value": "green tea"},
            {"key": "drink", "value": "Green tea"},  # the batch's own fact again
            {"key": "drink", "value": "coffee"},  # a new value: the old one becomes history
            "likes long walks",
        ]
    )
    kinds = [type(r.change) for r in receipts]
    assert kinds == [TouchFact, AddFact, TouchFact, SupersedeFact, AddFact]
    assert all(r.outcome == "applied" for r in receipts)
    facts = {f.key: f.value for f in memory.facts() if f.key}
    assert facts == {"city": "Kraków", "drink": "coffee"}
    assert [h.value for h in memory.history("drink")] == ["green tea", "coffee"]
    actions = [e.action for e in memory.audit()]
    assert actions == ["remember", "refresh", "remember", "refresh", "supersede", "remember"]
    # the index was brought up to date at the end of the batch
    hits = memory.recall("long walks", k=1).hits
    assert hits and hits[0].item.content == "likes long walks"
    assert memory.recall("coffee", k=1).hits[0].item.value == "coffee"


def test_a_batch_over_the_brain_budget_archives_and_indexes_everything(
    home: Path, clock: FrozenClock
) -> None:
    settings = load_settings(home, environ={}, embedder="hashing").with_overrides(
        brain_max=60, brain_budget=40
    )
    with build_memory(settings, create=True, clock=clock) as mem:
        mem.remember_many([{"key": f"k{n}", "value": f"value number {n}"} for n in range(40)])
        archived = mem.workspace.archived_facts("default")
        assert archived, "the Brain was kept within its budget"
        assert len(mem.facts()) == 40
        indexed = {
            it.id
            for path in ("brain.md", "brain_archive.md")
            for it in mem.index.source_items("default", path)
        }
        assert indexed == {f.id for f in mem.facts()}
        # the same facts are remembered again: every one is found, none is added
        again = mem.remember_many(
            [{"key": f"k{n}", "value": f"value number {n}"} for n in range(40)]
        )
        assert {type(r.change) for r in again} == {TouchFact}
        assert len(mem.facts()) == 40


def test_bad_input_names_the_fact_and_writes_nothing(memory: Memory) -> None:
    with pytest.raises(InvalidInput, match="fact 2"):
        memory.remember_many(["fine", {"key": "k"}])
    with pytest.raises(InvalidInput, match="fact 1: unknown field"):
        memory.remember_many([{"content": "x", "colour": "red"}])
    with pytest.raises(InvalidInput, match="fact 2: a fact is a string or a mapping"):
        memory.remember_many(["fine", ("Porto", "trip")])  # type: ignore[list-item]
    assert memory.facts() == []
    assert memory.audit() == []


def test_autonomy_denies_or_proposes_the_batch(home: Path, clock: FrozenClock) -> None:
    home.mkdir(parents=True)
    (home / "kronika.toml").write_text(
        "[agents.readonly]\nautonomy = 0\n[agents.careful]\nautonomy = 1\n"
    )
    settings = load_settings(home, environ={}, embedder="hashing")
    with build_memory(settings, create=True, clock=clock) as mem:
        for name in ("readonly", "careful"):
            mem.create_agent(name)
        with pytest.raises(PermissionDenied, match="read-only"):
            mem.remember_many(["a", "b"], agent="readonly", source_agent="readonly")
        assert mem.facts(agent="readonly") == []
        assert [e.outcome for e in mem.audit(agent="readonly")] == ["denied"]

        receipts = mem.remember_many(["a", "b"], agent="careful", source_agent="careful")
        assert [r.outcome for r in receipts] == ["proposed", "proposed"]
        assert mem.facts(agent="careful") == []
        assert len(mem.proposals(agent="careful")) == 2
        assert [e.outcome for e in mem.audit(agent="careful")] == ["proposed", "proposed"]


def test_secrets_are_screened_in_a_batch(memory: Memory) -> None:
    key = "sk-proj-Q3x9vTz81LmNpR4sWuY7aBcD0eFgHiJk"
    memory.remember_many([f"my api key is {key}"])
    brain = (memory.workspace.agent_dir("default") / "brain.md").read_text()
    assert key not in brain


_BATCH_WRITER = """
import json, sys
from pathlib import Path
from kronika import build_memory, load_settings

home = Path(sys.argv[1])
settings = load_settings(home, environ={}, embedder="hashing").with_overrides(
    brain_max=60, brain_budget=40
)
with build_memory(settings) as memory:
    for batch in range(1000):
        facts = [{"key": f"k{n % 7}", "value": f"b{batch}-{n}"} for n in range(12)]
        facts += [f"loose fact {batch}-{n}" for n in range(3)]
        memory.remember_many(facts)
        print(json.dumps(batch), flush=True)
"""


def test_a_batch_killed_at_any_moment_leaves_one_value_per_key_and_every_acked_batch(
    home: Path, tmp_path: Path
) -> None:
    """remember_many writes the Brain once, at the end of the batch; a writer killed
    anywhere in a batch leaves a workspace where every key has one current value, no
    fact is both current and archived, and every acknowledged batch is whole."""
    settings = load_settings(home, environ={}, embedder="hashing").with_overrides(
        brain_max=60, brain_budget=40
    )
    build_memory(settings, create=True).close()
    script = tmp_path / "writer.py"
    script.write_text(_BATCH_WRITER, encoding="utf-8")
    rng = random.Random(3)
    for _trial in range(6):
        log = tmp_path / "acks.txt"
        with log.open("w", encoding="utf-8") as out:
            proc = subprocess.Popen([sys.executable, str(script), str(home)], stdout=out)
        deadline = time.monotonic() + 120
        while not log.read_text(encoding="utf-8").strip() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(rng.uniform(0.0, 1.0))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        acked = [int(line) for line in log.read_text(encoding="utf-8").split()]
        assert acked, "the writer acknowledged no batch"
        with build_memory(settings) as memory:
            memory.reindex()
            current = [f for f in memory.facts() if f.key]
            keys = [f.key for f in current]
            assert len(keys) == len(set(keys)), sorted(keys)
            ws = memory.workspace
            brain_ids = {f.id for f in ws.brain_facts("default")}
            archived = ws.archived_facts("default")
            assert brain_ids.isdisjoint(f.id for f in archived)
            kept = {f.content for f in [*ws.brain_facts("default"), *archived]}
            kept |= {f.content for f in ws.fact_history("default")}
            last = acked[-1]
            assert {f"loose fact {last}-{n}" for n in range(3)} <= kept
            assert {f"k{n % 7}: b{last}-{n}" for n in range(12)} <= kept
            held = [*archived, *ws.fact_history("default"), *ws.brain_facts("default")]
            assert not any(f.id.startswith("h-") for f in held)
            # a key's value is in the Brain or in the archive, never one in each
            live = [f.key for f in [*ws.brain_facts("default"), *archived] if f.key]
            assert len(live) == len(set(live)), sorted(live)


def test_one_string_is_refused_not_remembered_letter_by_letter(memory: Memory) -> None:
    for wrong in ("abc", b"abc", {"content": "abc"}):
        with pytest.raises(InvalidInput, match="a list of facts"):
            memory.remember_many(wrong)  # type: ignore[arg-type]
    assert memory.items() == []


def test_recall_refuses_a_naive_time_with_a_clear_error(memory: Memory) -> None:
    from datetime import UTC, datetime

    from kronika.errors import InvalidQuery

    memory.remember("the deploy is on friday")
    for option in ("now", "as_of", "since", "until"):
        with pytest.raises(InvalidQuery, match=f"{option} must be a datetime with a time zone"):
            memory.recall("deploy", **{option: datetime(2026, 1, 1)})  # type: ignore[arg-type]
    with pytest.raises(InvalidQuery, match="now must be a datetime, not str"):
        memory.recall("deploy", now="yesterday")  # type: ignore[arg-type]
    assert memory.recall("deploy", now=datetime.now(UTC)).hits


_ID = re.compile(r"\b[fh]-[0-9a-f]{12}\b")


def _state(mem: Memory) -> str:
    """The fact files and the audit trail, each id named by its first appearance."""
    folder = mem.workspace.agent_dir("default")
    files = [
        (folder / name).read_text(encoding="utf-8") if (folder / name).exists() else ""
        for name in ("brain.md", "brain_archive.md", "history.md")
    ]
    audit = [f"{e.action} {e.outcome} {e.section} {e.summary}" for e in mem.audit()]
    return _ids_named("\n=====\n".join([*files, *audit]))


def _ids_named(text: str) -> str:
    """``text`` with each id named by its first appearance."""
    names: dict[str, str] = {}
    return _ID.sub(lambda m: names.setdefault(m.group(0), f"id{len(names)}"), text)


_START = datetime(2025, 3, 1, tzinfo=UTC)


def _before_and_batch() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Facts stored first, then a batch: duplicates of stored and of the batch's own
    facts, new values of a key (one of them archived by then, one set three times),
    a multi key, another section and audience, a secret, a refresh of an archived fact,
    a value of a fact superseded in the same batch."""
    before: list[dict[str, Any]] = [
        {"key": "city", "value": "Kraków"},
        {"key": "drink", "value": "tea"},
        {"content": "likes long walks"},
        *({"key": f"old{n}", "value": f"an older value {n}"} for n in range(12)),
    ]
    batch: list[dict[str, Any]] = [
        {"key": "city", "value": "kraków."},
        {"key": "drink", "value": "coffee"},
        {"key": "drink", "value": "Coffee"},
        {"key": "old0", "value": "a newer value 0"},
        {"key": "old1", "value": "an older value 1"},
        {"key": "old2", "value": "an older value 2."},
        {"key": "old2", "value": "a newer value 2"},
        {"content": "Likes long walks"},
        {"key": "pet", "value": "a cat", "multi": True},
        {"key": "pet", "value": "a dog", "multi": True},
        {"key": "tone", "value": "short answers", "section": "Preferences"},
        {"key": "standup", "value": "at nine", "scope": "team", "team": "ops"},
        {"content": "my api key is sk-proj-Q3x9vTz81LmNpR4sWuY7aBcD0eFgHiJk"},
        *({"key": f"new{n}", "value": f"a new value number {n}"} for n in range(30)),
        {"key": "new3", "value": "a newer value 3"},
        {"key": "drink", "value": "green tea"},
    ]
    for n, fact in enumerate([*before, *batch]):
        fact["at"] = _START + timedelta(minutes=n)
    return before, batch


def _both_ways(
    tmp_path: Path, **budget: int
) -> tuple[list[list[tuple[str, str]]], list[Memory], list[Path], list[int]]:
    """The batch remembered one by one and as a batch: each way's receipts' kinds, its
    memory (open: the caller closes it), its home, and the audit entries before it."""
    before, batch = _before_and_batch()
    kinds, memories, homes, began = [], [], [], []
    for way in ("one by one", "batch"):
        home = tmp_path / way.replace(" ", "-")
        settings = load_settings(home, environ={}, embedder="hashing").with_overrides(**budget)
        mem = build_memory(settings, create=True, clock=FrozenClock(_START + timedelta(days=1)))
        for fact in before:
            mem.remember(**fact)
        olds = {f.key: f.id for f in mem.facts() if f.key in ("old0", "old1", "old2")}
        mem.workspace.move_to_archive("default", list(olds.values()))
        began.append(len(mem.audit()))
        if way == "batch":
            receipts = mem.remember_many(batch)
        else:
            receipts = [mem.remember(**fact) for fact in batch]
        kinds.append([(type(r.change).__name__, r.outcome) for r in receipts])
        memories.append(mem)
        homes.append(home)
        assert {f.key: f.value for f in mem.facts() if f.key}["drink"] == "green tea"
    return kinds, memories, homes, began


def test_a_batch_leaves_what_the_same_facts_remembered_one_by_one_leave(
    tmp_path: Path,
) -> None:
    """Within the Brain's budget: the same files (Brain, archive, history, byte for
    byte but for the random ids), the same audit trail, the same receipts."""
    kinds, memories, _, _ = _both_ways(tmp_path, brain_max=100_000, brain_budget=90_000)
    try:
        assert kinds[0] == kinds[1]
        assert _state(memories[0]) == _state(memories[1])
        assert memories[1].workspace.archived_facts("default"), "an archived fact stayed"
    finally:
        for mem in memories:
            mem.close()


def test_a_batch_over_the_budget_keeps_the_same_facts_and_history_and_trims_once(
    tmp_path: Path,
) -> None:
    """A Brain over its budget many times over: the batch keeps the same facts (Brain and
    archive together), the same history and receipts as one by one; which facts stay in
    the Brain is decided once, at the end, and the Brain ends within its budget."""
    kinds, memories, homes, began = _both_ways(tmp_path, brain_max=60, brain_budget=40)
    try:
        assert kinds[0] == kinds[1]
        held = []
        for mem in memories:
            facts = [
                *mem.workspace.brain_facts("default"),
                *mem.workspace.archived_facts("default"),
            ]
            held.append(sorted((f.key or "", f.value or f.content, f.updated_at) for f in facts))
        assert held[0] == held[1]
        history = [_ids_named((home / "agents/default/history.md").read_text()) for home in homes]
        assert history[0] == history[1]
        audits = [[e.action for e in mem.audit() if e.action != "archive"] for mem in memories]
        assert audits[0] == audits[1]
        archives = [
            [e for e in mem.audit()[at:] if e.action == "archive"]
            for mem, at in zip(memories, began, strict=True)
        ]
        assert len(archives[1]) == 1 < len(archives[0]), "trimmed once, not per fact"
        brain = render_brain("default", memories[1].workspace.brain_facts("default"))
        assert memories[1].tokens.count(brain) <= 60
    finally:
        for mem in memories:
            mem.close()


def test_a_batch_whose_audit_trail_cannot_be_written_is_stored_and_says_so(
    memory: Memory,
) -> None:
    memory.remember("Kraków", key="city")
    trail = memory.settings.home / "audit.jsonl"
    trail.unlink()
    trail.mkdir()  # the audit trail cannot be appended to
    receipts = memory.remember_many([{"key": "drink", "value": "tea"}, "likes long walks"])
    assert [r.outcome for r in receipts] == ["applied", "applied"]
    assert any("not added to the audit trail" in note for note in receipts[-1].notes)
    assert {f.content for f in memory.facts()} == {"city: Kraków", "drink: tea", "likes long walks"}
    trail.rmdir()
    memory.remember_many(["one more", {"key": "drink", "value": "coffee"}])
    assert [e.action for e in memory.audit()] == ["remember", "supersede"]
