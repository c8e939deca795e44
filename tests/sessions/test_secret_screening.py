"""Secrets are screened on the one write path: whatever writes them (API, tools, memory
commands, the chat loop, consolidation, imports), no file of the workspace holds them
and nothing shows them back; ``secrets = "refuse"`` writes nothing, ``"allow"`` keeps
them as written."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from kronika import Memory, build_memory
from kronika.app import build_llm
from kronika.core.model import SessionRecord, TurnRecord
from kronika.errors import InvalidInput
from kronika.settings import AgentPolicy, Settings
from kronika.testing import FrozenClock, ScriptedChatServer
from kronika.workflows.chat import ChatAgent
from kronika.workflows.session import Session
from kronika.workflows.tools import call_tool

KEY = "sk-proj-Q3x9vTz81LmNpR4sWuY7aBcD0eFgHiJk"
CARD = "4111 1111 1111 1111"
PASSWORD = "Tr0ub4dor&3x"


def workspace_bytes(home: Path) -> bytes:
    """Every byte of every file in the workspace (Markdown, audit, index and its WAL)."""
    return b"".join(p.read_bytes() for p in sorted(home.rglob("*")) if p.is_file())


def record_bytes(home: Path) -> bytes:
    """The store of record: the Markdown files and the audit trail."""
    files = [*home.rglob("*.md"), home / "audit.jsonl"]
    return b"".join(p.read_bytes() for p in sorted(files) if p.is_file())


def assert_nowhere(home: Path, *values: str) -> None:
    data = workspace_bytes(home)
    for value in values:
        assert value.encode() not in data, f"{value!r} was written into the workspace"


def test_remember_note_and_turns_through_the_api_are_redacted(memory: Memory, home: Path) -> None:
    receipt = memory.remember(f"my OpenAI key is {KEY}")
    assert receipt.item is not None and receipt.item.content == (
        "my OpenAI key is [secret: openai-key]"
    )
    keyed = memory.remember(key="bank password", value=PASSWORD)
    assert keyed.item is not None and keyed.item.value == "[secret: password]"
    memory.note(f"paid with card {CARD} today")
    memory.save_turn("s1", "user", f"use {KEY} for the test server")
    memory.sync()
    brain = memory.brain()
    assert "[secret: openai-key]" in brain and "bank password: [secret: password]" in brain
    daily = "".join(p.read_text() for p in (home / "agents/default/memory").glob("*.md"))
    assert "paid with card [secret: card-number] today" in daily
    hits = memory.recall("OpenAI key test server card").hits
    assert hits and all(KEY not in h.item.content and CARD not in h.item.content for h in hits)
    assert_nowhere(home, KEY, CARD, PASSWORD)


def test_the_same_secret_said_twice_is_one_fact(memory: Memory) -> None:
    memory.remember(f"my OpenAI key is {KEY}")
    again = memory.remember(f"my OpenAI key is {KEY}")
    assert type(again.change).__name__ == "TouchFact"
    assert len(memory.facts()) == 1


def test_imported_sessions_are_redacted(memory: Memory, home: Path) -> None:
    at = datetime(2025, 3, 1, tzinfo=UTC)
    session = SessionRecord(
        "import-1",
        at,
        (
            TurnRecord("t1", "user", f"my card is {CARD}", at),
            TurnRecord("t2", "assistant", "Got it.", at),
        ),
        title=f"card {CARD}",
    )
    memory.import_sessions("default", [session])
    turns = memory.load_session("import-1")
    assert [t.content for t in turns] == ["my card is [secret: card-number]", "Got it."]
    assert_nowhere(home, CARD)


def test_tools_answer_with_what_was_stored(memory: Memory, home: Path) -> None:
    stored = call_tool(memory, "default", "remember", {"key": "openai key", "value": KEY})
    assert stored["ok"] and stored["stored"] == "openai key: [secret: openai-key]"
    assert KEY not in json.dumps(stored)
    assert_nowhere(home, KEY)


def test_a_proposal_never_holds_the_secret(settings: Settings, clock: FrozenClock) -> None:
    policies = {"default": AgentPolicy(autonomy=1)}
    with build_memory(settings.with_overrides(agents=policies), create=True, clock=clock) as memory:
        proposed = call_tool(memory, "default", "remember", {"value": f"wifi password: {PASSWORD}"})
        assert proposed["outcome"] == "proposed"
        assert PASSWORD not in json.dumps(proposed)
        (summary,) = [p.summary for p in memory.proposals()]
        assert summary.endswith("wifi password: [secret: password]")
        memory.approve(proposed["proposal"])
        assert [f.content for f in memory.facts()] == ["wifi password: [secret: password]"]
        assert_nowhere(settings.home, PASSWORD)


def test_a_memory_command_confirms_without_echoing_the_secret(memory: Memory, home: Path) -> None:
    session = Session(memory)
    turn = session.user(f"remember that my API key is {KEY}")
    assert turn.command is not None
    assert KEY not in turn.command.reply and "[secret: openai-key]" in turn.command.reply
    session.assistant(turn.command.reply)
    assert all(KEY not in m.content for m in session.window)
    session.close()
    assert_nowhere(home, KEY)


def test_chat_keeps_no_secret_and_does_not_send_it_on(
    memory: Memory, home: Path, llm_settings: Settings, server: ScriptedChatServer, brainy: Any
) -> None:
    brainy.chat = [f"Saved your key {KEY}.", "Sure."]
    brainy.extractions = [
        {
            "facts": [{"tag": "CORE", "key": "openai key", "value": KEY}],
            "summary": f"The user shared the key {KEY} and a card {CARD}.",
        }
    ]
    llm = build_llm(llm_settings)
    session = Session(memory, llm=llm, minion=build_llm(llm_settings, minion=True))
    agent = ChatAgent(session, llm, tools=False)
    first = agent.send(f"here is my key {KEY} and my card {CARD}")
    assert KEY not in first.text and "[secret: openai-key]" in first.text
    agent.send("thanks")
    session.close()
    assert "chat" in brainy.calls and "extraction" in brainy.calls
    sent = json.dumps([r.body for r in server.requests])
    assert KEY not in sent and CARD not in sent  # the window holds what the transcript holds
    assert "[secret: openai-key]" in (home / "agents/default/active_context.md").read_text()
    assert "[secret: openai-key]" in memory.brain()
    assert_nowhere(home, KEY, CARD)


def test_refuse_writes_nothing_and_names_only_the_kind(
    settings: Settings, clock: FrozenClock
) -> None:
    with build_memory(settings.with_overrides(secrets="refuse"), create=True, clock=clock) as mem:
        before = record_bytes(settings.home)
        with pytest.raises(InvalidInput, match=r"openai-key") as caught:
            mem.remember(f"my key is {KEY}")
        assert KEY not in str(caught.value)
        with pytest.raises(InvalidInput, match=r"card-number"):
            mem.note(f"card {CARD}")
        refused = call_tool(mem, "default", "remember", {"value": f"password: {PASSWORD}"})
        assert not refused["ok"] and "password" in refused["error"]
        assert PASSWORD not in refused["error"]
        assert mem.facts() == []
        assert record_bytes(settings.home) == before
        mem.remember("I like green tea")  # ordinary memories are kept as always
        assert [f.content for f in mem.facts()] == ["I like green tea"]


def test_refuse_in_chat_neither_keeps_nor_sends_the_message(
    memory: Memory, llm_settings: Settings, server: ScriptedChatServer, clock: FrozenClock
) -> None:
    memory.close()
    refusing = llm_settings.with_overrides(secrets="refuse")
    with build_memory(refusing, clock=clock) as mem:
        llm = build_llm(refusing)
        session = Session(mem, llm=llm)
        agent = ChatAgent(session, llm, tools=False)
        answer = agent.send(f"my key is {KEY}")
        assert answer.error is not None and "openai-key" in answer.text and KEY not in answer.text
        assert server.requests == []
        assert session.session_id is None
        assert agent.send("hello").error is None  # the conversation goes on
        assert [t.content for t in mem.load_session(session.session_id or "")][0] == "hello"
        assert_nowhere(refusing.home, KEY)


def test_allow_keeps_the_secret_as_written(settings: Settings, clock: FrozenClock) -> None:
    with build_memory(settings.with_overrides(secrets="allow"), create=True, clock=clock) as mem:
        receipt = mem.remember(f"my key is {KEY}")
        assert receipt.item is not None and KEY in receipt.item.content
        assert KEY in mem.brain()


def test_restoring_an_export_redacts_what_it_writes(memory: Memory, home: Path) -> None:
    from kronika.workflows.portability import FORMAT, VERSION, import_export

    brain = "# Brain\n\n## User\n- **github token**: ghp_4Gh7Jk2Lm9Np3Qr5St8Uv1Wx6Yz0AbCdE1234\n"
    export = {
        "format": FORMAT,
        "version": VERSION,
        "agents": {"ana": {"files": {"brain.md": brain}}},
    }
    import_export(memory, export)
    assert "github token: [secret: github-token]" in memory.brain(agent="ana")
    assert_nowhere(home, "ghp_4Gh7Jk2Lm9Np3Qr5St8Uv1Wx6Yz0AbCdE1234")


def test_entities_and_tags_do_not_carry_a_secret_out(memory: Memory, home: Path) -> None:
    aws = "AKIAQ3X9VTZ81LMNPR4S"
    receipt = memory.remember(
        f"Ana gave me {aws} for the Kraków bucket", entities=[KEY, "Bob"], tags=[KEY, "aws"]
    )
    assert receipt.item is not None
    assert receipt.item.entities == ("Kraków", "Bob")
    assert receipt.item.tags == ("aws",)
    assert_nowhere(home, aws, KEY)


def test_a_finished_conversation_handed_over_whole_is_redacted(memory: Memory, home: Path) -> None:
    from kronika.workflows.session import extract_from_conversation

    report = extract_from_conversation(
        memory, [("user", f"my card is {CARD}"), ("assistant", "Noted, card ending 1111.")]
    )
    assert report.waiting  # no model: the session waits for consolidation
    (session,) = (home / "agents/default/sessions").glob("*.md")
    assert "my card is [secret: card-number]" in session.read_text()
    assert_nowhere(home, CARD)
