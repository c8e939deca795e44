"""What was said in the period a question names is searched for on its own, and the
closest of it passes the relevance floor (engine/said_then.py): "What did I do in
August?" finds the August turn that shares no word and little meaning with it, among
months of conversations; on every backend, with the default embedder."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from backends import Backend

NOW = datetime(2026, 9, 20, 20, tzinfo=UTC)
CASES = {
    # language: (the question, what was said in August, what was said in other months)
    "en": (
        "What did I do in August?",
        "went to Notting Hill Carnival with my housemates, it was packed",
        (
            "how do I politely remind a client about an unpaid invoice?",
            "what is 15% of 240?",
            "how do you say 'birthday' in Spanish?",
            "can you suggest a name for a spreadsheet of expenses?",
        ),
    ),
    "pl": (
        "Co robiłam w sierpniu?",
        "byłyśmy z siostrą na Open'erze w Gdyni, lało cały dzień",
        (
            "jak grzecznie przypomnieć klientowi o nieopłaconej fakturze?",
            "ile to jest 15% z 240?",
            "jak powiedzieć 'urodziny' po hiszpańsku?",
            "zaproponuj nazwę arkusza z wydatkami",
        ),
    ),
    "es": (
        "¿Qué hice en agosto?",
        "volvimos de Menorca, Javier se quemó con el sol el primer día",
        (
            "¿cómo le recuerdo a un cliente una factura sin pagar?",
            "¿cuánto es el 15% de 240?",
            "¿cómo se dice 'cumpleaños' en inglés?",
            "sugiere un nombre para una hoja de gastos",
        ),
    ),
    "uk": (
        "Що я робив у серпні?",
        "на вихідних упіймав щуку на п'ять кілограмів!",
        (
            "як ввічливо нагадати клієнту про неоплачений рахунок?",
            "скільки буде 15% від 240?",
            "як сказати 'день народження' іспанською?",
            "запропонуй назву таблиці витрат",
        ),
    ),
}


@pytest.mark.parametrize("lang", sorted(CASES))
def test_a_month_the_question_names_finds_what_was_said_in_it(backend: Backend, lang: str) -> None:
    question, august, others = CASES[lang]
    memory = backend.open(embedder="use-multilingual")
    memory.create_agent("me")
    # a session every ten days from January on, each asking one of the other things
    day = datetime(2026, 1, 3, 19, tzinfo=UTC)
    n = 0
    while day < NOW:
        if day.month != 8:
            session = f"s{n}"
            memory.save_turn(session, "user", others[n % len(others)], agent="me", at=day)
            n += 1
        day += timedelta(days=10)
    memory.save_turn("summer", "user", august, agent="me", at=datetime(2026, 8, 18, 21, tzinfo=UTC))
    hits = memory.recall(question, agent="me", k=5, now=NOW, record_access=False).hits
    said = [hit.item.content for hit in hits]
    assert any(august in text for text in said), said
