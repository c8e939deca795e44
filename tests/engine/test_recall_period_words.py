"""A period a question names is read as the period, not looked for as words: "Which gym
was I a member of in March?" is answered by the gym of March, not by the fact
"birthday: 12 March" (:func:`kronika.core.timeexpr.named_period`), and so is "Which gym
am I a member of in March?", which names a key of the user's facts and asks for its
value then; on every backend."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from backends import Backend

NOW = datetime(2026, 11, 1, tzinfo=UTC)
FEB, MAR, JUN = (datetime(2026, month, day, tzinfo=UTC) for month, day in ((2, 10), (3, 5), (6, 1)))
CASES = {
    # language: (key, the value of March, the value since June), (a key, a value naming
    # the month), the question in the past, and in the present
    "en": (
        ("gym", "PureGym Leeds", "The Climbing Hangar"),
        ("birthday", "12 March"),
        "Which gym was I a member of in March?",
        "What gym do I go to in March?",
    ),
    "pl": (
        ("siłownia", "Zdrofit Mokotów", "Calypso Wola"),
        ("urodziny", "12 marca"),
        "Do jakiej siłowni chodziłam w marcu?",
        "Do jakiej siłowni chodzę w marcu?",
    ),
    "es": (
        ("gimnasio", "Basic-Fit Ruzafa", "Altafit Benimaclet"),
        ("cumpleaños", "12 de marzo"),
        "¿A qué gimnasio iba en marzo?",
        "¿A qué gimnasio voy en marzo?",
    ),
    "uk": (
        ("спортзал", "Sport Life Позняки", "FitCurves Оболонь"),
        ("день_народження", "12 березня"),
        "В який спортзал я ходив у березні?",
        "В який спортзал я ходжу у березні?",
    ),
}


@pytest.mark.parametrize("tense", ["past", "present"])
@pytest.mark.parametrize("lang", sorted(CASES))
def test_the_month_a_question_names_is_not_a_word_to_find(
    backend: Backend, lang: str, tense: str
) -> None:
    (key, then, since), (other, dated), past, present = CASES[lang]
    question = past if tense == "past" else present
    memory = backend.open()
    memory.create_agent("me")
    memory.remember(key=key, value=then, agent="me", at=FEB)
    memory.remember(key=other, value=dated, agent="me", at=MAR)
    memory.remember(key=key, value=since, agent="me", at=JUN)
    hits = memory.recall(question, agent="me", k=3, now=NOW, record_access=False).hits
    assert hits, question
    assert hits[0].item.value == then, [hit.item.content for hit in hits]
