"""Sessions whose ids the caller chose (``save_turn``) are live sessions: listed with
kronika's own, left alone by a chat's wake, and ended by distill once quiet."""

from __future__ import annotations

from kronika import Memory
from kronika.core.model import SessionRecord, TurnRecord
from kronika.testing import FrozenClock
from kronika.workflows.consolidate import Consolidator
from kronika.workflows.jobs import run_job
from kronika.workflows.session import Session


def _listed(memory: Memory) -> dict[str, str]:
    return {h.session_id: h.status for h in memory.workspace.session_headers("default")}


def test_ids_the_caller_chose_are_listed_as_given_and_imports_are_not(
    memory: Memory, clock: FrozenClock
) -> None:
    for sid in ("trip-lisbon", "a/b ü", "chat-1"):
        memory.save_turn(sid, "user", f"first turn of {sid}")
    memory.import_sessions(
        "default",
        [SessionRecord("conv-1", clock.now(), (TurnRecord("D1:1", "Ann", "hi", None),), None, "x")],
    )
    assert _listed(memory) == {"trip-lisbon": "open", "a/b ü": "open", "chat-1": "open"}
    text = (memory.workspace.agent_dir("default") / "sessions/trip-lisbon.md").read_text()
    assert "\nsource: api\nstatus: open\n" in text
    assert [t.content for t in memory.load_session("a/b ü")] == ["first turn of a/b ü"]


def test_a_chat_neither_resumes_nor_ends_a_saved_session(
    memory: Memory, clock: FrozenClock
) -> None:
    memory.save_turn("trip-lisbon", "user", "We fly on Friday")
    clock.advance(minutes=memory.settings.idle_minutes + 5)
    with Session(memory) as chat:
        assert chat.session_id is None
        chat.user("hello")
        assert chat.session_id != "trip-lisbon"
    assert _listed(memory)["trip-lisbon"] == "open"
    # a later turn goes on in the same session, still open
    memory.save_turn("trip-lisbon", "user", "and back on Monday")
    assert len(memory.load_session("trip-lisbon")) == 2


def test_distill_ends_a_quiet_saved_session_and_queues_it(
    memory: Memory, clock: FrozenClock
) -> None:
    memory.save_turn("trip-lisbon", "user", "Remember that I'm vegan.")
    clock.advance(minutes=memory.settings.idle_minutes - 1)
    memory.save_turn("chat-1", "user", "just started")
    assert Consolidator(memory, None).run("default").sessions == []
    clock.advance(minutes=2)  # trip-lisbon quiet for idle_minutes + 1, chat-1 for 2
    report = run_job(memory, "distill")
    assert report.done[0] == "session trip-lisbon: ended (no turn for idle_minutes)"
    assert report.waiting == ["session trip-lisbon"]  # no model: queued, nothing lost
    assert _listed(memory) == {"trip-lisbon": "ended", "chat-1": "open"}
    header = memory.workspace.session_headers("default")[1]
    assert header.fields["end_reason"] == "distill"


def test_an_older_saved_session_ended_later_leaves_the_newer_chat_in_the_active_context(
    memory: Memory, clock: FrozenClock
) -> None:
    memory.save_turn("trip-lisbon", "user", "We fly to Lisbon on Friday")
    clock.advance(hours=1)
    with Session(memory) as chat:
        chat.user("I started learning the cello")
    chat_id = memory.workspace.session_headers("default")[0].session_id
    assert f"session {chat_id}" in memory.active_context()
    clock.advance(hours=1)
    run_job(memory, "distill")  # ends and consolidates trip-lisbon, begun before the chat
    assert _listed(memory)["trip-lisbon"] == "ended"
    assert f"session {chat_id}" in memory.active_context()
    assert "trip-lisbon" not in memory.active_context()
