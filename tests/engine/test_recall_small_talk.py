""" "How can I help?", "Always glad to help!", "nothing special, just checking": an offer
of help and an answer of nothing tell nothing in every language alike
(:mod:`kronika.core.phatic`), so a question about what was said does not get them back
in place of what was said; on every backend, with the default embedder."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from backends import Backend

NOW = datetime(2026, 6, 1, tzinfo=UTC)
CASES = {
    # language: (small talk, what was said, the question)
    "en": (
        ("How can I help?", "Always glad to help!", "nothing special, just checking"),
        "we are packing boxes, the move is next week",
        "When is the move?",
    ),
    "pl": (
        ("W czym mogę pomóc?", "Zawsze chętnie pomogę!", "nic specjalnego, tylko sprawdzam"),
        "pakujemy kartony, w przyszłym tygodniu przeprowadzka",
        "Kiedy jest przeprowadzka?",
    ),
    "es": (
        ("¿En qué puedo ayudarte?", "Siempre a tu disposición", "nada especial, solo probando"),
        "estamos empacando cajas, la mudanza es la semana que viene",
        "¿Cuándo es la mudanza?",
    ),
    "uk": (
        ("Чим можу допомогти?", "Завжди радий допомогти!", "нічого особливого, просто перевіряю"),
        "пакуємо речі, наступного тижня переїзд",
        "Коли переїзд?",
    ),
}


@pytest.mark.parametrize("lang", sorted(CASES))
def test_an_offer_of_help_does_not_answer_a_question(backend: Backend, lang: str) -> None:
    small_talk, said, question = CASES[lang]
    memory = backend.open(embedder="use-multilingual")
    memory.create_agent("me")
    day = datetime(2026, 4, 1, 18, tzinfo=UTC)
    for n in range(3):
        at = day + timedelta(days=10 * n)
        memory.save_turn(f"s{n}", "assistant", small_talk[0], agent="me", at=at)
        memory.save_turn(f"s{n}", "user", small_talk[2], agent="me", at=at + timedelta(minutes=1))
        memory.save_turn(
            f"s{n}", "assistant", small_talk[1], agent="me", at=at + timedelta(minutes=2)
        )
    memory.save_turn("move", "user", said, agent="me", at=day + timedelta(days=25))
    hits = memory.recall(question, agent="me", k=10, now=NOW, record_access=False).hits
    texts = [hit.item.content for hit in hits]
    assert texts and texts[0] == said, texts
    assert not set(texts) & set(small_talk), texts
