"""The README's "From Python" case with the real local embedder: a fact stated just now
(importance 0.8, fresh) and greeting turns must not outrank the turn that answers.

What the ranking guarantees is checked here: the answer is returned, the fact about
something else ranks below it, and nothing ranks above it on importance or recency
alone (every hit above it has at least four fifths of its relevance). The greeting
turns themselves match "user" as a word and as an embedded speaker label; keeping
speaker labels out of a turn's searched words and vector is the indexer's part, and
only with it does the answer come first (today the five greetings still fill the
README's k=5, so ten are asked for here).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kronika import build_memory, load_settings
from kronika.core.scoring import ScoreWeights, overtaking_bound
from kronika.testing import FrozenClock

pytestmark = pytest.mark.slow

GREETINGS = ("hi", "hello! how are you?", "thanks", "ok", "good morning")
ANSWER = "I moved to Valencia last week"


def test_where_does_the_user_live_finds_the_move_above_an_unrelated_fresh_fact(
    tmp_path: Path, clock: FrozenClock
) -> None:
    settings = load_settings(tmp_path / "ws", environ={}, embedder="use-multilingual")
    with build_memory(settings, create=True, clock=clock) as memory:
        clock.advance(days=3)
        for text in GREETINGS:
            memory.save_turn("chat-1", "user", text)
            memory.save_turn("chat-1", "assistant", "Hello! How can I help you today?")
        memory.save_turn("chat-1", "user", ANSWER)
        clock.advance(days=3)
        memory.remember("prefiere TypeScript", key="preferencia")
        result = memory.recall("where does the user live?", k=10, since="30d")
        texts = [hit.item.content for hit in result.hits]
        assert ANSWER in texts
        answer = result.hits[texts.index(ANSWER)]
        fact = [hit for hit in result.hits if "TypeScript" in hit.item.content]
        assert all(hit.score.total < answer.score.total for hit in fact)
        bound = overtaking_bound(ScoreWeights())
        for hit in result.hits[: texts.index(ANSWER)]:
            assert hit.score.relevance > bound * answer.score.relevance
        block = memory.format_for_prompt(query="where does the user live?")
        assert "TypeScript" in block  # the Brain is always shown; no long-term block of noise
