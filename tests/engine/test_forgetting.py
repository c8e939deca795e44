"""Forgetting forgets — one value, not its siblings — everywhere it was written, with a
receipt; over a real workspace and index."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kronika import Memory, build_memory, load_settings
from kronika.app import build_llm
from kronika.engine.changes import WriteSummary
from kronika.engine.write import SYSTEM
from kronika.errors import InvalidInput, NotFound
from kronika.settings import Settings
from kronika.testing import FrozenClock, ScriptedChatServer
from kronika.workflows.chat import ChatAgent
from kronika.workflows.session import Session
from kronika.workflows.tools import call_tool

WORD = "rooibos"


def _values(memory: Memory, key: str) -> list[str]:
    return sorted(f.value or "" for f in memory.facts() if f.key == key)


def _files(memory: Memory) -> dict[str, str]:
    """Every Markdown file and the audit trail under the workspace, by relative path."""
    home = memory.settings.home
    found = {
        p.relative_to(home).as_posix(): p.read_text(encoding="utf-8", errors="replace")
        for p in home.rglob("*")
        if p.is_file() and (p.suffix == ".md" or p.name == "audit.jsonl")
    }
    assert "audit.jsonl" in found
    return found


def _mentions(memory: Memory) -> list[str]:
    return [path for path, text in _files(memory).items() if WORD in text.casefold()]


@pytest.mark.parametrize(
    ("kept", "gone", "said"),
    [
        (["tea", "vinyl records"], "tea", "Forget that I prefer tea"),
        (["herbatę", "płyty winylowe"], "herbatę", "Zapomnij, że wolę herbatę"),
        (["discos de vinilo", "mate"], "mate", "Olvidate de que me gusta el mate"),
        (["вінілові платівки", "чай"], "чай", "Забудь, що я люблю чай"),
    ],
)
def test_forgetting_one_value_keeps_its_siblings(
    memory: Memory, kept: list[str], gone: str, said: str
) -> None:
    for value in kept:
        memory.remember(key="preference", value=value, multi=True)
    turn = Session(memory).user(said)
    assert turn.command is not None and gone in turn.command.reply
    assert _values(memory, "preference") == [v for v in kept if v != gone]


def test_the_tool_the_command_and_the_api_forget_alike(memory: Memory) -> None:
    for value in ("tea", "vinyl records", "jazz"):
        memory.remember(key="preference", value=value, multi=True)
    done = call_tool(memory, "default", "forget", {"topic": "I prefer tea"})
    assert done["ok"] and done["forgotten"] == ["preference: tea"]
    done = call_tool(memory, "default", "forget", {"key": "preference", "value": "JAZZ"})
    assert done["ok"] and done["outcome"] == "applied"
    assert _values(memory, "preference") == ["vinyl records"]
    memory.remember(key="preference", value="jazz", multi=True)
    receipt = memory.forget(value="jazz")
    assert [f.value for f in receipt.items] == ["jazz"]
    assert _values(memory, "preference") == ["vinyl records"]
    with pytest.raises(NotFound):
        memory.forget(value="jazz")
    with pytest.raises(InvalidInput):
        memory.forget("f-1", topic="tea")


def test_a_statement_names_the_fact_whatever_language_its_key_is_in(memory: Memory) -> None:
    memory.remember(key="nombre", value="Lucas")
    memory.remember(key="city", value="Kraków")
    receipt = memory.forget(topic="my name is lucas.")
    assert [f.key for f in receipt.items] == ["nombre"]
    assert [f.key for f in memory.facts()] == ["city"]
    assert [f.value for f in memory.forget(value="kraków!").items] == ["Kraków"]


def test_a_topic_that_names_only_a_key_forgets_the_key_and_its_history(memory: Memory) -> None:
    memory.remember(key="job", value="baker")
    memory.remember(key="job", value="engineer at Acme")
    memory.remember(key="drink", value="tea")
    receipt = memory.forget(topic="my job")
    assert sorted(f.value or "" for f in receipt.items) == ["baker", "engineer at Acme"]
    assert memory.history("job") == [] and _values(memory, "drink") == ["tea"]


def _conversation_about_rooibos(memory: Memory) -> None:
    """A fact learned from what the user said, a summary and notes that mention it."""
    first = Session(memory)
    first.user("I prefer Rooibos. My dog is called Pixel.")
    first.assistant("Rooibos is a fine choice.")
    first.close()  # no model: the rule extractor learns the preference at once
    assert _values(memory, "preference") == ["Rooibos"]
    memory.note("Bought more rooibos at the market")
    page = memory.workspace.agent_dir("default") / "bank" / "entities" / "Pixel.md"
    page.write_text("# Pixel\n\n- Pixel sleeps by the rooibos tin\n", encoding="utf-8")
    memory.memory_write(
        "default",
        "summaries",
        WriteSummary("summaries/L1/2026-11.md", "The user drinks\nrooibos daily.", ()),
        SYSTEM,
    )
    assert len(_mentions(memory)) >= 7


def test_forgetting_redacts_every_file_and_recall_at_once(memory: Memory) -> None:
    _conversation_about_rooibos(memory)
    chat = ChatAgent(Session(memory), None)
    answer = chat.send("Forget that I prefer rooibos.")
    assert "rooibos" in answer.text.casefold()  # the person sees what was forgotten

    assert _mentions(memory) == []
    files = _files(memory)
    transcripts = "".join(t for p, t in files.items() if p.startswith("agents/default/sessions"))
    assert transcripts.count("[forgotten]") >= 4  # what was said, answered, asked, confirmed
    assert "My dog is called Pixel." in transcripts  # the rest of the sentence stays
    assert "[forgotten]" in files["agents/default/active_context.md"]
    # a topic forgets every sentence about it, however worded, not only its words
    summary = files["agents/default/summaries/L1/2026-11.md"]
    assert "[forgotten]" in summary and "drinks" not in summary
    for mode in ("lexical", "vector", "hybrid"):
        hits = memory.recall(WORD, mode=mode, k=50).hits  # no reindex
        assert all(WORD not in h.item.content.casefold() for h in hits)
    memory.reindex()
    assert all(WORD not in h.item.content.casefold() for h in memory.recall(WORD, k=50).hits)


def test_forget_that_right_after_remember_leaves_no_trace_in_the_transcript(
    memory: Memory,
) -> None:
    chat = ChatAgent(Session(memory), None)
    assert chat.send(f"Remember that I prefer {WORD}.").text.startswith("Remembered")
    assert WORD in chat.send("Forget that.").text
    assert memory.facts() == [] and _mentions(memory) == []
    said = [t.content for t in memory.load_session(chat.session.session_id or "")]
    assert said == [
        "Remember that I prefer [forgotten].",
        "Remembered: preference: [forgotten]",
        "Forget that.",
        "Forgotten:\n- preference: [forgotten]",
    ]


def test_a_forget_the_model_makes_with_its_tool_is_redacted_from_its_answer(
    memory: Memory, settings: Settings
) -> None:
    memory.remember(key="preference", value=WORD, multi=True)
    script = [
        {"content": None, "tool_calls": [{"name": "forget", "arguments": {"topic": WORD}}]},
        f"Done: I no longer know that you like {WORD.title()}.",
    ]
    with ScriptedChatServer(script) as server:
        llm = build_llm(settings.with_overrides(llm_base_url=server.base_url, llm_model="m"))
        session = Session(memory, llm=llm)
        answer = ChatAgent(session, llm).send(f"Please drop {WORD} from what you keep about me")
        assert WORD in answer.text.casefold() and answer.tools[0].result["outcome"] == "applied"
    assert memory.facts() == [] and _mentions(memory) == []
    said = [t.content for t in memory.load_session(session.session_id or "")]
    assert said == [
        "[forgotten]",  # the sentence about it, written before the forget: whole
        "Done: I no longer know that you like [forgotten].",
    ]


def test_the_sentence_a_model_paraphrased_into_a_fact_is_redacted_whole(memory: Memory) -> None:
    session = Session(memory)
    session.user("I really love to go hiking up in the mountains. The weather is nice.")
    sid = session.session_id or ""
    memory.remember(key="hobby", value="loves hiking in mountains", tags=(f"session:{sid}",))
    receipt = memory.forget(key="hobby")
    [turn] = memory.load_session(sid)
    assert turn.content == "[forgotten] The weather is nice."
    assert ("sessions/" + sid + ".md", "redacted") in {(p.path, p.action) for p in receipt.places}


def test_a_value_too_short_to_look_for_takes_the_sentence_it_was_said_in(memory: Memory) -> None:
    session = Session(memory)
    session.user("My name is Al. I like Algebra and Al Green.")
    sid = session.session_id or ""
    session.close()  # the rules learn name: Al
    assert _values(memory, "name") == ["Al"]
    memory.forget(key="name")
    [turn] = memory.load_session(sid)
    assert turn.content == "[forgotten] I like Algebra and Al Green."


def test_a_summary_forgotten_by_id_is_deleted_and_leaves_the_index(memory: Memory) -> None:
    change = WriteSummary("summaries/L1/a.md", f"Ana drinks {WORD} daily.", ())
    memory.memory_write("default", "summaries", change, SYSTEM)
    [hit] = memory.recall(WORD, k=5).hits
    receipt = memory.forget(hit.item.id)
    assert [(p.path, p.action) for p in receipt.places] == [("summaries/L1/a.md", "deleted")]
    assert receipt.index_removed == 1 and memory.recall(WORD, k=5).hits == ()
    assert _mentions(memory) == []


def test_the_audit_trail_records_that_something_was_forgotten_not_what(memory: Memory) -> None:
    memory.remember(key="preference", value=WORD, multi=True)
    receipt = memory.forget(key="preference", value=WORD)
    entries = memory.audit()
    assert [e.action for e in entries] == ["remember", "forget"]
    assert entries[0].summary == "preference: [forgotten]"
    forget = entries[-1]
    assert forget.item_id == receipt.items[0].id and "preference" in forget.summary
    assert "brain.md" in forget.summary and WORD not in forget.summary
    assert receipt.audit_redacted == 1


@pytest.mark.parametrize("torn", [False, True], ids=["escaped", "escaped and torn"])
def test_a_forgotten_value_is_found_in_audit_lines_however_json_escaped_it(
    memory: Memory, torn: bool
) -> None:
    # A trail another writer wrote: "ó" as \u00f3, a line break and a tab beside the
    # value (its words glued to the escapes' letters), quotes around it; and a torn
    # last line, redacted as text (a backslash before the value, read as no escape).
    memory.remember(key="city", value="Kraków")
    trail = memory.settings.home / "audit.jsonl"
    records = [json.loads(line) for line in trail.read_text(encoding="utf-8").splitlines()]
    if torn:  # the value in the torn line alone
        lines = [json.dumps({**records[-1], "summary": "a city"}), '{"summary": "to\\Kraków']
    else:
        summaries = ("moved to Kraków", "moved to\nKraków\tthen", 'said "Kraków"')
        records += [{**records[-1], "summary": s} for s in summaries]
        lines = [json.dumps(r, ensure_ascii=True) for r in records]
    trail.write_text("\n".join(lines), encoding="utf-8")
    assert "Kraków" not in trail.read_text(encoding="utf-8").replace("\\Kraków", "")
    receipt = memory.forget(key="city", value="Kraków")
    assert "krak" not in trail.read_text(encoding="utf-8").casefold()
    if torn:
        assert receipt.audit_redacted == 0  # a torn line is no entry
        return
    assert receipt.audit_redacted == 4  # the remember's line and the three
    assert [e.summary for e in memory.audit() if e.summary.startswith(("moved", "said"))] == [
        "moved to [forgotten]",
        "moved to\n[forgotten]\tthen",
        'said "[forgotten]"',
    ]


def test_the_receipt_lists_every_place_touched(memory: Memory) -> None:
    _conversation_about_rooibos(memory)
    receipt = memory.forget(topic="rooibos")
    assert receipt.applied and receipt.proposal is None
    places = {(p.path, p.action) for p in receipt.places}
    assert ("brain.md", "removed") in places
    assert ("active_context.md", "redacted") in places
    assert ("summaries/L1/2026-11.md", "redacted") in places
    assert ("memory/2026-11-22.md", "removed") in places  # notes about it go whole
    assert ("bank/entities/Pixel.md", "removed") in places
    assert ("audit.jsonl", "redacted") in places
    assert any(path.startswith("sessions/") and act == "redacted" for path, act in places)
    assert all(p.count >= 1 for p in receipt.places)
    # the fact's row and the two notes about it (the daily log's, the entity page's)
    assert receipt.index_removed == 3
    assert receipt.index_rewritten >= 4  # turns, summary, Active Context


def test_an_agent_at_autonomy_1_is_told_its_forget_waits_for_approval(
    home: Path, clock: FrozenClock
) -> None:
    home.mkdir(parents=True)
    (home / "kronika.toml").write_text("[agents.default]\nautonomy = 1\n")
    settings = load_settings(home, environ={}, embedder="hashing")
    with build_memory(settings, create=True, clock=clock) as memory:
        memory.remember(key="preference", value=WORD, multi=True)
        done = call_tool(memory, "default", "forget", {"topic": WORD})
        assert done["outcome"] == "proposed" and done["forgotten"] == []
        assert "approval" in done["message"] and done["would_forget"] == [f"preference: {WORD}"]
        assert _values(memory, "preference") == [WORD]
        [proposal] = memory.proposals()
        assert proposal.id == done["proposal"] and WORD in proposal.summary
        memory.approve(proposal.id)
        assert memory.facts() == [] and memory.proposals() == []
        assert _mentions(memory) == []


def test_pending_proposals_that_hold_the_forgotten_text_are_withdrawn(
    home: Path, clock: FrozenClock
) -> None:
    home.mkdir(parents=True)
    (home / "kronika.toml").write_text("[agents.default]\nautonomy = 1\n")
    settings = load_settings(home, environ={}, embedder="hashing")
    with build_memory(settings, create=True, clock=clock) as memory:
        memory.remember(key="drink", value=WORD)
        memory.remember(key="drink", value=f"{WORD} with milk", source_agent="default")
        memory.remember(key="pet", value="a cat", source_agent="default")
        receipt = memory.forget(key="drink")
        assert ("proposals.md", "withdrawn") in {(p.path, p.action) for p in receipt.places}
        assert [p.summary for p in memory.proposals()] == ["remember **pet**: a cat"]
        assert _mentions(memory) == []


def test_dont_remember_this_keeps_the_words_out_of_the_audit_trail(memory: Memory) -> None:
    session = Session(memory)
    session.user(f"My secret tea is {WORD}.")
    turn = session.user("Don't remember this.")
    assert turn.command is not None and turn.command.drop_previous
    assert _mentions(memory) == []


def test_forget_json_and_table_show_the_receipt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from kronika.cli import main

    monkeypatch.setenv("KRONIKA_HOME", str(tmp_path / "ws"))
    monkeypatch.setenv("KRONIKA_EMBEDDER", "hashing")
    assert main(["init"]) == 0
    assert main(["remember", "--key", "preference", "--multi", WORD]) == 0
    assert main(["remember", "--key", "preference", "--multi", "jazz"]) == 0
    assert main(["forget", "--key", "preference", "--value", WORD, "--json"]) == 0
    capsys.readouterr()
    assert main(["remember", "--key", "preference", "--multi", WORD]) == 0
    capsys.readouterr()
    assert main(["forget", "--value", WORD, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["outcome"] == "applied" and [f["value"] for f in data["forgotten"]] == [WORD]
    assert {"path": "brain.md", "action": "removed", "count": 1, "lines": 1} in data["places"]
    assert data["index"]["removed"] == 1 and data["audit_redacted"] >= 1
    assert main(["remember", "--key", "preference", "--multi", WORD]) == 0
    assert main(["forget", "--topic", WORD]) == 0
    table = capsys.readouterr().out
    assert "receipt" in table and "brain.md" in table and "audit.jsonl" in table
    assert main(["forget", "--value", WORD]) == 5


def test_no_file_in_the_workspace_holds_a_forgotten_word(memory: Memory) -> None:
    _conversation_about_rooibos(memory)
    memory.forget(topic=WORD)
    memory.close()
    home = memory.settings.home
    holding = [
        p.relative_to(home).as_posix()
        for p in home.rglob("*")
        if p.is_file() and WORD.encode() in p.read_bytes().lower()
    ]
    assert holding == []


MARK = "<!-- moved out -->\n"
"""The line a fact forgotten from the archive leaves."""


def test_forgetting_archived_facts_takes_out_their_bullets_alone(
    home: Path, clock: FrozenClock
) -> None:
    """A forget finds the lines of a fact in a long archive from the parse kept of it
    while the file is unchanged, and reads it again once it is not: after a hand edit
    above it, the bullet removed is still the forgotten fact's, and nothing else moves.
    Its line becomes a mark that holds nothing of it, not even its id, so every line
    below keeps its place (docs/workspace.md)."""
    settings = load_settings(home, environ={}, embedder="hashing").with_overrides(
        brain_max=60, brain_budget=40
    )
    with build_memory(settings, create=True, clock=clock) as memory:
        for n in range(90):
            memory.remember(f"value number {n:02d}", key=f"k{n:02d}")
        archive = memory.workspace.agent_dir("default") / "brain_archive.md"
        archived = [f for f in memory.workspace.archived_facts("default") if f.key]
        assert len(archived) >= 30
        first, second = archived[5], archived[20]
        lines = archive.read_text(encoding="utf-8").splitlines(keepends=True)
        cited = {f.id: f.provenance.line for f in archived}
        memory.forget(first.id)
        lines = [MARK if first.id in line else line for line in lines]
        assert archive.read_text(encoding="utf-8") == "".join(lines)
        assert first.value is not None and first.value not in archive.read_text(encoding="utf-8")
        # the facts below kept their lines, in the files and in the index
        moved = {
            f.id: f.provenance.line
            for f in memory.workspace.archived_facts("default")
            if f.id in cited and cited[f.id] != f.provenance.line
        }
        assert moved == {}
        for item in memory.index.get_items([archived[6].id, archived[29].id]):
            assert item.provenance.line == cited[item.id]
        # by hand, above the next one: every line below it moves down one
        lines.insert(lines.index(next(x for x in lines if x.startswith("- "))), "- hand\n")
        archive.write_text("".join(lines), encoding="utf-8")
        memory.forget(second.id)
        lines = [MARK if second.id in line else line for line in lines]
        after = archive.read_text(encoding="utf-8").splitlines(keepends=True)
        # the hand-written bullet is given its id and time (docs/workspace.md)
        assert [x for x in after if not x.startswith("- hand <!--")] == [
            x for x in lines if x != "- hand\n"
        ]
        left = {f.value or f.content for f in memory.workspace.archived_facts("default")}
        assert first.value not in left and second.value not in left
        assert {f.value for f in archived} - left == {first.value, second.value}
        assert "hand" in left
        memory.reindex()
        assert {f.value or f.content for f in memory.workspace.archived_facts("default")} == left


def test_a_forget_says_nothing_of_torn_audit_lines_it_did_not_read_all_of(
    memory: Memory,
) -> None:
    # A long trail with two torn lines far apart, the forgotten value beside the second
    # only: the forget reads the lines near it, and the damage said is the whole trail's.
    memory.remember(key="city", value="Kraków")
    trail = memory.settings.home / "audit.jsonl"
    record = json.loads(trail.read_text(encoding="utf-8").splitlines()[-1])
    lines = [json.dumps({**record, "summary": f"errand {n}"}) for n in range(300)]
    lines[1] = '{"at": "2026-11-2'
    lines[250] = '{"summary": "moved'
    lines[251] = json.dumps({**record, "summary": "moved to Kraków"})
    trail.write_text("\n".join(lines) + "\n", encoding="utf-8")
    receipt = memory.forget(key="city", value="Kraków")
    assert receipt.audit_redacted == 1
    said = [note for note in memory.notes if "unreadable line" in note]
    assert all("2 unreadable line(s)" in note for note in said), said
    memory.audit()
    said = [note for note in memory.notes if "unreadable line" in note]
    assert len(said) == 1 and "2 unreadable line(s) skipped (line 2, 251" in said[0], said


def test_a_forget_plan_is_taken_over_only_for_files_as_they_were(memory: Memory) -> None:
    # The receipt's plan is made first and the write's under the same lock: a file
    # written in between (here by hand) is looked through again, the others are not,
    # and a plan of another forget is taken over for nothing.
    from kronika.engine.redacting import plan_forget

    agent = memory.settings.default_agent
    memory.remember(key="drink", value=WORD)
    noted = memory.note(f"I drink {WORD} at night, green tea by day").item
    assert noted is not None
    memory.save_turn("chat", "user", "hello there")
    items = [f for f in memory.facts() if f.key == "drink"]
    ws, trail = memory.workspace, memory.audit_log
    first = plan_forget(ws, trail, agent, items, [WORD])
    assert plan_forget(ws, trail, agent, items, [WORD], reuse=first).edits == first.edits
    session = next(p for p in first.files if p.startswith("sessions/"))
    assert first.files[session][1] is None  # it held no word of the forget
    with (ws.agent_dir(agent) / session).open("a", encoding="utf-8") as handle:
        handle.write(f"and a cup of {WORD}\n")
    second = plan_forget(ws, trail, agent, items, [WORD], reuse=first)
    assert {e.path for e in second.edits} == {e.path for e in first.edits} | {session}
    (edit,) = [e for e in second.edits if e.path == session]
    assert edit.text is not None and WORD not in edit.text and "[forgotten]" in edit.text
    other = plan_forget(ws, trail, agent, [], ["green tea"], reuse=second)
    assert [e.path for e in other.edits] == [noted.provenance.path]


def test_forgetting_a_turn_of_a_long_session_writes_again_only_the_rows_after_it(
    home: Path, clock: FrozenClock
) -> None:
    """The session is indexed again after a turn is forgotten: the rows of the turns
    before it stay as they were, and only those after it (each one place earlier now)
    are written again. Recall finds the same turns, with the same neighbours, as after
    a rebuild of the index."""
    import sqlite3

    settings = load_settings(home, environ={}, embedder="hashing")
    with build_memory(settings, create=True, clock=clock) as memory:
        said = [
            ("user" if n % 2 else "assistant", f"turn {n}: the {('tea', 'river', 'violin')[n % 3]}")
            for n in range(200)
        ]
        saved = memory.save_turns("long", said)
        index = memory.settings.home / "index.sqlite"

        def turns() -> list[tuple[str, int]]:
            """The session's rows in place order: their item ids and row ids."""
            with sqlite3.connect(index) as conn:
                found = conn.execute(
                    "SELECT id, rowid FROM items WHERE type = 'message' ORDER BY pos"
                ).fetchall()
            return [(str(i), int(r)) for i, r in found]

        QS = ("violin", "river turn 195", "tea")  # noqa: N806
        for q in QS:
            memory.recall(q, k=8)  # the index's snapshots loaded
        before = turns()
        assert len(before) == 200
        memory.forget(saved[195])
        after = turns()
        assert after[:195] == before[:195]  # kept, not written again
        assert [i for i, _ in after[195:]] == [i for i, _ in before[196:]]
        assert all(a[1] > before[-1][1] for a in after[195:])  # written again, as new rows
        got = [[(h.item.content, h.citation) for h in memory.recall(q, k=8).hits] for q in QS]
        memory.reindex()
        assert turns()[0][1] > before[-1][1]  # a rebuild writes every row again
        again = [[(h.item.content, h.citation) for h in memory.recall(q, k=8).hits] for q in QS]
        assert got == again
        assert got[1] and not any(c.startswith("turn 195:") for hits in got for c, _ in hits)
