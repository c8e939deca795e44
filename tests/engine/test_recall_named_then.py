""" "Where am I going in September?": a memory that names the period ("a trip to Lisbon in
September", said in June) is about then, whenever it was said, and is preferred as what
was said then is (engine/recall.py, core/timeexpr.names_period); a question in the past
tense ("What happened in February?") still asks what was said then. On every backend,
with the default embedder, in four languages."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from backends import Backend

NOW = datetime(2026, 11, 20, 20, tzinfo=UTC)
JUNE = datetime(2026, 6, 10, 19, tzinfo=UTC)
CASES = {
    # language: (the question, the plan said in June, what was said in September)
    "en": (
        "Where am I going in September?",
        "I'm planning a trip to Lisbon in September with Piotr",
        (
            "the vet says the cat has to lose some weight",
            "can you suggest a name for a spreadsheet of expenses?",
            "what is 15% of 240?",
        ),
    ),
    "pl": (
        "Dokąd jadę we wrześniu?",
        "we wrześniu lecimy z Piotrem do Lizbony",
        (
            "weterynarz mówi, że kot musi schudnąć",
            "zaproponuj nazwę arkusza z wydatkami",
            "ile to jest 15% z 240?",
        ),
    ),
    "es": (
        "¿Adónde voy en septiembre?",
        "en septiembre nos vamos a Lisboa con Piotr",
        (
            "el veterinario dice que el gato tiene que adelgazar",
            "sugiere un nombre para una hoja de gastos",
            "¿cuánto es el 15% de 240?",
        ),
    ),
    "uk": (
        "Куди я їду у вересні?",
        "у вересні ми з Петром летимо до Лісабона",
        (
            "ветеринар каже, що коту треба схуднути",
            "запропонуй назву таблиці витрат",
            "скільки буде 15% від 240?",
        ),
    ),
}


@pytest.mark.parametrize("lang", sorted(CASES))
def test_a_plan_that_names_the_month_answers_a_question_about_it(
    backend: Backend, lang: str
) -> None:
    question, plan, september = CASES[lang]
    memory = backend.open(embedder="use-multilingual")
    memory.create_agent("me")
    memory.save_turn("june", "user", plan, agent="me", at=JUNE)
    day = datetime(2026, 9, 2, 19, tzinfo=UTC)
    for n, text in enumerate(september):
        memory.save_turn(f"sep{n}", "user", text, agent="me", at=day + timedelta(days=9 * n))
    hits = memory.recall(question, agent="me", k=3, now=NOW, record_access=False).hits
    said = [hit.item.content for hit in hits]
    assert said and said[0] == plan, said


ELSEWHEN = (
    "what is 15% of 240?",
    "suggest a name for a spreadsheet of expenses",
    "how do I remind a client about an invoice?",
    "the vet says the cat has to lose weight",
    "book me a table for two on Friday",
)


def test_a_question_of_what_happened_then_prefers_what_was_said_then(backend: Backend) -> None:
    """ "What happened in February on the skis?" asks what was told in February: the
    plan told in January ("in February we go skiing") does not come first."""
    memory = backend.open(embedder="use-multilingual")
    memory.create_agent("me")
    for n, text in enumerate(ELSEWHEN):
        memory.save_turn(
            f"x{n}", "user", text, agent="me", at=datetime(2025, 10, 3 + n, tzinfo=UTC)
        )
    plan = "in February we're going skiing in Zakopane for a whole week"
    told = "I twisted my ankle on the second day, no more slopes for me this winter"
    memory.save_turn("jan", "user", plan, agent="me", at=datetime(2026, 1, 12, tzinfo=UTC))
    memory.save_turn("feb", "user", told, agent="me", at=datetime(2026, 2, 17, tzinfo=UTC))
    hits = memory.recall(
        "What happened in February when I was skiing?",
        agent="me",
        k=3,
        now=datetime(2026, 3, 20, tzinfo=UTC),
        record_access=False,
    ).hits
    assert hits and hits[0].item.content == told, [h.item.content for h in hits]
