"""Memory commands said in a conversation take effect at once (SPEC C1)."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from kronika import Memory
from kronika.workflows.session import Session


def _brain(memory: Memory) -> str:
    return (memory.workspace.agent_dir("default") / "brain.md").read_text(encoding="utf-8")


def test_remember_then_forget_that_in_polish(memory: Memory) -> None:
    session = Session(memory)
    turn = session.user("Zapamiętaj, że jestem weganką.")
    assert turn.command is not None
    assert turn.command.reply.startswith("Zapamiętane")
    assert "weganką" in _brain(memory)  # stored before any model or session end
    turn = session.user("Zapomnij o tym.")
    assert turn.command is not None and turn.command.reply.startswith("Zapomniane")
    assert "weganką" not in _brain(memory)


def test_forget_a_topic_removes_the_fact_and_its_history(memory: Memory) -> None:
    memory.remember(key="city", value="Warsaw")
    memory.remember(key="city", value="Kraków")
    memory.remember(key="drink", value="tea")
    turn = Session(memory).user("Forget where I live.")
    assert turn.command is not None
    assert "Kraków" in turn.command.reply
    assert memory.history("city") == []
    assert [f.key for f in memory.facts()] == ["drink"]


def test_clear_memory_about_a_section_in_spanish(memory: Memory) -> None:
    memory.remember(key="bebida", value="mate", section="Preferences")
    memory.remember(key="editor", value="vim", section="Preferences")
    memory.remember(key="nombre", value="Ana", section="User")
    turn = Session(memory).user("Borrá tu memoria sobre preferencias")
    assert turn.command is not None
    assert turn.command.reply.startswith("Olvidado")
    assert [f.key for f in memory.facts()] == ["nombre"]


def test_nothing_to_forget_is_said_honestly_in_ukrainian(memory: Memory) -> None:
    turn = Session(memory).user("Забудь про мою роботу")
    assert turn.command is not None
    assert turn.command.reply.startswith("Я нічого не зберігаю")


PRIVATE = "quillbury"
"""The word a message says and the user then takes back. Not hexadecimal: an id the
index makes at random (its ``index_id``, 32 hex digits) holds any four digits, such as
a PIN's, about once in two thousand workspaces."""


def test_dont_remember_this_takes_the_previous_message_out_of_the_transcript(
    memory: Memory,
) -> None:
    session = Session(memory)
    session.user("My therapist is Dr Quillbury, on Tuesdays.")
    session.assistant("I see.")
    sid = session.session_id or ""
    transcript = memory.workspace.agent_dir("default") / "sessions" / f"{sid}.md"
    assert PRIVATE in transcript.read_text().lower()  # stored before it is taken back
    turn = session.user("Don't remember this.")
    assert turn.command is not None and turn.command.reply.startswith("Understood")
    text = transcript.read_text()
    assert PRIVATE not in text.lower() and "I see." not in text
    assert all(PRIVATE not in m.content.lower() for m in turn.messages)
    assert not memory.recall("my therapist Dr Quillbury").hits
    home = memory.settings.home
    memory.close()  # every file as it is left on disk, the index's included
    holding = [
        p.relative_to(home).as_posix()
        for p in home.rglob("*")
        if p.is_file() and PRIVATE.encode() in p.read_bytes().lower()
    ]
    assert holding == [], (holding, _where_in_the_index(home / "index.sqlite", PRIVATE))


def _where_in_the_index(path: Path, text: str) -> dict[str, object]:
    """Where ``text`` still is in an index file: rows that hold it, and the files beside."""
    found: dict[str, object] = {"beside": sorted(p.name for p in path.parent.glob("index*"))}
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        tables = [t for (t,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            columns = [c[1] for c in conn.execute(f'PRAGMA table_info("{table}")')]
            for column in columns:
                hits = conn.execute(
                    f'SELECT count(*) FROM "{table}"'
                    f' WHERE instr(lower(CAST("{column}" AS TEXT)), ?) > 0',
                    (text,),
                ).fetchone()[0]
                if hits:
                    found[f"{table}.{column}"] = hits
        found["freelist"] = conn.execute("PRAGMA freelist_count").fetchone()[0]
    return found


def test_dont_remember_with_content_never_writes_it(memory: Memory) -> None:
    session = Session(memory)
    session.user("Hello.")
    session.user("No recuerdes esto: tengo una cita médica el martes")
    sid = session.session_id or ""
    text = (memory.workspace.agent_dir("default") / "sessions" / f"{sid}.md").read_text()
    assert "cita" not in text


def test_what_do_you_know_and_show_memory(memory: Memory) -> None:
    session = Session(memory)
    empty = session.user("What do you know about me?")
    assert empty.command is not None and "don't know anything" in empty.command.reply
    memory.remember(key="name", value="Ana")
    known = session.user("Co o mnie wiesz?")
    assert known.command is not None and "name: Ana" in known.command.reply
    shown = session.user("show your memory")
    assert shown.command is not None
    assert "# Brain of default" in shown.command.reply and "1 facts" in shown.command.reply


def test_ordinary_sentences_are_not_commands(memory: Memory) -> None:
    session = Session(memory)
    for text in (
        "I forgot my keys again.",
        "Do you remember when we met?",
        "Me olvidé las llaves.",
    ):
        turn = session.user(text)
        assert turn.command is None
    assert memory.facts() == []


def test_commands_from_the_user_pass_even_for_a_read_only_agent(
    settings: object, clock: object
) -> None:
    from kronika import build_memory
    from kronika.settings import AgentPolicy, Settings

    assert isinstance(settings, Settings)
    locked = settings.with_overrides(agents={"default": AgentPolicy(autonomy=0)})
    with build_memory(locked, create=True, clock=clock) as memory:  # type: ignore[arg-type]
        turn = Session(memory).user("Remember that I prefer short answers.")
        assert turn.command is not None and turn.command.reply.startswith("Remembered")
        assert memory.facts()
