"""A question that says a word in another form than the memory does still finds it by
keyword: "rekrutacją" finds the turn about "rekrutacji", "співбесіду" the note about the
"співбесіда" (:mod:`kronika.core.word_forms`); over a real workspace and index, on each
backend, by keyword search alone (what the vector side would add is not counted)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from backends import Backend
from kronika import Memory

NOW = datetime(2026, 11, 1, tzinfo=UTC)
NOTES = [
    "Rozmowa w sprawie rekrutacji przesunięta na czerwiec",
    "Desde enero Mateo ya no come carne",
    "Співбесіда в Ajax у вівторок о десятій",
    "Bought new running shoes for the marathon",
]
TURNS = [
    ("user", "cześć, co słychać?"),
    ("assistant", "Wszystko dobrze, w czym pomóc?"),
    ("user", "dziękuję, to wszystko"),
]


def _write(memory: Memory) -> None:
    for n, text in enumerate(NOTES):
        memory.note(text, at=datetime(2026, 6, 2 + n, tzinfo=UTC))
    start = datetime(2026, 7, 1, tzinfo=UTC)
    for n, (role, text) in enumerate(TURNS):
        memory.save_turn("s1", role, text, at=start + timedelta(minutes=n))


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("Co się wydarzyło z rekrutacją?", NOTES[0]),
        ("¿Qué dejó de comer?", NOTES[1]),
        ("Коли в мене співбесіду призначено?", NOTES[2]),
    ],
)
def test_a_word_said_in_another_form_finds_the_memory(
    backend: Backend, question: str, answer: str
) -> None:
    _write(backend.open())
    hits = backend.open("b").recall(question, k=3, mode="lexical", now=NOW, record_access=False)
    assert hits.hits and hits.hits[0].item.content == answer, [h.item.content for h in hits.hits]


def test_a_word_is_not_taken_for_another_that_starts_with_its_stem(backend: Backend) -> None:
    """ "mieszkam" (I live) starts with "mięs", the stem of "mięsa" (meat) with its accent
    folded, but no ending starts with "zk": the fact about meat is no keyword match."""
    memory = backend.open()
    memory.remember("nie je mięsa od 2019 roku", key="dieta")
    memory.remember("Wrocław", key="miasto")
    hits = backend.open("b").recall(
        "Gdzie teraz mieszkam?", k=3, mode="lexical", now=NOW, record_access=False
    )
    assert all("mięsa" not in h.item.content for h in hits.hits), [
        h.item.content for h in hits.hits
    ]
