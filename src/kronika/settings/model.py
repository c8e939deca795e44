"""The :class:`Settings` that hold every group, the flat names that read them, and the
per-agent write policy."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Generic, TypeVar, overload

from kronika.core.policies import StoragePolicies, parse_dm_channels
from kronika.settings.groups import (
    GROUP_OF,
    BudgetsGroup,
    EmbeddingGroup,
    ImportanceGroup,
    LlmGroup,
    RecallGroup,
    RerankerGroup,
    SessionsGroup,
    VectorIndexGroup,
    WorkspaceGroup,
)
from kronika.settings.values import (
    CALIBRATED_ANSWER_FLOORS,
    CALIBRATED_FLOORS,
    check_together,
    coerce,
    floor_value,
)

T = TypeVar("T")


class _Flat(Generic[T]):
    """A setting's flat name on :class:`Settings` (``settings.recall_k``): reads the value
    from its group (``settings.recall.recall_k``), typed as the group's field is."""

    __slots__ = ("_get",)

    def __init__(self, get: Callable[[Settings], T]) -> None:
        self._get = get

    @overload
    def __get__(self, obj: None, owner: type[Any]) -> _Flat[T]: ...
    @overload
    def __get__(self, obj: Settings, owner: type[Any]) -> T: ...
    def __get__(self, obj: Settings | None, owner: type[Any]) -> T | _Flat[T]:
        return self if obj is None else self._get(obj)


@dataclass(frozen=True, slots=True)
class AgentPolicy:
    """Per-agent write policy (SPEC C5, C6)."""

    autonomy: int = 2
    writers: tuple[str, ...] = ()
    tenant: str | None = None
    """The tenant the agent belongs to (the ``tenant`` setting when not given)."""


_WORKSPACE = WorkspaceGroup()
_EMBEDDING = EmbeddingGroup()
_RECALL = RecallGroup()
_VECTOR_INDEX = VectorIndexGroup()
_BUDGETS = BudgetsGroup()
_IMPORTANCE = ImportanceGroup()
_SESSIONS = SessionsGroup()
_LLM = LlmGroup()
_RERANKER = RerankerGroup()
_STORAGE = StoragePolicies()
_UNSET: dict[str, Any] = {
    "workspace": _WORKSPACE,
    "embedding": _EMBEDDING,
    "recall": _RECALL,
    "vector_index": _VECTOR_INDEX,
    "budgets": _BUDGETS,
    "importance": _IMPORTANCE,
    "sessions": _SESSIONS,
    "llm": _LLM,
    "reranker": _RERANKER,
}
"""The default argument of each group of :class:`Settings`, never stored: a group not
given is told from one given (also by :func:`dataclasses.replace`) by being this one."""


