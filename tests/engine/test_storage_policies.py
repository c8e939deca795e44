"""Storage policies on a real workspace and index: the write path refuses, shortens or
keeps what it should, and the purge job forgets what they no longer allow — from every
file and the index — through the forget path."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from kronika import Memory, build_memory, load_settings
from kronika.core.model import ItemType, Tier
from kronika.engine.changes import WriteSummary
from kronika.engine.write import SYSTEM
from kronika.testing import FrozenClock

EXAMPLE = """
[retention]
short = 30
mid = 365

[[policy]]
name = "no DMs in long-term memory"
dm = true
max_tier = "mid"

[[policy]]
name = "never store hr"
channels = ["hr-private"]
store = false

[[policy]]
name = "scratch keeps nothing"
agents = ["scratch"]
store = false
"""


def _open(home: Path, clock: FrozenClock, config: str = EXAMPLE) -> Memory:
    home.mkdir(parents=True, exist_ok=True)
    (home / "kronika.toml").write_text(config, encoding="utf-8")
    settings = load_settings(home, environ={}, embedder="hashing")
    return build_memory(settings, create=True, clock=clock)


@pytest.fixture
def memory(home: Path, clock: FrozenClock) -> Iterator[Memory]:
    mem = _open(home, clock)
    yield mem
    mem.close()


def _holding(home: Path, word: str) -> list[str]:
    """Every file under the workspace (Markdown, audit, index and its copies) whose raw
    bytes hold ``word``."""
    return sorted(
        p.relative_to(home).as_posix()
        for p in home.rglob("*")
        if p.is_file() and word.encode() in p.read_bytes().lower()
    )


def _digest(home: Path) -> dict[str, str]:
    return {
        p.relative_to(home).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(home.rglob("*"))
        if p.is_file() and p.suffix != ".lock"
    }


# --------------------------------------------------------------------------- on write
def test_a_never_stored_channel_is_refused_and_its_words_are_written_nowhere(
    memory: Memory, home: Path
) -> None:
    receipt = memory.remember("my salary is 9000 zlotyquux", channel="hr-private", scope="channel")
    assert receipt.outcome == "refused" and receipt.item is None
    assert receipt.policy is not None and "'never store hr'" in receipt.policy
    assert "hr-private" in receipt.policy
    refused = [e for e in memory.audit() if e.outcome == "refused"]
    assert len(refused) == 1 and "never store hr" in refused[0].summary
    assert not [h for h in memory.recall("zlotyquux").hits if "zlotyquux" in h.item.content]
    memory.close()
    assert _holding(home, "zlotyquux") == []


def test_a_dm_fact_is_kept_as_a_mid_term_note_not_in_the_brain(memory: Memory) -> None:
    receipt = memory.remember("Alice prefers oolong tea", channel="dm:alice", scope="channel")
    assert receipt.outcome == "applied"
    assert receipt.policy is not None and "no DMs in long-term memory" in receipt.policy
    item = receipt.item
    assert item is not None and item.type is ItemType.NOTE and item.tier is Tier.MID
    assert item.provenance.path.startswith("memory/") and item.channel == "dm:alice"
    assert "oolong" not in memory.brain()
    assert memory.facts() == []
    notes = memory.items(types=["note"])
    assert [n.content for n in notes] == ["Alice prefers oolong tea"]
    assert notes[0].channel == "dm:alice"


def test_a_batch_keeps_each_fact_as_its_policy_says(memory: Memory, home: Path) -> None:
    """remember_many: a DM fact becomes a mid-term note, a never-stored channel's fact
    is refused, the others are facts; all in the order given, each audited."""
    receipts = memory.remember_many(
        [
            {
                "key": "tea",
                "value": "Alice prefers oolong tea",
                "channel": "dm:alice",
                "scope": "channel",
            },
            {"content": "my salary is 9000 zlotyquux", "channel": "hr-private", "scope": "channel"},
            {"key": "deploy", "value": "Friday"},
            {"key": "deploy", "value": "Thursday"},
        ]
    )
    assert [r.outcome for r in receipts] == ["applied", "refused", "applied", "applied"]
    note = receipts[0].item
    assert note is not None and note.type is ItemType.NOTE and note.tier is Tier.MID
    assert note.provenance.path.startswith("memory/")
    assert [n.content for n in memory.items(types=["note"])] == ["tea: Alice prefers oolong tea"]
    assert {f.key: f.value for f in memory.facts()} == {"deploy": "Thursday"}
    assert "oolong" not in memory.brain() and "Thursday" in memory.brain()
    assert [h.value for h in memory.history("deploy")] == ["Friday", "Thursday"]
    assert [e.outcome for e in memory.audit()] == ["applied", "refused", "applied", "applied"]
    memory.close()
    assert _holding(home, "zlotyquux") == []


def test_a_fact_of_an_ordinary_channel_stays_in_long_term_memory(memory: Memory) -> None:
    receipt = memory.remember("the deploy day is Friday", channel="ops", scope="channel")
    assert receipt.outcome == "applied" and receipt.policy is None
    assert receipt.item is not None and receipt.item.tier is Tier.LONG
    assert "Friday" in memory.brain()


def test_an_agent_that_keeps_nothing_refuses_facts_notes_turns_and_summaries(
    memory: Memory, home: Path
) -> None:
    memory.create_agent("scratch")
    assert memory.remember("a scratch fact plinkety", agent="scratch").outcome == "refused"
    assert memory.note("a scratch note plinkety", agent="scratch").outcome == "refused"
    memory.save_turn("s1", "user", "a scratch turn plinkety", agent="scratch")
    summary = WriteSummary("summaries/L1/x.md", "a scratch summary plinkety", ())
    assert memory.memory_write("scratch", "summaries", summary, SYSTEM).outcome == "refused"
    assert memory.count(agent="scratch") == 0
    assert memory.note("the default agent still notes", agent="default").outcome == "applied"
    memory.close()
    assert _holding(home, "plinkety") == []


def test_an_agent_that_must_ask_cannot_propose_what_a_policy_refuses(
    home: Path, clock: FrozenClock
) -> None:
    config = EXAMPLE + "\n[agents.helper]\nautonomy = 1\n"
    memory = _open(home, clock, config)
    memory.create_agent("helper")
    refused = memory.remember(
        "hr says bonus is wobbleflux", channel="hr-private", agent="helper", source_agent="helper"
    )
    assert refused.outcome == "refused"
    assert memory.proposals("helper") == []
    proposed = memory.remember("likes chess", agent="helper", source_agent="helper")
    assert proposed.outcome == "proposed"
    memory.close()
    assert _holding(home, "wobbleflux") == []


def test_something_already_past_its_retention_is_not_written(
    memory: Memory, clock: FrozenClock
) -> None:
    old = clock.now().replace(year=clock.now().year - 2)
    receipt = memory.note("an old note about kites", at=old)
    assert receipt.outcome == "refused"
    assert receipt.policy is not None and "[retention] mid = 365" in receipt.policy
    assert memory.note("a fresh note about kites").outcome == "applied"


def test_a_fact_cannot_be_shortened_below_mid_term(home: Path, clock: FrozenClock) -> None:
    config = '[[policy]]\nname = "only turns"\nmax_tier = "short"\n'
    memory = _open(home, clock, config)
    fact = memory.remember("the cat is grey")
    note = memory.note("bought a lamp")
    assert fact.outcome == note.outcome == "refused"
    assert fact.policy is not None and "conversation turn" in fact.policy
    assert memory.save_turn("s1", "user", "hi") == "s1_1"
    assert memory.count() == 1
    memory.close()


def test_without_policies_nothing_changes(home: Path, clock: FrozenClock) -> None:
    memory = _open(home, clock, "")
    assert memory.remember("x is y", channel="dm:a", scope="channel").item is not None
    assert memory.facts()[0].tier is Tier.LONG
    assert memory.purge().found == ()
    memory.close()


# --------------------------------------------------------------------------- purge
def _stock(memory: Memory) -> None:
    memory.save_turn("s1", "user", "I fed the ferret quillwort today")
    memory.note("the ferret likes quillwort pellets")
    memory.remember(key="ferret food", value="quillwort")


def test_retention_per_tier_expires_turns_then_notes_and_keeps_facts(
    memory: Memory, clock: FrozenClock, home: Path
) -> None:
    _stock(memory)
    assert memory.purge().found == ()
    clock.advance(days=31)
    report = memory.purge()
    assert [p.item.type for p in report.found] == [ItemType.MESSAGE]
    assert "[retention] short = 30" in report.found[0].reason
    assert report.forgotten == 1 and report.index_removed >= 1
    assert sorted(it.type for it in memory.items()) == [ItemType.NOTE, ItemType.PROFILE]
    clock.advance(days=340)
    report = memory.purge()
    assert [p.item.type for p in report.found] == [ItemType.NOTE]
    assert [f.value for f in memory.facts()] == ["quillwort"]


def test_purge_forgets_from_every_file_and_the_index(
    memory: Memory, clock: FrozenClock, home: Path
) -> None:
    memory.save_turn("s1", "user", "the password hint is snorkelwren")
    memory.memory_write(
        "default",
        "summaries",
        WriteSummary("summaries/L1/s1.md", "the user said: the password hint is snorkelwren.", ()),
        SYSTEM,
    )
    memory.note("keep this note about tulips")
    assert _holding(home, "snorkelwren")
    clock.advance(days=31)
    report = memory.purge()
    assert report.forgotten == 1
    assert "sessions/s1.md" in report.files
    assert not [h for h in memory.recall("snorkelwren").hits if "snorkelwren" in h.item.content]
    assert "[forgotten]" in memory.items(types=["summary"])[0].content
    assert [it.content for it in memory.items(types=["note"])] == ["keep this note about tulips"]
    memory.close()
    assert _holding(home, "snorkelwren") == []
    assert _holding(home, "tulips")


def test_a_channel_added_to_the_never_store_list_is_purged(home: Path, clock: FrozenClock) -> None:
    memory = _open(home, clock, "")
    memory.remember("the launch code is vexillary", channel="war-room", scope="channel")
    memory.remember("lunch is at noon", channel="general", scope="channel")
    memory.close()
    config = '[[policy]]\nname = "never store war-room"\nchannels = "war-room"\nstore = false\n'
    memory = _open(home, clock, config)
    report = memory.purge()
    assert [p.item.channel for p in report.found] == ["war-room"]
    assert "never store war-room" in report.found[0].reason
    assert [f.content for f in memory.facts()] == ["lunch is at noon"]
    assert memory.purge().found == ()  # idempotent
    memory.close()
    assert _holding(home, "vexillary") == []


def test_dm_facts_stored_before_the_policy_are_purged_from_long_term_memory(
    home: Path, clock: FrozenClock
) -> None:
    memory = _open(home, clock, "")
    memory.remember("Bob's birthday is in June", channel="dm-bob", scope="channel")
    memory.remember("the team meets on Monday", channel="team", scope="channel")
    memory.close()
    memory = _open(home, clock, EXAMPLE)
    report = memory.purge()
    assert [p.item.channel for p in report.found] == ["dm-bob"]
    assert "not long-term" in report.found[0].reason
    assert [f.channel for f in memory.facts()] == ["team"]
    memory.close()


def test_a_dry_run_changes_nothing(memory: Memory, clock: FrozenClock, home: Path) -> None:
    _stock(memory)
    clock.advance(days=400)
    memory.close()
    before = _digest(home)
    memory = _open(home, clock)
    report = memory.purge(dry_run=True)
    assert report.dry_run and len(report.found) == 2 and report.forgotten == 0
    memory.close()
    assert _digest(home) == before
    memory = _open(home, clock)
    assert len(memory.purge().found) == 2
    assert len(memory.purge().found) == 0
    memory.close()


def test_purge_reports_its_progress(memory: Memory, clock: FrozenClock) -> None:
    for n in range(7):
        memory.save_turn("s1", "user", f"turn number {n}")
    clock.advance(days=31)
    seen: list[tuple[int, int]] = []
    report = memory.purge(progress=lambda done, total: seen.append((done, total)))
    assert report.forgotten == 7 and memory.count() == 0
    assert seen[0] == (0, 7) and seen[-1] == (7, 7)


def test_purge_of_one_agent_leaves_the_others(home: Path, clock: FrozenClock) -> None:
    memory = _open(home, clock)
    memory.create_agent("other")
    memory.save_turn("s1", "user", "hello from default")
    memory.save_turn("s1", "user", "hello from other", agent="other")
    clock.advance(days=31)
    assert len(memory.purge(agent="other").found) == 1
    assert memory.count(agent="default") == 1 and memory.count(agent="other") == 0
    memory.close()


def test_per_tenant_retention(home: Path, clock: FrozenClock) -> None:
    config = (
        'tenant = "acme"\n\n'
        '[[policy]]\nname = "acme notes a week"\ntenants = ["acme"]\ntiers = ["mid"]\n'
        "retention_days = 7\n\n"
        '[[policy]]\nname = "globex notes a day"\ntenants = ["globex"]\ntiers = ["mid"]\n'
        "retention_days = 1\n"
    )
    memory = _open(home, clock, config)
    memory.note("acme note")
    clock.advance(days=2)
    assert memory.purge().found == ()
    clock.advance(days=6)
    assert [p.reason for p in memory.purge().found] == [
        "expired 2026-11-29 (policy 'acme notes a week')"
    ]
    memory.close()


def test_a_dm_fact_said_again_after_the_policy_is_kept_as_one_more_note(
    home: Path, clock: FrozenClock
) -> None:
    memory = _open(home, clock, "")
    memory.remember("Eve likes rooibos", channel="dm:eve", scope="channel")
    memory.close()
    memory = _open(home, clock)
    kept = []
    for _ in range(2):
        receipt = memory.remember("Eve likes rooibos", channel="dm:eve", scope="channel")
        assert receipt.item is not None and receipt.item.type is ItemType.NOTE
        kept.append(receipt.item.id)
    # each note keeps the id its receipt gave (a repeated id would be renamed on reading)
    assert len(set(kept)) == 2
    assert {n.id for n in memory.items(types=["note"])} == set(kept)
    memory.close()


def test_turns_and_notes_of_a_never_stored_channel_are_refused(memory: Memory, home: Path) -> None:
    memory.save_turn("hr1", "user", "the review says gristlemoth", channel="hr-private")
    refused = memory.note("note on gristlemoth", channel="hr-private", scope="channel")
    assert refused.outcome == "refused" and refused.policy is not None
    memory.save_turn("gen1", "user", "lunch at noon", channel="general")
    assert [it.channel for it in memory.items()] == ["general"]
    outcomes = [(e.action, e.outcome) for e in memory.audit()]
    assert ("save_turn", "refused") in outcomes and ("note", "refused") in outcomes
    memory.close()
    assert _holding(home, "gristlemoth") == []


def test_dm_turns_follow_a_dm_retention(home: Path, clock: FrozenClock) -> None:
    config = EXAMPLE + '\n[[policy]]\nname = "DMs a week"\ndm = true\nretention_days = 7\n'
    memory = _open(home, clock, config)
    memory.save_turn("d1", "user", "psst, the key is under the mat", channel="dm:ann")
    memory.save_turn("g1", "user", "the build is green", channel="general")
    clock.advance(days=8)
    report = memory.purge()
    assert [p.item.channel for p in report.found] == ["dm:ann"]
    assert "policy 'DMs a week'" in report.found[0].reason
    assert [it.channel for it in memory.items()] == ["general"]
    memory.close()


def test_a_tenant_rule_follows_the_agents_own_tenant(home: Path, clock: FrozenClock) -> None:
    config = (
        '[agents.acme-bot]\ntenant = "acme"\n\n'
        '[[policy]]\nname = "acme keeps no transcripts"\ntenants = ["acme"]\ntiers = ["short"]\n'
        "store = false\n"
    )
    memory = _open(home, clock, config)
    memory.create_agent("acme-bot")
    memory.save_turn("s1", "user", "hello from acme", agent="acme-bot")
    memory.save_turn("s1", "user", "hello from the default tenant")
    assert memory.count(agent="acme-bot") == 0 and memory.count() == 1
    assert memory.note("acme may keep notes", agent="acme-bot").outcome == "applied"
    memory.close()


def test_a_turn_a_policy_refuses_says_so(home: Path, clock: FrozenClock) -> None:
    config = '[[policy]]\nname = "never hr"\nchannels = ["hr"]\nstore = false\n'
    memory = _open(home, clock, config)
    turn = memory.save_turn("s1", "user", "salary talk", channel="hr", scope="channel")
    assert (turn, turn.outcome, turn.proposal) == ("s1_1", "refused", None)
    assert turn.policy is not None and "never hr" in turn.policy
    assert memory.count() == 0
    kept = memory.save_turn("s2", "user", "lunch talk", channel="general", scope="channel")
    assert (kept, kept.outcome, kept.policy) == ("s2_1", "applied", None)
    memory.close()
