"""Facts extracted from conversations join the facts already known instead of standing
beside them: a key of the same concept in another language, a model's rewording of a
rule-extracted fact (core/dedup)."""

from __future__ import annotations

from typing import Any

from kronika import Memory, build_memory
from kronika.app import build_llm
from kronika.engine.changes import ArchiveFacts
from kronika.ports import LLM
from kronika.settings import Settings
from kronika.testing import FrozenClock, ScriptedChatServer
from kronika.workflows.session import Session

Brainy = Any  # the scripted model of conftest.py


def _current(memory: Memory) -> list[tuple[str, str]]:
    return [(f.key or "", f.value or f.content) for f in memory.facts()]


def _without_model(memory: Memory, *lines: str) -> None:
    session = Session(memory, llm=None)
    for line in lines:
        session.user(line)
    session.close()


def _extraction(*facts: dict[str, object]) -> dict[str, object]:
    return {"facts": list(facts), "summary": "Small talk."}


# ------------------------------------------------------------------ without a model
def test_the_rule_extractor_updates_a_name_kept_under_a_spanish_key(
    memory: Memory, clock: FrozenClock
) -> None:
    memory.remember("Lucas", key="nombre")
    clock.advance(hours=1)
    _without_model(memory, "My name is Ana.")
    assert _current(memory) == [("nombre", "Ana")]
    assert [f.value for f in memory.history("nombre")] == ["Lucas", "Ana"]


def test_the_rule_extractor_reuses_polish_ukrainian_and_spanish_keys(
    memory: Memory, clock: FrozenClock
) -> None:
    memory.remember("Kraków", key="miasto")
    memory.remember("Олена", key="ім'я")
    memory.remember("vegana", key="dieta", section="Preferences")
    clock.advance(hours=1)
    _without_model(memory, "I live in Berlin.", "Мене звати Оксана.", "I'm vegan.")
    assert sorted(_current(memory)) == [
        ("dieta", "vegan"),
        ("miasto", "Berlin"),
        ("ім'я", "Оксана"),
    ]
    assert [f.value for f in memory.history("miasto")] == ["Kraków", "Berlin"]


def test_an_archived_key_of_the_concept_gets_the_new_value(
    memory: Memory, clock: FrozenClock
) -> None:
    lucas = memory.remember("Lucas", key="nombre").item
    assert lucas is not None
    memory.memory_write("default", "Brain", ArchiveFacts((lucas.id,)))
    clock.advance(hours=1)
    _without_model(memory, "My name is Ana.")
    assert _current(memory) == [("nombre", "Ana")]
    assert [f.value for f in memory.history("nombre")] == ["Lucas", "Ana"]


def test_the_same_statement_in_another_language_is_not_a_second_key(memory: Memory) -> None:
    _without_model(memory, "Me llamo Ana.")
    _without_model(memory, "My name is Ana!")
    assert _current(memory) == [("name", "Ana")]


def test_a_key_of_another_concept_still_stands_beside(memory: Memory) -> None:
    memory.remember("Lucas", key="nombre")
    _without_model(memory, "I live in Berlin.")
    assert sorted(_current(memory)) == [("location", "Berlin"), ("nombre", "Lucas")]


