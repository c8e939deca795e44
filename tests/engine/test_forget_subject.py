"""Forgetting a subject — a person, a place, a company — takes every item and sentence
about it, in any inflected form, out of every byte kronika keeps; over a real workspace,
SQLite index (and its WAL) and audit trail, in English, Polish, Spanish and Ukrainian."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from pathlib import Path

import pytest

from kronika import Memory, build_memory, load_settings
from kronika.core.model import Reader, RecallHit
from kronika.engine.changes import WriteEntityPage, WriteSummary
from kronika.engine.write import SYSTEM
from kronika.errors import NotFound
from kronika.testing import FrozenClock
from kronika.workflows.chat import ChatAgent
from kronika.workflows.session import Session
from kronika.workflows.tools import call_tool


@dataclass(frozen=True)
class Case:
    command: str  # what the person says
    said: tuple[str, ...]  # turns that mention the subject, inflected
    note: str  # a note about it
    fact: tuple[str, str]  # a fact whose value is it (later replaced: its history)
    summary: str  # a model's wording about it
    page: str  # the entity page the reflect job would name after it
    forms: tuple[str, ...]  # every form that must be gone, as written


CASES = {
    "en": Case(
        "Forget about Dmytro Kovalenko.",
        ("My ex-partner Dmytro Kovalenko lives at 12 Lipowa street.", "Kovalenko's dog barks."),
        "Dmytro Kovalenko owes me 200 euro",
        ("ex_partner", "Dmytro Kovalenko"),
        "The user's ex-partner, Dmytro Kovalenko, lives on Lipowa street.",
        "Kovalenko",
        ("Dmytro", "Kovalenko", "Lipowa"),
    ),
    "pl": Case(
        "Zapomnij o Dmytro Kovalenko.",
        ("Wczoraj spotkałam się z Dmytrem Kovalenką na Lipowej.", "Dmytrowi nie ufam."),
        "Pożyczyłam Dmytrowi Kovalence 200 zł",
        ("były_partner", "Dmytro Kovalenko"),
        "Użytkowniczka spotkała Dmytra Kovalenkę przy ulicy Lipowej.",
        "Dmytro",
        ("Dmytr", "Kovalenk", "Lipow"),
    ),
    "es": Case(
        "Olvídate de Valencia.",
        ("Vivo en Valencia desde 2019, cerca de la Lonja.", "Los valencianos madrugan."),
        "Alquiler en Valencia: 900 euros",
        ("ciudad", "Valencia"),
        "The user lives in Valencia, near the Lonja.",
        "Valencia",
        ("Valenci", "Lonja"),
    ),
    "uk": Case(
        "Забудь про Київ.",
        ("Я живу у Києві на Подолі.", "До Києва я переїхала взимку."),
        "Квартира в Києві коштує 500 доларів",
        ("місто", "Київ"),
        "The user lives in Kyiv (Київ), on Podil — у Києві на Подолі.",
        "Київ",
        ("Київ", "Києв", "Подол"),
    ),
}
STAYS = "I also like jazz."


def _every_byte(home: Path) -> dict[str, str]:
    """Every file under the workspace (index, its WAL, .corrupt copies, audit trail),
    decoded leniently, case-folded and accent-folded."""
    found = {}
    for path in home.rglob("*"):
        if path.is_file():
            text = path.read_bytes().decode("utf-8", errors="ignore")
            found[path.relative_to(home).as_posix()] = _folded(text)
    return found


def _folded(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _holding(home: Path, forms: tuple[str, ...]) -> dict[str, list[str]]:
    wanted = [_folded(f) for f in forms]
    found = {p: [w for w in wanted if w in t] for p, t in _every_byte(home).items()}
    return {p: w for p, w in found.items() if w}


def _said(memory: Memory, word: str) -> list[str]:
    """What recall answers that holds ``word``."""
    hits = memory.recall(word, k=50).hits
    return [h.item.content for h in hits if word.casefold() in h.item.content.casefold()]


def _tell(memory: Memory, case: Case, clock: FrozenClock) -> str:
    """Write the subject everywhere kronika writes: turns, a note, a fact and its history,
    a summary, the Active Context, an entity page (with its audit entry)."""
    key, value = case.fact
    memory.remember(key=key, value=value)
    clock.advance(days=2)
    memory.remember(key=key, value="nobody")  # the name goes to history.md
    session = Session(memory)
    for said in case.said:
        session.user(f"{said} {STAYS}")
    session.assistant("Noted.")
    sid = session.session_id or ""
    session.close()
    memory.note(case.note)
    memory.note("Buy oat milk")
    summary = WriteSummary("summaries/L1/2026-11.md", f"{case.summary} The user likes jazz.", ())
    memory.memory_write("default", "summaries", summary, SYSTEM)
    page = f"bank/entities/{case.page}.md"
    text = f"# {case.page}\n\n- {case.page} was mentioned on Monday\n"
    memory.memory_write("default", "bank", WriteEntityPage(page, text), SYSTEM)
    memory.reindex()
    assert _holding(memory.settings.home, case.forms)  # it is there to forget
    return sid


@pytest.mark.parametrize("lang", sorted(CASES))
def test_forgetting_a_subject_leaves_no_byte_of_it(
    memory: Memory, clock: FrozenClock, lang: str
) -> None:
    case = CASES[lang]
    sid = _tell(memory, case, clock)
    answer = ChatAgent(Session(memory), None).send(case.command)
    assert not answer.text.startswith(("I don't", "Nie mam", "No tengo", "Я нічого"))

    # what is not about it stays
    turns = [t.content for t in memory.load_session(sid)]
    assert all(STAYS in t for t in turns[: len(case.said)])
    assert [h.item.content for h in memory.recall("oat milk", k=3).hits][:1] == ["Buy oat milk"]
    summary = memory.workspace.agent_dir("default") / "summaries/L1/2026-11.md"
    assert "The user likes jazz." in summary.read_text(encoding="utf-8")
    # no answer, now or as of any earlier time, holds it
    name = case.fact[1]
    for as_of in (None, "2026-11-22T12:00:00+00:00"):
        hits = memory.recall(name, k=50, as_of=as_of).hits
        assert not any(_folded(case.forms[0]) in _folded(h.item.content) for h in hits)
    assert not (memory.workspace.agent_dir("default") / f"bank/entities/{case.page}.md").exists()
    memory.close()
    assert _holding(memory.settings.home, case.forms) == {}


def test_a_company_said_only_in_a_turn_is_forgotten_by_topic(memory: Memory) -> None:
    session = Session(memory)
    session.user("I'm now a data engineer at Nubank. I also like jazz.")
    session.user("Nubanku nie lubię.")
    assert memory.recall("Nubank", k=5).hits
    preview = memory.forget(topic="Nubank", dry_run=True)  # what it would touch: nothing yet
    assert preview.items == () and [p.action for p in preview.places] == ["redacted"]
    assert _said(memory, "Nubank")
    receipt = memory.forget(topic="Nubank")
    assert receipt.applied and any(p.path.startswith("sessions/") for p in receipt.places)
    assert not _said(memory, "Nubank")
    [first, second] = [t.content for t in memory.load_session(session.session_id or "")]
    assert first == "[forgotten] I also like jazz." and second == "[forgotten]"
    with pytest.raises(NotFound):
        memory.forget(topic="Nubank")
    memory.close()
    assert _holding(memory.settings.home, ("nubank",)) == {}


def test_asking_to_forget_what_was_never_said_is_not_a_forget(memory: Memory) -> None:
    answer = Session(memory).user("Forget about Dmytro Kovalenko.")
    assert answer.command is not None and answer.command.reply.startswith("I have nothing")


def test_a_reader_forgets_only_what_they_may_see(memory: Memory) -> None:
    ana, ben = Reader(user="ana"), Reader(user="ben")
    memory.as_reader(ana).note("Dmytro Kovalenko is my neighbour")
    memory.as_reader(ben).note("Dmytro Kovalenko is my dentist")
    Session(memory, reader=ben).user("Dmytro Kovalenko fixed my tooth.")
    receipt = memory.forget(topic="Dmytro Kovalenko", reader=ana)
    assert [it.content for it in receipt.items] == ["Dmytro Kovalenko is my neighbour"]
    seen = [h.item.content for h in memory.as_reader(ben).recall("Dmytro Kovalenko", k=9).hits]
    assert sorted(seen) == ["Dmytro Kovalenko fixed my tooth.", "Dmytro Kovalenko is my dentist"]
    assert not _said(memory.as_reader(ana), "Dmytro Kovalenko")


def test_at_autonomy_1_the_subject_waits_for_approval(home: Path, clock: FrozenClock) -> None:
    home.mkdir(parents=True)
    (home / "kronika.toml").write_text("[agents.default]\nautonomy = 1\n")
    settings = load_settings(home, environ={}, embedder="hashing")
    with build_memory(settings, create=True, clock=clock) as memory:
        memory.note("Dmytro Kovalenko owes me 200 euro")
        Session(memory).user("Dmytro Kovalenko lives on Lipowa street.")
        done = call_tool(memory, "default", "forget", {"topic": "Dmytro Kovalenko"})
        assert done["outcome"] == "proposed" and done["forgotten"] == []
        assert _said(memory, "Kovalenko")  # nothing forgotten yet
        [proposal] = memory.proposals()
        memory.approve(proposal.id)
        assert not _said(memory, "Kovalenko") and memory.proposals() == []
    assert _holding(home, ("kovalenko",)) == {}


def test_forget_that_i_live_somewhere_takes_the_models_wording_and_the_past(
    memory: Memory, clock: FrozenClock
) -> None:
    memory.remember(key="location", value="Valencia")
    memory.remember("The user lives in Valencia.")  # a model's wording, no key
    lived = clock.now().isoformat()
    clock.advance(days=3)
    memory.remember(key="location", value="Madrid")  # Valencia goes to history.md
    summary = WriteSummary("summaries/L1/2026-11.md", "The user lives in Valencia. Likes jazz.", ())
    memory.memory_write("default", "summaries", summary, SYSTEM)
    assert any("Valencia" in (h.item.value or h.item.content) for h in _hits(memory, lived))
    answer = ChatAgent(Session(memory), None).send("Forget that I live in Valencia")
    assert "Valencia" in answer.text  # the person is told what went
    assert [f.value for f in memory.facts()] == ["Madrid"]
    assert not any("valencia" in h.item.content.casefold() for h in _hits(memory, lived))
    assert memory.history("location") == [f for f in memory.facts() if f.value == "Madrid"]
    memory.close()
    assert _holding(memory.settings.home, ("Valencia",)) == {}


def _hits(memory: Memory, as_of: str) -> list[RecallHit]:
    return list(memory.recall("where does the user live Valencia", k=50, as_of=as_of).hits)


def test_the_page_the_reflect_job_named_after_it_goes_with_its_name(memory: Memory) -> None:
    from kronika.workflows.jobs import run_job

    memory.note("Dmytro Kovalenko owes me 200 euro")
    Session(memory).user("My ex-partner Dmytro Kovalenko lives at 12 Lipowa street.")
    assert run_job(memory, "reflect").done == ["bank/entities/Kovalenko.md: 1 item(s)"]
    receipt = memory.forget(topic="Dmytro Kovalenko")
    assert ("bank/entities/Kovalenko.md", "deleted") in {(p.path, p.action) for p in receipt.places}
    assert all("Kovalenko" not in e.summary for e in memory.audit())
    memory.close()
    assert _holding(memory.settings.home, ("Kovalenk", "Dmytr", "Lipowa")) == {}
