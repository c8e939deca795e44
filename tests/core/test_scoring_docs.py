import doctest
from dataclasses import fields
from pathlib import Path

from kronika.core.scoring import DAY, ScoreWeights
from kronika.engine.recall import RecallSettings
from kronika.settings import SETTINGS_TABLE, Settings, answer_floor, relevance_floor

DOC = Path(__file__).resolve().parents[2] / "docs" / "scoring.md"


def test_scoring_doc_example_runs():
    result = doctest.testfile(str(DOC), module_relative=False)
    assert result.attempted >= 5 and result.failed == 0


def test_scoring_doc_names_real_settings_with_their_defaults():
    text = DOC.read_text(encoding="utf-8")
    defaults = {spec.name: spec.default for spec in SETTINGS_TABLE}
    for name in (
        "alpha",
        "beta",
        "gamma",
        "decay_base",
        "recency_half_life",
        "relevance_floor",
        "answer_floor",
        "lexical_weight",
        "fusion",
        "neighbour_weight",
        "neighbour_window",
        "answer_focus",
        "speaker_focus",
        "session_weight",
        "recall_candidates",
        "recall_k",
        "reranker_depth",
        "reranker_weight",
    ):
        assert f"| `{name}` | {defaults[name]} |" in text


def test_the_engine_defaults_are_the_settings_defaults():
    """A Recaller or ScoreWeights built without Settings ranks as the defaults say."""
    settings = Settings()
    renamed = {"candidates": "recall_candidates", "results": "recall_k"}
    engine = RecallSettings()
    for field in fields(RecallSettings):
        if field.name not in ("weights", "relevance_floor", "answer_floor"):
            name = renamed.get(field.name, field.name)
            assert getattr(engine, field.name) == getattr(settings, name), name
    assert engine.relevance_floor == relevance_floor(settings) == 0.15  # auto, use-multilingual
    assert engine.answer_floor == answer_floor(settings) == 0.0  # off by default
    for name in ("alpha", "beta", "gamma"):
        assert getattr(ScoreWeights(), name) == getattr(settings, name), name
    assert ScoreWeights().half_life == settings.recency_half_life * DAY
    assert [f.name for f in fields(ScoreWeights)] == ["alpha", "beta", "gamma", "half_life"]