@dataclass(frozen=True, slots=True, init=False)
class Settings:
    """Every setting, in groups: each engine part is given only its group (e.g.
    ``settings.recall``). The flat names (``settings.recall_k``) read the same values.

    Build one with :func:`~kronika.settings.load_settings`, from groups
    (``Settings(recall=RecallGroup(recall_k=5))``) or as a changed copy
    (``Settings().with_overrides(recall_k=5)``). Flat keyword arguments
    (``Settings(recall_k=5)``) still work for one release, with a
    :class:`DeprecationWarning`."""

    workspace: WorkspaceGroup = field(default_factory=WorkspaceGroup)
    embedding: EmbeddingGroup = field(default_factory=EmbeddingGroup)
    recall: RecallGroup = field(default_factory=RecallGroup)
    vector_index: VectorIndexGroup = field(default_factory=VectorIndexGroup)
    budgets: BudgetsGroup = field(default_factory=BudgetsGroup)
    importance: ImportanceGroup = field(default_factory=ImportanceGroup)
    sessions: SessionsGroup = field(default_factory=SessionsGroup)
    llm: LlmGroup = field(default_factory=LlmGroup)
    reranker: RerankerGroup = field(default_factory=RerankerGroup)
    agents: Mapping[str, AgentPolicy] = field(default_factory=dict)
    storage: StoragePolicies = field(default_factory=StoragePolicies)
    """The ``[[policy]]`` and ``[retention]`` tables (see :mod:`kronika.core.policies`)."""
    teams: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """``[teams]`` of the config file: each team's members (user names)."""

    def __init__(
        self,
        workspace: WorkspaceGroup = _WORKSPACE,
        embedding: EmbeddingGroup = _EMBEDDING,
        recall: RecallGroup = _RECALL,
        vector_index: VectorIndexGroup = _VECTOR_INDEX,
        budgets: BudgetsGroup = _BUDGETS,
        importance: ImportanceGroup = _IMPORTANCE,
        sessions: SessionsGroup = _SESSIONS,
        llm: LlmGroup = _LLM,
        reranker: RerankerGroup = _RERANKER,
        agents: Mapping[str, AgentPolicy] | None = None,
        storage: StoragePolicies = _STORAGE,
        teams: Mapping[str, tuple[str, ...]] | None = None,
        **flat: Any,
    ) -> None:
        """The groups (each left out: its defaults); ``flat`` are deprecated flat
        keyword arguments (``recall_k=5``), put into their groups as
        :meth:`with_overrides` puts them."""
        given = {
            "workspace": workspace,
            "embedding": embedding,
            "recall": recall,
            "vector_index": vector_index,
            "budgets": budgets,
            "importance": importance,
            "sessions": sessions,
            "llm": llm,
            "reranker": reranker,
        }
        if flat:
            given = _flat_into_groups(given, flat)
        for attr, group in given.items():  # a group not given: a new one of defaults
            object.__setattr__(self, attr, type(group)() if group is _UNSET[attr] else group)
        object.__setattr__(self, "agents", {} if agents is None else agents)
        object.__setattr__(self, "storage", storage)
        object.__setattr__(self, "teams", {} if teams is None else teams)

    # the flat names of the file format, typed, read from their group
    home = _Flat(lambda s: s.workspace.home)
    tenant = _Flat(lambda s: s.workspace.tenant)
    default_agent = _Flat(lambda s: s.workspace.default_agent)
    database_url = _Flat(lambda s: s.workspace.database_url)
    postgres_read_url = _Flat(lambda s: s.workspace.postgres_read_url)
    autonomy = _Flat(lambda s: s.workspace.autonomy)
    secrets = _Flat(lambda s: s.workspace.secrets)
    dm_channels = _Flat(lambda s: s.workspace.dm_channels)
    sync_interval = _Flat(lambda s: s.workspace.sync_interval)
    embedder = _Flat(lambda s: s.embedding.embedder)
    embedder_threads = _Flat(lambda s: s.embedding.embedder_threads)
    embed_batch = _Flat(lambda s: s.embedding.embed_batch)
    embed_context_words = _Flat(lambda s: s.embedding.embed_context_words)
    embed_without_mood = _Flat(lambda s: s.embedding.embed_without_mood)
    token_encoding = _Flat(lambda s: s.embedding.token_encoding)
    model_cache = _Flat(lambda s: s.embedding.model_cache)
    recall_k = _Flat(lambda s: s.recall.recall_k)
    recall_candidates = _Flat(lambda s: s.recall.recall_candidates)
    lexical_weight = _Flat(lambda s: s.recall.lexical_weight)
    fusion = _Flat(lambda s: s.recall.fusion)
    adaptive_shift = _Flat(lambda s: s.recall.adaptive_shift)
    skip_function_words = _Flat(lambda s: s.recall.skip_function_words)
    neighbour_weight = _Flat(lambda s: s.recall.neighbour_weight)
    neighbour_window = _Flat(lambda s: s.recall.neighbour_window)
    answer_focus = _Flat(lambda s: s.recall.answer_focus)
    speaker_focus = _Flat(lambda s: s.recall.speaker_focus)
    time_focus = _Flat(lambda s: s.recall.time_focus)
    when_focus = _Flat(lambda s: s.recall.when_focus)
    session_weight = _Flat(lambda s: s.recall.session_weight)
    hub_neighbours = _Flat(lambda s: s.recall.hub_neighbours)
    hub_scope = _Flat(lambda s: s.recall.hub_scope)
    fusion_z_ceiling = _Flat(lambda s: s.recall.fusion_z_ceiling)
    alpha = _Flat(lambda s: s.recall.alpha)
    beta = _Flat(lambda s: s.recall.beta)
    gamma = _Flat(lambda s: s.recall.gamma)
    recency_half_life = _Flat(lambda s: s.recall.recency_half_life)
    decay_base = _Flat(lambda s: s.recall.decay_base)
    relevance_floor = _Flat(lambda s: s.recall.relevance_floor)
    answer_floor = _Flat(lambda s: s.recall.answer_floor)
    similarity_threshold = _Flat(lambda s: s.recall.similarity_threshold)
    load_all_below = _Flat(lambda s: s.recall.load_all_below)
    long_term_top_k = _Flat(lambda s: s.recall.long_term_top_k)
    ann_threshold = _Flat(lambda s: s.recall.ann_threshold)
    restart_copies = _Flat(lambda s: s.recall.restart_copies)
    postgres_ann_threshold = _Flat(lambda s: s.recall.postgres_ann_threshold)
    postgres_hnsw_m = _Flat(lambda s: s.recall.postgres_hnsw_m)
    postgres_hnsw_ef_construction = _Flat(lambda s: s.recall.postgres_hnsw_ef_construction)
    postgres_hnsw_search_margin = _Flat(lambda s: s.recall.postgres_hnsw_search_margin)
    recall_log_days = _Flat(lambda s: s.recall.recall_log_days)
    recall_log_queries = _Flat(lambda s: s.recall.recall_log_queries)
    qdrant_url = _Flat(lambda s: s.vector_index.qdrant_url)
    qdrant_path = _Flat(lambda s: s.vector_index.qdrant_path)
    qdrant_collection = _Flat(lambda s: s.vector_index.qdrant_collection)
    qdrant_api_key = _Flat(lambda s: s.vector_index.qdrant_api_key)
    qdrant_timeout = _Flat(lambda s: s.vector_index.qdrant_timeout)
    identity_budget = _Flat(lambda s: s.budgets.identity_budget)
    brain_budget = _Flat(lambda s: s.budgets.brain_budget)
    brain_max = _Flat(lambda s: s.budgets.brain_max)
    decay_half_life_days = _Flat(lambda s: s.budgets.decay_half_life_days)
    decay_archive_below = _Flat(lambda s: s.budgets.decay_archive_below)
    distill_clear = _Flat(lambda s: s.budgets.distill_clear)
    active_context_budget = _Flat(lambda s: s.budgets.active_context_budget)
    importance_explicit = _Flat(lambda s: s.importance.importance_explicit)
    importance_auto = _Flat(lambda s: s.importance.importance_auto)
    importance_message = _Flat(lambda s: s.importance.importance_message)
    context_budget = _Flat(lambda s: s.sessions.context_budget)
    summarize_at = _Flat(lambda s: s.sessions.summarize_at)
    keep_verbatim = _Flat(lambda s: s.sessions.keep_verbatim)
    idle_minutes = _Flat(lambda s: s.sessions.idle_minutes)
    recall_budget = _Flat(lambda s: s.sessions.recall_budget)
    lessons_budget = _Flat(lambda s: s.sessions.lessons_budget)
    extraction_budget = _Flat(lambda s: s.sessions.extraction_budget)
    max_facts = _Flat(lambda s: s.sessions.max_facts)
    near_duplicate_similarity = _Flat(lambda s: s.sessions.near_duplicate_similarity)
    l1_every = _Flat(lambda s: s.sessions.l1_every)
    l2_every = _Flat(lambda s: s.sessions.l2_every)
    consolidation_attempts = _Flat(lambda s: s.sessions.consolidation_attempts)
    llm_base_url = _Flat(lambda s: s.llm.llm_base_url)
    llm_model = _Flat(lambda s: s.llm.llm_model)
    llm_api_key = _Flat(lambda s: s.llm.llm_api_key)
    minion_model = _Flat(lambda s: s.llm.minion_model)
    llm_timeout = _Flat(lambda s: s.llm.llm_timeout)
    llm_retries = _Flat(lambda s: s.llm.llm_retries)
    llm_json_mode = _Flat(lambda s: s.llm.llm_json_mode)
    llm_daily_calls = _Flat(lambda s: s.llm.llm_daily_calls)
    llm_daily_tokens = _Flat(lambda s: s.llm.llm_daily_tokens)
    llm_price_input = _Flat(lambda s: s.llm.llm_price_input)
    llm_price_output = _Flat(lambda s: s.llm.llm_price_output)
    reranker_base_url = _Flat(lambda s: s.reranker.reranker_base_url)
    reranker_model = _Flat(lambda s: s.reranker.reranker_model)
    reranker_api = _Flat(lambda s: s.reranker.reranker_api)
    reranker_api_key = _Flat(lambda s: s.reranker.reranker_api_key)
    reranker_depth = _Flat(lambda s: s.reranker.reranker_depth)
    reranker_weight = _Flat(lambda s: s.reranker.reranker_weight)
    reranker_timeout = _Flat(lambda s: s.reranker.reranker_timeout)
    reranker_retries = _Flat(lambda s: s.reranker.reranker_retries)

    @property
    def storage_policies(self) -> StoragePolicies:
        """The storage rules with what a DM is (the ``dm_channels`` setting)."""
        return replace(self.storage, dm_channels=parse_dm_channels(self.dm_channels))

    def teams_of(self, user: str | None) -> tuple[str, ...]:
        """The teams ``user`` belongs to, by name (none for no user)."""
        if user is None:
            return ()
        return tuple(sorted(team for team, members in self.teams.items() if user in members))

    def tenants(self) -> dict[str, str]:
        """The agents whose tenant is not the ``tenant`` setting, and theirs."""
        return {name: p.tenant for name, p in self.agents.items() if p.tenant is not None}

    def policy(self, agent: str) -> AgentPolicy:
        """The write policy of ``agent`` (the workspace default when it has none of its own)."""
        return self.agents.get(agent, AgentPolicy(autonomy=self.autonomy))

    def with_overrides(self, **overrides: Any) -> Settings:
        """A copy with some values replaced, by their flat names (validated like every
        other source); ``None`` leaves a value as it is."""
        clean = {k: coerce(k, v) for k, v in overrides.items() if v is not None}
        return with_flat(self, clean)


