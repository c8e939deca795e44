"""The groups of settings, each a frozen dataclass whose fields are the settings and
whose defaults are theirs (written once), and the maps from a flat name to its group."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from kronika.core.scoring import RECENCY_HALF_LIFE_DAYS, ScoreWeights

_WEIGHTS = ScoreWeights()
"""The recall score's weights are the core's defaults (written there once)."""


@dataclass(frozen=True, slots=True)
class WorkspaceGroup:
    """The workspace: where memory lives, whose it is, what a write may keep."""

    home: Path = Path(".kronika")
    tenant: str = "default"
    default_agent: str = "default"
    database_url: str = field(default="", repr=False)
    postgres_read_url: str = field(default="", repr=False)
    autonomy: int = 2
    secrets: str = "redact"
    dm_channels: str = "dm:*, dm-*"
    sync_interval: float = 1.0


@dataclass(frozen=True, slots=True)
class EmbeddingGroup:
    """The embedding model and the token counter."""

    embedder: str = "use-multilingual"
    embedder_threads: int = 1
    embed_batch: int = 64
    embed_context_words: int = 30
    embed_without_mood: bool = True
    token_encoding: str = "cl100k_base"
    model_cache: str = "user"


@dataclass(frozen=True, slots=True)
class RecallGroup:
    """How recall finds, weighs and scores memories."""

    recall_k: int = 10
    recall_candidates: int = 50
    lexical_weight: float = 0.5
    fusion: str = "zscore"
    adaptive_shift: float = 0.2
    skip_function_words: bool = True
    neighbour_weight: float = 0.5
    neighbour_window: int = 3
    answer_focus: float = 1.5
    speaker_focus: float = 1.2
    time_focus: float = 4.0
    when_focus: float = 1.0
    session_weight: float = 0.4
    hub_neighbours: int = 0
    hub_scope: str = "all"
    fusion_z_ceiling: float = 0.0
    alpha: float = _WEIGHTS.alpha
    beta: float = _WEIGHTS.beta
    gamma: float = _WEIGHTS.gamma
    recency_half_life: float = RECENCY_HALF_LIFE_DAYS
    decay_base: float = 0.0
    relevance_floor: str = "auto"
    answer_floor: str = "0"
    similarity_threshold: float = 0.5
    load_all_below: int = 100
    long_term_top_k: int = 7
    ann_threshold: int = 50_000
    restart_copies: bool = True
    postgres_ann_threshold: int = 10_000
    postgres_hnsw_m: int = 16
    postgres_hnsw_ef_construction: int = 64
    postgres_hnsw_search_margin: int = 40
    recall_log_days: int = 90
    recall_log_queries: bool = False


@dataclass(frozen=True, slots=True)
class VectorIndexGroup:
    """An external vector index (Qdrant) instead of the built-in vectors."""

    qdrant_url: str = ""
    qdrant_path: str = ""
    qdrant_collection: str = "kronika"
    qdrant_api_key: str = field(default="", repr=False)
    qdrant_timeout: float = 10.0


@dataclass(frozen=True, slots=True)
class BudgetsGroup:
    """Token budgets of the memory tiers and how unused memory fades."""

    identity_budget: int = 200
    brain_budget: int = 300
    brain_max: int = 500
    decay_half_life_days: float = 90.0
    decay_archive_below: float = 0.1
    distill_clear: bool = False
    active_context_budget: int = 300


@dataclass(frozen=True, slots=True)
class ImportanceGroup:
    """The importance each kind of memory starts with."""

    importance_explicit: float = 0.8
    importance_auto: float = 0.5
    importance_message: float = 0.3


@dataclass(frozen=True, slots=True)
class SessionsGroup:
    """Sessions: the context window, summaries and extraction."""

    context_budget: int = 32000
    summarize_at: float = 0.7
    keep_verbatim: int = 4
    idle_minutes: float = 30.0
    recall_budget: int = 500
    lessons_budget: int = 512
    extraction_budget: int = 12000
    max_facts: int = 8
    near_duplicate_similarity: float = 0.8
    l1_every: int = 5
    l2_every: int = 5
    consolidation_attempts: int = 5


@dataclass(frozen=True, slots=True)
class LlmGroup:
    """The chat model and its daily limits."""

    llm_base_url: str = ""
    llm_model: str = ""
    llm_api_key: str = field(default="", repr=False)
    minion_model: str = ""
    llm_timeout: float = 60.0
    llm_retries: int = 2
    llm_json_mode: str = "json_object"
    llm_daily_calls: int = 0
    llm_daily_tokens: int = 0
    llm_price_input: float = 0.0
    llm_price_output: float = 0.0


@dataclass(frozen=True, slots=True)
class RerankerGroup:
    """The reranking service recall may consult."""

    reranker_base_url: str = ""
    reranker_model: str = ""
    reranker_api: str = "cohere"
    reranker_api_key: str = field(default="", repr=False)
    reranker_depth: int = 30
    reranker_weight: float = 0.5
    reranker_timeout: float = 10.0
    reranker_retries: int = 1


GROUPS: tuple[tuple[str, str, type[Any]], ...] = (
    ("workspace", "workspace", WorkspaceGroup),
    ("embedding", "embedding", EmbeddingGroup),
    ("recall", "recall", RecallGroup),
    ("vector index", "vector_index", VectorIndexGroup),
    ("budgets", "budgets", BudgetsGroup),
    ("importance", "importance", ImportanceGroup),
    ("sessions", "sessions", SessionsGroup),
    ("llm", "llm", LlmGroup),
    ("reranker", "reranker", RerankerGroup),
)
"""Each group's heading (docs/settings.md), attribute of :class:`Settings` and class."""


GROUP_OF: dict[str, str] = {f.name: attr for _, attr, cls in GROUPS for f in fields(cls)}
"""Each setting's flat name and the :class:`Settings` group that holds it."""

HEADING_OF: dict[str, str] = {f.name: head for head, _, cls in GROUPS for f in fields(cls)}
"""Each setting's flat name and its group's heading."""

DEFAULTS: dict[str, Any] = {
    f.name: str(f.default) if f.name == "home" else f.default
    for _, _, cls in GROUPS
    for f in fields(cls)
}
"""Each setting's default, read from its group's field (written there once)."""
