""" "Where did I work before I moved?": a move the question tells of without naming where
to is the latest change of the key that says where the user lives (engine/moves.py);
and "Where did I live before?": "before" that names nothing asks for the value before
the current one of the keys the question names (engine/then.py). In four languages, on
every backend."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from backends import Backend
from kronika import Memory

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
BEFORE_ALONE = {  # where I lived before, where I worked before
    "en": ("Where did I live before?", "Where did I use to work?"),
    "pl": ("Gdzie mieszkałam wcześniej?", "Gdzie pracowałam wcześniej?"),
    "es": ("¿Dónde vivía antes?", "¿Dónde trabajaba antes?"),
    "uk": ("Де я жив раніше?", "Де я працював раніше?"),
}


def _moved(backend: Backend, lang: str) -> Memory:
    """A home and a job each kept in January / February; the move in September, the
    new job a month after it."""
    (home, was, now_home), (work, then, later), _ = CASES[lang]
    memory = backend.open()
    memory.create_agent("me")
    memory.remember(key=home, value=was, agent="me", at=JAN)
    memory.remember(key=work, value=then, agent="me", at=FEB)
    memory.remember(key=home, value=now_home, agent="me", at=SEP)
    memory.remember(key=work, value=later, agent="me", at=OCT)
    return memory


def _first(memory: Memory, question: str) -> tuple[str | None, str]:
    """The value of the first result and why it came (``""`` when no reason)."""
    hits = memory.recall(question, agent="me", k=3, now=NOW, record_access=False).hits
    return (hits[0].item.value, hits[0].score.history or "") if hits else (None, "")


@pytest.mark.parametrize("lang", sorted(CASES))
def test_before_i_moved_is_before_the_latest_change_of_home(backend: Backend, lang: str) -> None:
    (_, was, _), (_, then, _), (work_question, home_question) = CASES[lang]
    memory = _moved(backend, lang)
    assert _first(memory, work_question)[0] == then
    assert _first(memory, home_question)[0] == was


def test_with_one_home_there_is_no_move_and_the_current_values_answer(backend: Backend) -> None:
    memory = backend.open()
    memory.create_agent("me")
    memory.remember(key="city", value="Leeds", agent="me", at=JAN)
    memory.remember(key="company", value="Sky Betting", agent="me", at=FEB)
    memory.remember(key="company", value="Ovo Energy", agent="me", at=OCT)
    assert _first(memory, "Where did I work before I moved?")[0] == "Ovo Energy"
    # and "before" alone finds nothing before the only home
    assert _first(memory, "Where did I live before?") == ("Leeds", "")


@pytest.mark.parametrize(
    ("lang", "said"),
    [
        (
            "pl",
            [
                ("user", "przeprowadziłam się wreszcie do Gdańska, mieszkanie na Oliwie"),
                ("assistant", "Gratulacje! Jak nowa praca?"),
                ("user", "w Allegro super, zespół jest świetny"),
            ],
        ),
        (
            "en",
            [
                ("user", "I finally moved to Bristol, a flat in Clifton"),
                ("assistant", "Congratulations! How is the new job?"),
                ("user", "Ovo Energy is great, the team is lovely"),
            ],
        ),
    ],
)
def test_a_turn_that_tells_of_the_move_does_not_answer_what_came_before_it(
    backend: Backend, lang: str, said: list[tuple[str, str]]
) -> None:
    """The words of the move name a moment: the turn "I finally moved to Bristol" holds
    them, and the talk about the new job is near it, yet the question asks for the
    employer before the move."""
    question = {
        "pl": "Gdzie pracowałam, zanim się przeprowadziłam?",
        "en": "Where did I work before I moved?",
    }[lang]
    memory = _moved(backend, lang)
    memory.save_turns("s1", [{"speaker": s, "content": c, "at": OCT} for s, c in said], agent="me")
    assert _first(memory, question)[0] == CASES[lang][1][1]


@pytest.mark.parametrize("lang", sorted(CASES))
def test_before_alone_is_the_value_before_the_current_one(backend: Backend, lang: str) -> None:
    (_, was, now_home), (_, then, _), _ = CASES[lang]
    home_question, work_question = BEFORE_ALONE[lang]
    memory = _moved(backend, lang)
    value, why = _first(memory, home_question)
    assert value == was
    assert now_home in why  # "the value before 'Bristol' (…)"
    assert _first(memory, work_question)[0] == then


def test_before_a_date_is_not_before_alone(backend: Backend) -> None:
    """ "before 2020" names a moment, read as a period: no value before the current one
    is chosen for it, and without "before" the current value answers."""
    memory = _moved(backend, "en")
    hits = memory.recall("Where did I live before 2020?", agent="me", k=3, now=NOW).hits
    assert all("the value before" not in (h.score.history or "") for h in hits)
    assert _first(memory, "Where do I live?")[0] == "Bristol"