# ------------------------------------------------------------------ then a model
def test_the_model_rewording_a_rule_fact_keeps_one_fact(
    settings: Settings, clock: FrozenClock, brainy: Brainy, server: ScriptedChatServer
) -> None:
    with build_memory(settings, create=True, clock=clock) as memory:
        _without_model(memory, "My name is Lucas. I live in Berlin. I like green tea.")
        assert sorted(_current(memory)) == [
            ("location", "Berlin"),
            ("name", "Lucas"),
            ("preference", "green tea"),
        ]
    brainy.extractions = [
        _extraction(
            {"tag": "CORE", "key": "user name", "value": "The user's name is Lucas."},
            {"tag": "CORE", "key": "city", "value": "Berlin"},
            {"tag": "PREFERENCE", "key": "preference", "value": "The user likes green tea."},
            {"tag": "PREFERENCE", "key": "preference", "value": "jazz"},
        )
    ]
    model = settings.with_overrides(llm_base_url=server.base_url, llm_model="m")
    clock.advance(hours=1)
    with build_memory(model, create=True, clock=clock) as memory:
        wake = Session(memory, llm=build_llm(model)).wake()  # the queued session is consolidated
        assert wake.recovered is not None
        assert [o.status for o in wake.recovered.sessions] == ["consolidated"]
        assert sorted(_current(memory)) == [
            ("location", "Berlin"),
            ("name", "Lucas"),
            ("preference", "green tea"),
            ("preference", "jazz"),
        ]
        refreshed = [f for f in memory.facts() if f.key in ("name", "location")]
        assert all(f.updated_at == clock.now() > f.created_at for f in refreshed)


def test_a_near_duplicate_sibling_from_the_model_replaces_the_extracted_one(
    memory: Memory, llm: LLM, brainy: Brainy, clock: FrozenClock
) -> None:
    memory.remember("vinyl records", key="preference", multi=True, source="auto")
    memory.remember("likes green tea", key="preference", multi=True, source="auto")
    brainy.extractions = [
        _extraction(
            {"tag": "PREFERENCE", "key": "preference", "value": "likes green tea, unsweetened"}
        ),
    ]
    clock.advance(hours=1)
    session = Session(memory, llm=llm)
    session.user("Green tea, always unsweetened.")
    report = session.close()
    assert report is not None and report.sessions[0].written[0].startswith("~ preference")
    assert sorted(v for _, v in _current(memory)) == [
        "likes green tea, unsweetened",
        "vinyl records",
    ]
    history = [f.value for f in memory.history("preference")]
    assert "likes green tea" in history  # replaced, kept as history


def test_the_model_never_rewords_what_the_person_said(
    memory: Memory, llm: LLM, brainy: Brainy, clock: FrozenClock
) -> None:
    memory.remember("I drink green tea every morning")
    brainy.extractions = [
        _extraction({"tag": "CORE", "key": "habit", "value": "I drink green tea every morning."}),
        _extraction(
            {"tag": "CORE", "key": "note", "value": "The user: I drink green tea every morning!"}
        ),
    ]
    for _ in range(2):
        clock.advance(hours=1)
        session = Session(memory, llm=llm)
        session.user("Tea time.")
        report = session.close()
        assert report is not None and report.sessions[0].written[0].startswith("= ")
    assert _current(memory) == [("", "I drink green tea every morning")]
    (fact,) = memory.facts()
    assert fact.updated_at == clock.now() > fact.created_at


def test_a_person_giving_a_new_value_still_supersedes(memory: Memory, clock: FrozenClock) -> None:
    memory.remember("Lucas", key="nombre")
    clock.advance(hours=1)
    memory.remember("Ana", key="nombre")
    memory.remember("Ana", key="name")  # a key the person chose is theirs
    assert sorted(_current(memory)) == [("name", "Ana"), ("nombre", "Ana")]
    assert [f.value for f in memory.history("nombre")] == ["Lucas", "Ana"]


def test_the_model_forgetting_a_key_of_the_concept_forgets_the_fact(
    memory: Memory, llm: LLM, brainy: Brainy
) -> None:
    _without_model(memory, "I live in Berlin. I like jazz.")
    brainy.extractions = [
        _extraction({"tag": "DELETE", "key": "city", "value": ""}),  # the queued session
        _extraction(
            {"tag": "DELETE", "key": "city", "value": ""},
            {"tag": "DELETE", "key": "likes", "value": ""},  # not every preference
        ),
    ]
    session = Session(memory, llm=llm)
    session.user("Berlin is over for me.")
    report = session.close()
    assert report is not None
    assert [o.written for o in report.sessions] == [("- location",), ()]
    assert _current(memory) == [("preference", "jazz")]
    assert memory.history("location") == []
