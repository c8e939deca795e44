"""``fusion = adaptive``: a query naming something ranks with keyword search's weight
raised, a paraphrase with the embedding's (settings of a real workspace)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from kronika import SessionRecord, TurnRecord
from kronika.app import build_memory
from kronika.errors import ConfigError
from kronika.settings import load_settings
from kronika.testing import FrozenClock

WORDS = ["tea", "kettle", "harbour", "blue", "garden", "painting", "Gdańsk", "concert", "2019"]
NOW = datetime(2023, 6, 1, tzinfo=UTC)


def _sessions() -> list[SessionRecord]:
    rng = random.Random(7)
    return [
        SessionRecord(
            session_id=f"conv-s{s}",
            started_at=datetime(2023, 5, 1, tzinfo=UTC) + timedelta(days=s),
            turns=tuple(
                TurnRecord(
                    turn_id=f"D{s}:{t}",
                    speaker=["Ola", "Piotr"][t % 2],
                    content=" ".join(rng.sample(WORDS, 3)),
                )
                for t in range(10)
            ),
        )
        for s in range(5)
    ]


def _orders(home: Path, queries: list[str], **overrides: object) -> list[list[str]]:
    settings = load_settings(home, environ={}, embedder="hashing").with_overrides(**overrides)
    mem = build_memory(settings, create=True, clock=FrozenClock(NOW))
    try:
        if not mem.agents() or "conv" not in mem.agents():
            mem.import_sessions("conv", _sessions())
        return [
            [h.item.id for h in mem.recall(q, agent="conv", k=15, record_access=False).hits]
            for q in queries
        ]
    finally:
        mem.close()


def test_a_specific_query_leans_lexical_and_a_paraphrase_leans_vector(tmp_path: Path) -> None:
    home = tmp_path / "ws"
    queries = [
        "blue tea at the Gdańsk concert",
        "blue tea in the garden by the harbour",
        "What did Piotr say of blue tea in the garden?",  # a speaker's name: no specific word
    ]
    adaptive = _orders(home, queries, fusion="adaptive", lexical_weight=0.5, adaptive_shift=0.5)
    lexical = _orders(home, queries, fusion="zscore", lexical_weight=1.0)
    vector = _orders(home, queries, fusion="zscore", lexical_weight=0.0)
    # the two weights rank each query differently...
    assert all(lexical[n] != vector[n] for n in range(3))
    assert adaptive[0] == lexical[0]  # ...a name: keyword search alone
    assert adaptive[1] == vector[1]  # a paraphrase: the embedding alone
    assert adaptive[2] == vector[2]
    same = _orders(home, queries, fusion="adaptive", lexical_weight=0.5, adaptive_shift=0.0)
    assert same == _orders(home, queries, fusion="zscore", lexical_weight=0.5)


def test_a_bad_adaptive_setting_is_a_clear_error(tmp_path: Path) -> None:
    settings = load_settings(tmp_path / "ws", environ={}, embedder="hashing")
    with pytest.raises(ConfigError, match="adaptive_shift"):
        settings.with_overrides(adaptive_shift=1.5)
    with pytest.raises(ConfigError, match="'adaptive'"):
        settings.with_overrides(fusion="rrf")