def _flat_into_groups(given: dict[str, Any], flat: Mapping[str, Any]) -> dict[str, Any]:
    """``given`` (each group passed to :class:`Settings`, a default one where none was)
    with the deprecated flat keyword arguments ``flat`` put into their groups; a
    ``TypeError`` for a name that is no setting, or one whose group was passed too."""
    unknown = [name for name in flat if name not in GROUP_OF]
    if unknown:
        raise TypeError(f"Settings() got an unexpected keyword argument {unknown[0]!r}")
    for name in flat:
        attr = GROUP_OF[name]
        if given[attr] is not _UNSET[attr]:
            raise TypeError(
                f"Settings() was given both {attr}= and {name}=, which is in that group: "
                f"give {name} inside the group ({type(given[attr]).__name__}({name}=...)), "
                f"or change a copy with settings.with_overrides({name}=...) "
                "(dataclasses.replace passes every group, so it takes no flat names)"
            )
    names = ", ".join(f"{name}=..." for name in flat)
    warnings.warn(
        f"Settings({names}) with flat keyword arguments is deprecated and will be removed "
        f"in the next release: use Settings().with_overrides({names}) or the groups "
        f"(Settings({GROUP_OF[next(iter(flat))]}=...))",
        DeprecationWarning,
        stacklevel=3,
    )
    base = Settings(**given).with_overrides(**flat)
    return {attr: getattr(base, attr) for attr in given}


def with_flat(settings: Settings, values: Mapping[str, Any]) -> Settings:
    """``settings`` with ``values`` (flat names, already checked) put into their groups."""
    top = {k: v for k, v in values.items() if k in ("agents", "storage", "teams")}
    changed: dict[str, dict[str, Any]] = {}
    for name, value in values.items():
        if name not in top:
            changed.setdefault(GROUP_OF[name], {})[name] = value
    groups = {attr: replace(getattr(settings, attr), **v) for attr, v in changed.items()}
    made = replace(settings, **groups, **top)
    check_together(lambda name: getattr(made, name))
    return made


def relevance_floor(settings: Settings) -> float:
    """The cosine floor recall applies: the setting's number, or for ``auto`` the value
    calibrated for the configured embedder (0, off, for one not calibrated)."""
    return floor_value(settings.relevance_floor, CALIBRATED_FLOORS, settings.embedder)


def answer_floor(settings: Settings) -> float:
    """The best cosine a query must reach for recall to answer: the setting's number, or
    for ``auto`` the value chosen for the configured embedder (0, off, for the others)."""
    return floor_value(settings.answer_floor, CALIBRATED_ANSWER_FLOORS, settings.embedder)
