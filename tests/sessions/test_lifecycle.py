"""The whole session lifecycle against a local OpenAI-protocol server (SPEC L1-L8)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kronika import Memory, build_memory
from kronika.ports import LLM
from kronika.settings import Settings
from kronika.stores.markdown.sessions import read_header
from kronika.testing import FrozenClock, ScriptedChatServer
from kronika.workflows.consolidate import Consolidator
from kronika.workflows.session import Session

Brainy = Any  # the scripted model of conftest.py


def transcript_of(body: dict[str, Any]) -> str:
    return str(body["messages"][-1]["content"])


def _header(memory: Memory, agent: str, session_id: str) -> dict[str, str]:
    path = memory.workspace.agent_dir(agent) / "sessions" / f"{session_id}.md"
    return dict(read_header(path.read_text(encoding="utf-8")))


def _facts(memory: Memory) -> dict[str, str]:
    return {f.key or "": f.value or f.content for f in memory.facts(include_archived=False)}


def _extraction(facts: list[dict[str, object]], summary: str) -> dict[str, object]:
    return {"facts": facts, "summary": summary}


def test_five_sessions_extract_update_forget_summarise_and_wake_with_the_right_facts(
    memory: Memory, llm: LLM, brainy: Brainy, server: ScriptedChatServer, clock: FrozenClock
) -> None:
    brainy.extractions = [
        _extraction(
            [
                {"tag": "CORE", "key": "name", "value": "Ana"},
                {"tag": "CORE", "key": "city", "value": "Warsaw"},
                {"tag": "SKIP", "key": "weather", "value": "it rains"},
            ],
            "Ana introduced herself; she lives in Warsaw.",
        ),
        _extraction(
            [{"tag": "UPDATE", "key": "home", "value": "Kraków", "replaces": "city"}],
            "Ana moved to Kraków.",
        ),
        "Sure! Here are the facts: [CORE] drink tea",  # malformed: repaired on the next call
        _extraction([{"tag": "preference", "key": "Drink", "value": "tea"}], "Ana likes tea."),
        _extraction(
            [{"tag": "DELETE", "key": "drink", "value": "", "replaces": "drink"}],
            "Ana asked to drop the tea preference.",
        ),
        _extraction(
            [{"tag": "PROJECT", "key": "project", "value": "launching kronika"}],
            "Ana is launching kronika next week; the landing page is open.",
        ),
    ]
    session = Session(memory, agent="default", llm=llm)
    assert session.wake().memory_block == ""  # nothing known yet
    lines = [
        "Hi, I'm Ana and I live in Warsaw. It rains today.",
        "I moved to Kraków last month.",
        "By the way, I drink tea every morning.",
        "Actually, stop keeping track of what I drink.",
        "I'm launching kronika next week.",
    ]
    for n, line in enumerate(lines):
        turn = session.user(line)
        session.assistant(f"Noted ({n}).")
        if n == 1:
            # the 31-minute gap ended session 1 on arrival of this message (L5)
            assert turn.ended is not None
            assert [o.status for o in turn.ended.sessions] == ["consolidated"]
        clock.advance(minutes=31)
    report = session.close()
    assert report is not None

    # facts extracted, contradicted (history kept), forgotten
    facts = _facts(memory)
    assert facts["name"] == "Ana"
    assert facts["city"] == "Kraków"
    assert "drink" not in facts
    assert "weather" not in facts
    assert [f.value for f in memory.history("city")] == ["Warsaw", "Kraków"]
    # every session consolidated, with the prompt version and model recorded
    headers = memory.workspace.session_headers("default")
    assert len(headers) == 5
    assert {h.status for h in headers} == {"consolidated"}
    assert {h.fields["extractor"] for h in headers} == {"extraction@2"}
    assert {h.fields["model"] for h in headers} == {"minion-model"}
    # the malformed reply was repaired, not stored
    assert brainy.calls.count("extraction") == 6
    # L1 after five sessions, citing them
    l1 = memory.workspace.summary_headers("default", "L1")
    assert len(l1) == 1
    path, fields = l1[0]
    assert fields["sessions"].split(", ") == [h.session_id for h in headers]
    text = (memory.workspace.agent_dir("default") / path).read_text(encoding="utf-8")
    assert "Kraków" in text and f"(../../sessions/{headers[0].session_id}.md)" in text
    assert memory.recall("launching kronika", types=["summary"]).hits

    # the next session wakes up knowing the right things
    wake = Session(memory, agent="default", llm=llm).wake()
    assert "name: Ana" in wake.memory_block
    assert "city: Kraków" in wake.memory_block
    assert "Warsaw" not in wake.memory_block and "tea" not in wake.memory_block
    assert "project: launching kronika" in wake.memory_block
    assert wake.active_context.startswith("Ana is launching kronika next week")


def test_the_extraction_prompt_carries_the_brain_and_the_transcript(
    memory: Memory, llm: LLM, brainy: Brainy, server: ScriptedChatServer
) -> None:
    memory.remember(key="name", value="Ana")
    brainy.extractions = [_extraction([], "Small talk.")]
    session = Session(memory, llm=llm)
    session.user("What a lovely day in Gdańsk.")
    session.assistant("Indeed!")
    session.close()
    body = next(
        r.body
        for r in server.requests
        if "maintain the long-term memory" in r.body["messages"][0]["content"]
    )
    assert "- name: Ana" in body["messages"][0]["content"]
    assert "user: What a lovely day in Gdańsk." in transcript_of(body)
    assert "assistant: Indeed!" in transcript_of(body)
    assert body["model"] == "minion-model"
    assert body["response_format"] == {"type": "json_object"}


def test_without_a_model_nothing_is_lost_and_the_queue_is_drained_later(
    settings: Settings, clock: FrozenClock, brainy: Brainy, server: ScriptedChatServer
) -> None:
    with build_memory(settings, create=True, clock=clock) as memory:
        session = Session(memory, llm=None)
        turn = session.user("My name is Ana. I live in Berlin.")
        assert turn.messages[-1].content == "My name is Ana. I live in Berlin."
        session.assistant("(no model)")
        report = session.close()
        assert report is not None and [o.status for o in report.sessions] == ["queued"]
        sid = report.sessions[0].session_id
        # the rule-based extractor caught the explicit statements at once
        assert _facts(memory)["name"] == "Ana"
        assert _header(memory, "default", sid)["status"] == "ended"
        assert "no language model" in _header(memory, "default", sid)["error"]
        assert "not been summarised yet" in memory.active_context()
        # a second run without a model changes nothing and duplicates nothing
        agent_dir = memory.workspace.agent_dir("default")
        before = [(agent_dir / name).read_text() for name in ("brain.md", f"sessions/{sid}.md")]
        audit_before = len(memory.audit())
        Consolidator(memory, None).run("default")
        after = [(agent_dir / name).read_text() for name in ("brain.md", f"sessions/{sid}.md")]
        assert after == before and len(memory.audit()) == audit_before

    brainy.extractions = [
        _extraction(
            [{"tag": "CORE", "key": "city", "value": "Berlin"}], "Ana said hello from Berlin."
        )
    ]
    model_settings = settings.with_overrides(llm_base_url=server.base_url, llm_model="m")
    with build_memory(model_settings, create=True, clock=clock) as memory:
        from kronika.app import build_llm

        later = Session(memory, llm=build_llm(model_settings))
        wake = later.wake()  # the queue is retried at the next wake
        assert wake.recovered is not None
        assert [o.status for o in wake.recovered.sessions] == ["consolidated"]
        assert _header(memory, "default", sid)["status"] == "consolidated"
        assert memory.active_context().strip() == "Ana said hello from Berlin."
        # the model's "city" is the rule extractor's "location": one fact, not two
        assert _facts(memory) == {"name": "Ana", "location": "Berlin"}


def test_an_unreachable_model_queues_without_counting_attempts(
    memory: Memory, settings: Settings
) -> None:
    from kronika.app import build_llm

    dead = settings.with_overrides(
        llm_base_url="http://127.0.0.1:9/v1", llm_model="m", llm_retries=0, llm_timeout=2.0
    )
    session = Session(memory, llm=build_llm(dead))
    session.user("I live in Lisbon.")
    report = session.close()
    assert report is not None
    outcome = report.sessions[0]
    assert outcome.status == "queued"
    assert outcome.error is not None and "127.0.0.1:9" in outcome.error
    assert "attempts" not in _header(memory, "default", outcome.session_id)


def test_garbage_from_the_model_counts_attempts_until_failed(
    memory: Memory, llm: LLM, brainy: Brainy, server: ScriptedChatServer
) -> None:
    brainy.extractions = ["no json here"] * 20
    session = Session(memory, llm=llm)
    session.user("I like trains.")
    report = session.close()
    assert report is not None
    sid = report.sessions[0].session_id
    consolidator = Consolidator(memory, llm)
    for _ in range(memory.settings.consolidation_attempts - 1):
        consolidator.run("default")
    header = _header(memory, "default", sid)
    assert header["status"] == "failed"
    assert header["attempts"] == str(memory.settings.consolidation_attempts)
    assert consolidator.run("default").sessions == []  # failed ones wait for a request
    brainy.extractions = [_extraction([], "Trains.")]
    retried = consolidator.run("default", retry_failed=True)
    assert [o.status for o in retried.sessions] == ["consolidated"]


def test_a_killed_process_loses_nothing(settings: Settings, clock: FrozenClock) -> None:
    with build_memory(settings, create=True, clock=clock) as memory:
        first = Session(memory)
        first.user("Remember the train leaves at 7:40.")
        first.assistant("Got it.")
        first.user("And my seat is 42.")
        sid = first.session_id
        # the process dies here: no close(), no consolidation
    clock.advance(minutes=5)
    with build_memory(settings, clock=clock) as memory:
        again = Session(memory)
        wake = again.wake()
        assert wake.resumed == sid  # recent: the conversation goes on
        assert [m.content for m in again.window][-1] == "And my seat is 42."
        again.user("Which seat was it?")
        assert again.session_id == sid
    clock.advance(minutes=45)
    with build_memory(settings, clock=clock) as memory:
        late = Session(memory)
        wake = late.wake()
        assert wake.resumed is None
        assert wake.recovered is not None
        assert wake.recovered.sessions[0].session_id == sid
        header = _header(memory, "default", sid)
        assert header["status"] == "ended" and header["end_reason"] == "interrupted"
        assert [t.content for t in memory.load_session(sid)] == [
            "Remember the train leaves at 7:40.",
            "Got it.",
            "And my seat is 42.",
            "Which seat was it?",
        ]


def test_long_conversations_are_summarised_not_truncated(
    settings: Settings, clock: FrozenClock, brainy: Brainy, server: ScriptedChatServer
) -> None:
    small = settings.with_overrides(context_budget=400, llm_base_url=server.base_url, llm_model="m")
    from kronika.app import build_llm

    with build_memory(small, create=True, clock=clock) as memory:
        session = Session(memory, llm=build_llm(small))
        summarized = False
        for n in range(12):
            turn = session.user(
                f"Message {n}: tell me about the trains from Kraków to Gdańsk. " * 2
            )
            summarized = summarized or turn.summarized
            session.assistant(f"Answer {n}: there are several trains every day.")
        assert summarized and "rolling" in brainy.calls
        assert session.summary == "Earlier: the user talked about trains to Gdańsk."
        # the window holds only what came after the summary, the latest messages verbatim
        assert session.window[0].index > 1 and len(session.window) < 24
        assert session.window[-1].content.startswith("Answer 11")
        payload = session.user("And the last one?").messages
        assert payload[1].content.endswith("Earlier: the user talked about trains to Gdańsk.")
        # the summary is saved into the session file; every message is still there
        turns = memory.load_session(session.session_id or "")
        assert any(t.speaker == "summary" for t in turns)
        assert sum(1 for t in turns if t.speaker == "user") == 13


def test_without_a_model_the_older_part_becomes_an_extractive_digest(
    settings: Settings, clock: FrozenClock
) -> None:
    small = settings.with_overrides(context_budget=300)
    with build_memory(small, create=True, clock=clock) as memory:
        session = Session(memory)
        for n in range(10):
            session.user(f"Point {n}. The rest of this sentence is filler about nothing much.")
        assert session.summary is not None
        assert "user: Point 0." in session.summary or "earlier messages" in session.summary
        assert [m.content for m in session.window][-1].startswith("Point 9.")
        _, tokens = session._payload((), ())
        assert tokens <= 300


def test_turn_time_recall_brings_back_an_old_conversation(
    settings: Settings, clock: FrozenClock
) -> None:
    with build_memory(
        settings.with_overrides(similarity_threshold=0.3), create=True, clock=clock
    ) as memory:
        old = Session(memory)
        old.user("My sister Kasia is getting married in Sopot in June.")
        old.assistant("Congratulations to Kasia!")
        old.close()
        clock.advance(days=20)
        new = Session(memory)
        new.wake()
        turn = new.user("When is Kasia getting married in Sopot?")
        assert turn.recalled, "the old conversation should be recalled"
        assert "Sopot" in turn.recalled[0].item.content
        assert "## Recalled from earlier conversations" in turn.messages[0].content
        unrelated = new.user("zzz qqq xxx")
        assert unrelated.recalled == ()


def test_new_conversation_command_ends_the_session(memory: Memory) -> None:
    session = Session(memory)
    session.user("I am planning a trip.")
    first = session.session_id
    turn = session.user("new conversation")
    assert turn.command is not None and turn.ended is not None
    assert session.session_id is None
    assert _header(memory, "default", first or "")["end_reason"] == "new"
    session.user("Hello again.")
    assert session.session_id != first


def test_session_files_are_plain_markdown(memory: Memory, tmp_path: Path) -> None:
    session = Session(memory)
    session.user("Hello there.")
    session.assistant("Hi!")
    sid = session.session_id or ""
    text = (memory.workspace.agent_dir("default") / "sessions" / f"{sid}.md").read_text()
    assert text.startswith("---\nsession: ")
    assert "status: open" in text and "source: chat" in text
    assert f"### [{sid}_1] user · " in text and f"### [{sid}_2] assistant · " in text
    assert json.dumps  # keep import used for readability of failures


def test_l2_summarises_l1_summaries_by_volume(
    settings: Settings, clock: FrozenClock, brainy: Brainy, server: ScriptedChatServer
) -> None:
    from kronika.app import build_llm

    every_two = settings.with_overrides(
        l1_every=2, l2_every=2, llm_base_url=server.base_url, llm_model="m"
    )
    brainy.extractions = [_extraction([], f"Session {n}.") for n in range(5)]
    with build_memory(every_two, create=True, clock=clock) as memory:
        llm = build_llm(every_two)
        for n in range(5):
            session = Session(memory, llm=llm)
            session.user(f"Talk number {n}.")
            session.close()
            clock.advance(minutes=1)
        l1 = memory.workspace.summary_headers("default", "L1")
        l2 = memory.workspace.summary_headers("default", "L2")
        assert [p for p, _ in l1] == ["summaries/L1/L1_001.md", "summaries/L1/L1_002.md"]
        assert len(l2) == 1
        path, fields = l2[0]
        assert fields["summaries"] == "L1_001, L1_002"
        sessions = [h.session_id for h in memory.workspace.session_headers("default")]
        assert fields["sessions"].split(", ") == sessions[:4]  # the fifth is not in an L1 yet
        assert fields["prompt"] == "summary-l2@1"
        assert brainy.calls.count("L1") == 2 and brainy.calls.count("L2") == 1
        assert memory.recall("projects", types=["summary"]).hits  # summaries are searchable


def test_extract_from_conversation_stores_and_consolidates_a_finished_chat(
    memory: Memory, llm: LLM, brainy: Brainy, server: ScriptedChatServer
) -> None:
    from kronika.workflows.session import extract_from_conversation

    brainy.extractions = [
        _extraction([{"tag": "CORE", "key": "job", "value": "nurse"}], "Ana works nights.")
    ]
    report = extract_from_conversation(
        memory,
        [
            ("user", "I'm a nurse, I work nights."),
            ("assistant", "That sounds tiring."),
            ("user", "forget where I live"),
        ],  # a command inside is not replayed
        llm=llm,
    )
    assert [o.status for o in report.sessions] == ["consolidated"]
    assert _facts(memory) == {"job": "nurse"}
    sid = report.sessions[0].session_id
    assert _header(memory, "default", sid)["source"] == "chat"
    assert [t.speaker for t in memory.load_session(sid)] == ["user", "assistant", "user"]
    assert memory.active_context().strip() == "Ana works nights."


def test_extract_from_conversation_without_a_model_queues_it(memory: Memory) -> None:
    from kronika.workflows.session import extract_from_conversation

    report = extract_from_conversation(memory, [("user", "My name is Ola.")])
    assert [o.status for o in report.sessions] == ["queued"]
    assert _facts(memory) == {"name": "Ola"}


def test_a_suggest_level_agent_turns_extracted_facts_into_proposals(
    settings: Settings, clock: FrozenClock, brainy: Brainy, server: ScriptedChatServer
) -> None:
    from kronika.app import build_llm
    from kronika.settings import AgentPolicy

    suggest = settings.with_overrides(
        llm_base_url=server.base_url, llm_model="m", agents={"default": AgentPolicy(autonomy=1)}
    )
    brainy.extractions = [_extraction([{"tag": "CORE", "key": "name", "value": "Ana"}], "Hi.")]
    with build_memory(suggest, create=True, clock=clock) as memory:
        session = Session(memory, llm=build_llm(suggest))
        session.user("I'm Ana.")
        report = session.close()
        assert report is not None
        assert report.sessions[0].written[0].startswith("? name: Ana (proposal p-")
        assert memory.facts() == []  # nothing applied without the person's approval...
        (proposal,) = memory.proposals()  # ...and nothing lost
        memory.approve(proposal.id)
        assert _facts(memory) == {"name": "Ana"}


def test_a_message_after_an_idle_gap_reports_the_new_session(
    memory: Memory, clock: FrozenClock
) -> None:
    session = Session(memory, agent="default", llm=None)
    first = session.user("I moved to Kraków last month.")
    assert first.session_id is not None and first.session_id == session.session_id
    clock.advance(minutes=31)
    second = session.user("I drink tea every morning.")
    assert second.ended is not None  # the gap ended the first session
    assert second.session_id == session.session_id
    assert second.session_id is not None and second.session_id != first.session_id
    saved = [t.content for t in memory.load_session(second.session_id)]
    assert any("tea" in line for line in saved) and not any("Kraków" in s for s in saved)
    session.close()
