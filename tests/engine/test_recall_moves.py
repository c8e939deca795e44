""" "Where did I work before I moved?": a move the question tells of without naming where
to is the latest change of the key that says where the user lives (engine/moves.py);
in four languages, on every backend."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from backends import Backend

NOW = datetime(2026, 3, 1, tzinfo=UTC)
JAN, FEB, SEP, OCT = (datetime(2025, month, 1, tzinfo=UTC) for month in (1, 2, 9, 10))
CASES = {
    # language: (home key, before, after), (work key, before, after), the questions:
    # where I worked before I moved, where I lived before I moved
    "en": (
        ("city", "Leeds", "Bristol"),
        ("company", "Sky Betting", "Ovo Energy"),
        ("Where did I work before I moved?", "Where did I live before I moved?"),
    ),
    "pl": (
        ("miasto", "Wrocław", "Gdańsk"),
        ("firma", "Nokia", "Allegro"),
        (
            "W jakiej firmie pracowałam przed przeprowadzką?",
            "Gdzie mieszkałam przed przeprowadzką?",
        ),
    ),
    "es": (
        ("ciudad", "Sevilla", "Valencia"),
        ("empresa", "Mercadona", "Glovo"),
        ("¿En qué empresa trabajaba antes de mudarme?", "¿Dónde vivía antes de mudarme?"),
    ),
    "uk": (
        ("місто", "Одеса", "Київ"),
        ("компанія", "EPAM", "Ajax Systems"),
        ("У якій компанії я працював до переїзду?", "Де я жив до переїзду?"),
    ),
}


@pytest.mark.parametrize("lang", sorted(CASES))
def test_before_i_moved_is_before_the_latest_change_of_home(backend: Backend, lang: str) -> None:
    (home, was, now_home), (work, then, later), (work_question, home_question) = CASES[lang]
    memory = backend.open()
    memory.create_agent("me")
    memory.remember(key=home, value=was, agent="me", at=JAN)
    memory.remember(key=work, value=then, agent="me", at=FEB)
    memory.remember(key=home, value=now_home, agent="me", at=SEP)
    memory.remember(key=work, value=later, agent="me", at=OCT)  # a month after the move

    def first(question: str) -> str | None:
        hits = memory.recall(question, agent="me", k=3, now=NOW, record_access=False).hits
        return hits[0].item.value if hits else None

    assert first(work_question) == then
    assert first(home_question) == was


def test_with_one_home_there_is_no_move_and_the_current_values_answer(backend: Backend) -> None:
    memory = backend.open()
    memory.create_agent("me")
    memory.remember(key="city", value="Leeds", agent="me", at=JAN)
    memory.remember(key="company", value="Sky Betting", agent="me", at=FEB)
    memory.remember(key="company", value="Ovo Energy", agent="me", at=OCT)
    hits = memory.recall("Where did I work before I moved?", agent="me", k=3, now=NOW).hits
    assert hits and hits[0].item.value == "Ovo Energy"
