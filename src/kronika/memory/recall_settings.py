"""What recall reads of the settings: :func:`recall_settings`."""

from __future__ import annotations

from kronika.core.scoring import ScoreWeights
from kronika.engine.recall import RecallSettings
from kronika.settings import Settings, answer_floor, relevance_floor

__all__ = ["recall_settings"]


def recall_settings(settings: Settings) -> RecallSettings:
    """What recall reads of ``settings`` (the weights of its score among them)."""
    weights = ScoreWeights.from_settings(
        settings.alpha,
        settings.beta,
        settings.gamma,
        settings.recency_half_life,
        settings.decay_base,
    )
    return RecallSettings(
        candidates=settings.recall_candidates,
        lexical_weight=settings.lexical_weight,
        fusion=settings.fusion,
        adaptive_shift=settings.adaptive_shift,
        skip_function_words=settings.skip_function_words,
        neighbour_weight=settings.neighbour_weight,
        neighbour_window=settings.neighbour_window,
        answer_focus=settings.answer_focus,
        speaker_focus=settings.speaker_focus,
        time_focus=settings.time_focus,
        when_focus=settings.when_focus,
        session_weight=settings.session_weight,
        hub_neighbours=settings.hub_neighbours,
        hub_scope=settings.hub_scope,
        fusion_z_ceiling=settings.fusion_z_ceiling,
        reranker_depth=settings.reranker_depth,
        reranker_weight=settings.reranker_weight,
        relevance_floor=relevance_floor(settings),
        answer_floor=answer_floor(settings),
        weights=weights,
    )
