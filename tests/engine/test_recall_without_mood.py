"""Errands the user asked do not answer every question recall is asked: with the real
local embedder, the questions a memory keeps ("what's the capital of Australia?") no
longer come before the fact that answers (kronika.providers.mood). With the plain
model's vectors (``embed_without_mood = false``) both cases below put the errands first."""

from __future__ import annotations

from pathlib import Path

import pytest

from kronika import build_memory, load_settings
from kronika.testing import FrozenClock

pytestmark = pytest.mark.slow

ERRANDS = (
    ("what's the capital of Australia?", "Canberra."),
    ("can you help me plan a weekend in Edinburgh?", "Sure: the castle, then Arthur's Seat."),
    ("how do I politely remind a client about an invoice?", "Try: a gentle reminder that…"),
    ("¿me recomiendas una serie?", "Prueba «Dark»."),
)


@pytest.mark.parametrize(
    ("question", "key", "value"),
    [
        ("Where do I work?", "employer", "Airbus"),
        ("Gdzie teraz mieszkam?", "miasto", "Gdańsk"),
    ],
)
def test_the_fact_that_answers_comes_before_the_users_errands(
    tmp_path: Path, clock: FrozenClock, question: str, key: str, value: str
) -> None:
    settings = load_settings(
        tmp_path / "ws", environ={}, embedder="use-multilingual", embed_without_mood=True
    )
    with build_memory(settings, create=True, clock=clock) as memory:
        memory.remember(value, key=key)
        clock.advance(days=2)
        for asked, told in ERRANDS:
            memory.save_turn("chat-1", "user", asked)
            memory.save_turn("chat-1", "assistant", told)
        result = memory.recall(question, k=5)
        assert result.hits and result.hits[0].item.value == value, [
            hit.item.content for hit in result.hits
        ]
