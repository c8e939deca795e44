"""Every setting kronika has, in one declarative table.

Values come from, in increasing priority: the defaults below (the seed documents'
numbers), ``<home>/kronika.toml``, environment variables ``KRONIKA_<NAME>`` and
explicit overrides (CLI flags, keyword arguments). ``docs/settings.md`` is
generated from this table and checked by the tests.

Per-agent settings live in the config file under ``[agents.<name>]``::

    [agents.jaskier]
    autonomy = 1              # 0 read-only, 1 suggest, 2 auto, 3 full
    writers = ["planner"]     # other agents allowed to write here
    tenant = "acme"           # the tenant this agent's memory belongs to

Team membership (who sees team-scoped memory, see ``docs/scopes.md``) lives under
``[teams]``: one list of user names per team::

    [teams]
    core = ["anna", "bob"]

Storage policies live in ``[retention]`` and ``[[policy]]`` tables
(:mod:`kronika.core.policies`, ``docs/policies.md``).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Generic, TypeVar, overload

from kronika.core.adaptive import FUSION_METHODS
from kronika.core.hubness import HUB_SCOPES
from kronika.core.policies import StoragePolicies, parse_dm_channels, parse_policies
from kronika.core.scoring import RECENCY_HALF_LIFE_DAYS, ScoreWeights
from kronika.core.screening import MODES as SECRETS_MODES
from kronika.errors import ConfigError

CONFIG_FILE = "kronika.toml"

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
class SettingSpec:
    """One setting's name and help; its default and its group are those of the group
    field it is (written there once)."""

    name: str
    help: str

    @property
    def default(self) -> Any:
        return _DEFAULTS[self.name]

    @property
    def group(self) -> str:
        """The heading of the setting's group (``recall``, ``vector index``…)."""
        return _HEADING_OF[self.name]


SETTINGS_TABLE: tuple[SettingSpec, ...] = (
    # workspace
    SettingSpec("home", "Workspace folder (also $KRONIKA_HOME)."),
    SettingSpec(
        "tenant",
        "Tenant of every agent that names none of its own ([agents.<name>] tenant); a "
        "reader of another tenant sees none of their memory.",
    ),
    SettingSpec("default_agent", "Agent used when a command names none."),
    SettingSpec(
        "database_url",
        "A PostgreSQL URL (postgresql://user:password@host/db) turns on team mode: the"
        " tenant's memory lives in that database and the workspace folder is this"
        " worker's working copy of it (docs/postgres.md). Empty: the Markdown workspace"
        " alone. Prefer the environment variable KRONIKA_DATABASE_URL.",
    ),
    SettingSpec(
        "autonomy",
        "Default autonomy level: 0 read-only, 1 suggest, 2 auto, 3 full.",
    ),
    SettingSpec(
        "secrets",
        "What a write does with a secret it recognises (API keys and tokens, private keys, "
        "card numbers, passwords; see docs/reliability.md): redact replaces it with a marker "
        "such as [secret: openai-key], refuse rejects the write naming the kind, allow "
        "stores it as written.",
    ),
    SettingSpec(
        "dm_channels",
        "What a direct message (DM) is, for the storage policies' dm = true/false: "
        "comma-separated shell-style patterns of channel names (see docs/policies.md).",
    ),
    # embedding
    SettingSpec(
        "embedder",
        "Embedding model: use-multilingual (local, offline, default), minilm (local, "
        "offline, English only; needs the [minilm] extra), e5-small (local, offline, "
        "multilingual, strongest in Ukrainian, ~10x slower; needs the [e5] extra) or "
        "hashing (deterministic, for tests).",
    ),
    SettingSpec("embedder_threads", "CPU threads for the local embedder's forward pass."),
    SettingSpec(
        "sync_interval",
        "Seconds between checks of the Markdown for hand edits within one process.",
    ),
    SettingSpec("embed_batch", "Texts embedded per batch while indexing."),
    SettingSpec(
        "embed_context_words",
        "Words of the other person's turns just before and after a conversation turn "
        "embedded with it (never the assistant's; 0: each turn alone). A change "
        "re-embeds the workspace.",
    ),
    SettingSpec("token_encoding", "Tokenizer used for every token budget."),
    SettingSpec(
        "model_cache",
        "Where the default embedder and the token counter keep a prepared copy of their "
        "vocabulary and weights, so a new process loads them in a fifth of the time: user "
        "($XDG_CACHE_HOME/kronika or ~/.cache/kronika), off, or a folder. Made from the "
        "installed packages' own files, never downloaded; a stale or damaged copy is made "
        "again.",
    ),
    # recall
    SettingSpec("recall_k", "Results a recall returns by default."),
    SettingSpec("recall_candidates", "Candidates each retriever contributes before fusion."),
    SettingSpec(
        "lexical_weight",
        "Share of lexical (BM25) relevance in hybrid recall; the rest is vector (chosen"
        " by 5-fold cross-validation over LoCoMo, LongMemEval_S and bench memory).",
    ),
    SettingSpec(
        "fusion",
        "How hybrid recall combines lexical and vector scores: minmax (each scaled to"
        " [0, 1]), zscore (standard scores, then scaled) or adaptive (zscore at a lexical"
        " weight read from the query: adaptive_shift more when it names a person, a number,"
        " an identifier or a quoted phrase, that much less otherwise).",
    ),
    SettingSpec(
        "adaptive_shift",
        "With fusion = adaptive: how far a query's lexical weight moves from lexical_weight"
        " (up for names, numbers, identifiers, quotes; down for the rest).",
    ),
    SettingSpec(
        "skip_function_words",
        "Keyword search leaves out a query's function words (the, how, many, jak, que, "
        "що…) unless every word is one; false keeps them (memories of code, where 'if' "
        "and 'for' matter).",
    ),
    SettingSpec(
        "neighbour_weight",
        "How much a conversation turn's relevance borrows from the turns around it "
        "(0 turns it off; the second neighbour counts half).",
    ),
    SettingSpec("neighbour_window", "Turns before and after a turn read as its context."),
    SettingSpec(
        "answer_focus",
        "A conversation turn another person (not the assistant) answered next counts "
        "1/(1 + this × the share of its words that ask) as relevant: the answer holds "
        "what the question only names (0 turns it off).",
    ),
    SettingSpec(
        "speaker_focus",
        "When a query names one speaker, other speakers' items count 1/(1 + this) "
        "as relevant (0 turns it off).",
    ),
    SettingSpec(
        "time_focus",
        "When a query names a date, month, season or year, or points back from now ('two "
        "weeks ago', 'last Saturday'), items from outside that period count 1/(1 + this) "
        "as relevant, and a fact's past value true then is a candidate; 'before X' prefers "
        "the value before the one X names (0 turns all of it off).",
    ),
    SettingSpec(
        "when_focus",
        "When a question asks when (when, kiedy, cuándo, коли…), items that say when "
        "(yesterday, last week, in May, 2022…) count fully and others 1/(1 + this) "
        "(0 turns it off).",
    ),
    SettingSpec(
        "session_weight",
        "How far a turn's relevance moves towards the best turn of its session (0 turns it off).",
    ),
    SettingSpec(
        "hub_neighbours",
        "Before fusion each vector candidate's cosine is lowered by half its mean cosine with"
        " this many of the other candidates most like it, so a text close to every query (a"
        " greeting, an errand) stops winning the vector list (CSLS; 10 is the published"
        " value; 0, the default, turns it off; docs/scoring.md).",
    ),
    SettingSpec(
        "hub_scope",
        "With hub_neighbours: 'all' reads a candidate against every other candidate (CSLS);"
        " 'others' against candidates of other sessions and facts only, not the turns of"
        " its own session or the versions of its own fact (measured: no better;"
        " docs/benchmarks-folds.md).",
    ),
    SettingSpec(
        "fusion_z_ceiling",
        "With fusion = zscore, each retriever's standard score is bounded near this many"
        " deviations (c x tanh(z / c)), so one keyword match far above the rest does not"
        " decide alone (3 is the usual choice; 0, the default, leaves them unbounded;"
        " docs/scoring.md).",
    ),
    SettingSpec(
        "alpha",
        "Weight of relevance in the recall score (R3): score = relevance x (alpha + beta x"
        " importance + gamma x recency) / (alpha + beta + gamma), so an item needs more than"
        " alpha / (alpha + beta + gamma) of another's relevance to outrank it (docs/scoring.md).",
    ),
    SettingSpec("beta", "Weight of importance in the recall score (R3), beside alpha."),
    SettingSpec("gamma", "Weight of recency in the recall score (R3), beside alpha."),
    SettingSpec(
        "recency_half_life",
        "Days after which a memory's recency in the recall score is half (counted from the"
        " last recall a caller made of it, else from its creation).",
    ),
    SettingSpec(
        "decay_base",
        "Deprecated: recency decay per second; above 0 it replaces recency_half_life by"
        " ln 2 / decay_base seconds. 0: use recency_half_life.",
    ),
    SettingSpec(
        "relevance_floor",
        "Recall keeps only memories with evidence of their own: a content word of the query"
        " found by keyword search, or a cosine to the query of at least this much (a turn"
        " also passes through the other party's turn beside it), so nothing unrelated is"
        " returned in recall, the prompt's long-term block and lessons. A number from 0"
        " (off) to below 1, or auto: the value calibrated for the embedder (use-multilingual"
        " 0.15; off for the others, not calibrated) (docs/scoring.md).",
    ),
    SettingSpec(
        "answer_floor",
        "Recall answers at all only when the memory closest to the query in meaning has at"
        " least this cosine with it; below, it returns nothing (recall, the prompt's"
        " long-term block and lessons alike) and says so in its notes. 0 (the default):"
        " off, because at the value chosen by leave-one-person-out a plain 'where do I live"
        " now?' over a stored city gets nothing; a number below 1, or auto: that value for"
        " the embedder (use-multilingual 0.25; off for the others) (docs/scoring.md).",
    ),
    SettingSpec(
        "similarity_threshold",
        "Best-match similarity a turn-time recall must pass (L2).",
    ),
    SettingSpec("load_all_below", "Below this many facts load_all returns all of them (R6)."),
    SettingSpec("long_term_top_k", "Relevant facts in the LONG_TERM_MEMORY block (R4)."),
    SettingSpec(
        "ann_threshold",
        "From this many embedded items on, vector search takes its candidates from an HNSW"
        " graph (approximate; scores and filters stay exact), and the index keeps copies of"
        " its vectors and keyword postings beside the file for a fast restart; 0 keeps"
        " search exact always and saves neither.",
    ),
    SettingSpec(
        "restart_copies",
        "From ann_threshold items on, save copies of the in-memory vectors and keyword"
        " postings beside the index when it closes (about 2.5 GB at 1M items), so the next"
        " process starts in seconds instead of reading them out of SQLite.",
    ),
    SettingSpec(
        "recall_log_days",
        "Days the recall log keeps each recall (when, which agent, for which user and"
        " channel, how many hits, which item ids; docs/ui.md): it feeds the recall-use"
        " chart and can be exported. 0 keeps no log.",
    ),
    SettingSpec(
        "recall_log_queries",
        "Also keep each recall's query text in the recall log, screened for secrets as"
        " stored text is (the secrets setting; refuse redacts there, as a recall is never"
        " refused for its query). Off: the log never holds what was asked.",
    ),
    # vector index
    SettingSpec(
        "qdrant_url",
        "A Qdrant server (or cluster) that answers vector search instead of the built-in"
        " vectors, e.g. http://localhost:6333; needs the [qdrant] extra. Empty: built-in.",
    ),
    SettingSpec(
        "qdrant_path",
        "A folder for Qdrant's local mode (one process at a time, brute force; for tests"
        " and small memories), relative to the workspace; used when qdrant_url is empty.",
    ),
    SettingSpec("qdrant_collection", "The Qdrant collection holding the vectors."),
    SettingSpec(
        "qdrant_api_key",
        "API key of the Qdrant server; prefer the environment variable KRONIKA_QDRANT_API_KEY.",
    ),
    SettingSpec("qdrant_timeout", "Seconds to wait for one Qdrant request."),
    # budgets
    SettingSpec("identity_budget", "Token budget of the Identity core (M1)."),
    SettingSpec("brain_budget", "Target token budget of the Brain (M1)."),
    SettingSpec(
        "brain_max",
        "Hard token limit of the Brain; above it facts are archived (M2).",
    ),
    SettingSpec(
        "decay_half_life_days",
        "Days after which an unused memory holds on half as strongly (the decay job and the"
        " Brain's overflow; see docs/jobs.md).",
    ),
    SettingSpec(
        "decay_archive_below",
        "Strength under which the decay job moves a Brain fact to the archive.",
    ),
    SettingSpec(
        "distill_clear",
        "Whether the distill job clears the messages it distilled (docs/jobs.md); "
        "`kronika jobs run distill --clear` does it once.",
    ),
    SettingSpec("active_context_budget", "Token budget of the Active Context (M1)."),
    # importance defaults
    SettingSpec("importance_explicit", "Importance of facts the user stated explicitly."),
    SettingSpec("importance_auto", "Importance of facts learned automatically."),
    SettingSpec("importance_message", "Importance of raw conversation turns."),
    # sessions
    SettingSpec(
        "context_budget",
        "Total token budget of what a session sends the model: identity, brain, active "
        "context, recall, lessons and history (L2).",
    ),
    SettingSpec(
        "summarize_at",
        "Share of context_budget above which the older conversation is summarised (L3).",
    ),
    SettingSpec(
        "keep_verbatim",
        "Latest messages always kept word for word in the window (L3).",
    ),
    SettingSpec(
        "idle_minutes",
        "A message arriving this long after the previous one starts a new session (L5).",
    ),
    SettingSpec("recall_budget", "Token budget of turn-time recall (L2)."),
    SettingSpec("lessons_budget", "Token budget of lessons (reflections, strategies) (F3)."),
    SettingSpec(
        "extraction_budget",
        "Transcript tokens one extraction call may read; longer sessions send their "
        "summary and the latest part.",
    ),
    SettingSpec("max_facts", "Most facts one session's extraction may write (L6)."),
    SettingSpec(
        "near_duplicate_similarity",
        "An extracted fact (rules or model) whose content words overlap a Brain fact's at "
        "least this much (Jaccard, function words left out) is that fact again: it "
        "refreshes or supersedes it instead of standing beside it (1: only the same "
        "words; see docs/domain.md).",
    ),
    SettingSpec("l1_every", "Unsummarised sessions that make an L1 summary (L7)."),
    SettingSpec("l2_every", "Unsummarised L1 summaries that make an L2 summary (L7)."),
    SettingSpec(
        "consolidation_attempts",
        "Failed consolidation attempts before a session is marked failed (retry with "
        "`kronika jobs consolidate --retry-failed`).",
    ),
    # llm
    SettingSpec(
        "llm_base_url",
        "OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 (Ollama) or "
        "https://api.openai.com/v1; empty means no model (memory still works, L8).",
    ),
    SettingSpec("llm_model", "Model that answers in `kronika chat`."),
    SettingSpec(
        "llm_api_key",
        "API key sent as a Bearer token; prefer the environment variable KRONIKA_LLM_API_KEY.",
    ),
    SettingSpec(
        "minion_model",
        "Cheaper model for background work: extraction, summaries, consolidation (L9); "
        "empty means llm_model.",
    ),
    SettingSpec("llm_timeout", "Seconds to wait for one model reply."),
    SettingSpec("llm_retries", "Retries (with backoff) on transient model errors."),
    SettingSpec(
        "llm_json_mode",
        "json_object asks for JSON with response_format; none relies on the prompt alone.",
    ),
    SettingSpec(
        "llm_daily_calls",
        "Most model calls one agent may make per UTC day (0: no limit); past it, work waits"
        " in the queue until the next day.",
    ),
    SettingSpec(
        "llm_daily_tokens",
        "Most model tokens (prompt + reply) one agent may spend per UTC day (0: no limit).",
    ),
    SettingSpec(
        "llm_price_input",
        "Price of one million prompt tokens, for the cost estimate of `kronika logs usage`.",
    ),
    SettingSpec(
        "llm_price_output",
        "Price of one million reply tokens, for the cost estimate of `kronika logs usage`.",
    ),
    # reranker
    SettingSpec(
        "reranker_base_url",
        "A reranking service (a cross-encoder behind POST …/rerank), e.g."
        " http://localhost:8080/v1 (llama-server --reranking, vLLM, Infinity, TEI) or"
        " https://api.cohere.com/v2; empty means recall keeps its own order.",
    ),
    SettingSpec(
        "reranker_model",
        "Reranking model to ask for (servers with one model ignore it).",
    ),
    SettingSpec(
        "reranker_api",
        "cohere sends {query, documents, top_n} (Cohere, Jina, vLLM, llama.cpp, Infinity);"
        " tei sends {query, texts} (text-embeddings-inference).",
    ),
    SettingSpec(
        "reranker_api_key",
        "API key sent as a Bearer token; prefer the environment variable KRONIKA_RERANKER_API_KEY.",
    ),
    SettingSpec(
        "reranker_depth",
        "How many of recall's best candidates the reranker reads (one request per recall;"
        " below 2 it is not asked).",
    ),
    SettingSpec(
        "reranker_weight",
        "How much the reranker's order counts among those candidates: 0 not at all, 1 it"
        " alone orders them (they keep their place above the rest).",
    ),
    SettingSpec(
        "reranker_timeout",
        "Seconds to wait for the reranker; on failure recall keeps its own order and says so.",
    ),
    SettingSpec("reranker_retries", "Retries (with backoff) on transient reranker errors."),
)

_SPECS = {spec.name: spec for spec in SETTINGS_TABLE}


@dataclass(frozen=True, slots=True)
class AgentPolicy:
    """Per-agent write policy (SPEC C5, C6)."""

    autonomy: int = 2
    writers: tuple[str, ...] = ()
    tenant: str | None = None
    """The tenant the agent belongs to (the ``tenant`` setting when not given)."""


_WEIGHTS = ScoreWeights()
"""The recall score's weights are the core's defaults (written there once)."""


@dataclass(frozen=True, slots=True)
class WorkspaceGroup:
    """The workspace: where memory lives, whose it is, what a write may keep."""

    home: Path = Path(".kronika")
    tenant: str = "default"
    default_agent: str = "default"
    database_url: str = field(default="", repr=False)
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
    token_encoding: str = "cl100k_base"
    model_cache: str = "user"


@dataclass(frozen=True, slots=True)
class RecallGroup:
    """How recall finds, weighs and scores memories."""

    recall_k: int = 10
    recall_candidates: int = 100
    lexical_weight: float = 0.5
    fusion: str = "zscore"
    adaptive_shift: float = 0.2
    skip_function_words: bool = True
    neighbour_weight: float = 0.5
    neighbour_window: int = 3
    answer_focus: float = 1.5
    speaker_focus: float = 0.6
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


@dataclass(frozen=True, slots=True)
class Settings:
    """Every setting, in groups: each engine part is given only its group (e.g.
    ``settings.recall``). The flat names (``settings.recall_k``) read the same values."""

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

    # the flat names of the file format, typed, read from their group
    home = _Flat(lambda s: s.workspace.home)
    tenant = _Flat(lambda s: s.workspace.tenant)
    default_agent = _Flat(lambda s: s.workspace.default_agent)
    database_url = _Flat(lambda s: s.workspace.database_url)
    autonomy = _Flat(lambda s: s.workspace.autonomy)
    secrets = _Flat(lambda s: s.workspace.secrets)
    dm_channels = _Flat(lambda s: s.workspace.dm_channels)
    sync_interval = _Flat(lambda s: s.workspace.sync_interval)
    embedder = _Flat(lambda s: s.embedding.embedder)
    embedder_threads = _Flat(lambda s: s.embedding.embedder_threads)
    embed_batch = _Flat(lambda s: s.embedding.embed_batch)
    embed_context_words = _Flat(lambda s: s.embedding.embed_context_words)
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
        clean = {k: _coerce(k, v) for k, v in overrides.items() if v is not None}
        return _with_flat(self, clean)


_GROUP_OF: dict[str, str] = {f.name: attr for _, attr, cls in GROUPS for f in fields(cls)}
"""Each setting's flat name and the :class:`Settings` group that holds it."""

_HEADING_OF: dict[str, str] = {f.name: head for head, _, cls in GROUPS for f in fields(cls)}
"""Each setting's flat name and its group's heading."""

_DEFAULTS: dict[str, Any] = {
    f.name: str(f.default) if f.name == "home" else f.default
    for _, _, cls in GROUPS
    for f in fields(cls)
}
"""Each setting's default, read from its group's field (written there once)."""


def _with_flat(settings: Settings, values: Mapping[str, Any]) -> Settings:
    """``settings`` with ``values`` (flat names, already checked) put into their groups."""
    top = {k: v for k, v in values.items() if k in ("agents", "storage", "teams")}
    changed: dict[str, dict[str, Any]] = {}
    for name, value in values.items():
        if name not in top:
            changed.setdefault(_GROUP_OF[name], {})[name] = value
    groups = {attr: replace(getattr(settings, attr), **v) for attr, v in changed.items()}
    return replace(settings, **groups, **top)


MAX_SETTING_NUMBER = 1_000_000_000
"""No numeric setting may pass this (nor be NaN or infinite): larger ones overflow
SQLite integers and time spans instead of meaning anything."""


def _coerce(name: str, value: Any) -> Any:
    if name in ("agents", "storage", "teams"):
        return value
    spec = _SPECS.get(name)
    if spec is None:
        raise ConfigError(f"unknown setting {name!r}")
    if name == "home":
        return Path(os.path.expanduser(str(value)))
    kind = type(spec.default)
    try:
        if kind is bool:
            return str(value).lower() in {"1", "true", "yes", "on"}
        coerced = kind(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"setting {name!r} expects {kind.__name__}, got {value!r}") from exc
    if name == "autonomy" and coerced not in (0, 1, 2, 3):
        raise ConfigError("setting 'autonomy' must be 0, 1, 2 or 3")
    if name == "secrets" and coerced not in SECRETS_MODES:
        raise ConfigError("setting 'secrets' must be 'redact', 'refuse' or 'allow'")
    if (
        name == "database_url"
        and coerced
        and not coerced.startswith(("postgresql://", "postgres://"))
    ):
        raise ConfigError("setting 'database_url' must start with postgresql://")
    if name == "fusion" and coerced not in FUSION_METHODS:
        raise ConfigError(f"setting 'fusion' must be {' or '.join(map(repr, FUSION_METHODS))}")
    if name == "hub_scope" and coerced not in HUB_SCOPES:
        raise ConfigError(f"setting 'hub_scope' must be {' or '.join(map(repr, HUB_SCOPES))}")
    if name == "adaptive_shift" and not 0 <= coerced <= 1:
        raise ConfigError("setting 'adaptive_shift' must be from 0 to 1")
    if name == "llm_json_mode" and coerced not in ("json_object", "none"):
        raise ConfigError("setting 'llm_json_mode' must be 'json_object' or 'none'")
    if name == "reranker_api" and coerced not in ("cohere", "tei"):
        raise ConfigError("setting 'reranker_api' must be 'cohere' or 'tei'")
    if name in ("llm_daily_calls", "llm_daily_tokens", "llm_price_input", "llm_price_output") and (
        coerced < 0
    ):
        raise ConfigError(f"setting {name!r} must not be negative")
    if name == "recency_half_life" and coerced <= 0:
        raise ConfigError("setting 'recency_half_life' must be above 0 (days)")
    if name in ("relevance_floor", "answer_floor"):
        return _floor_setting(name, coerced)
    if name == "decay_half_life_days" and coerced <= 0:
        raise ConfigError("setting 'decay_half_life_days' must be above 0")
    if name == "decay_archive_below" and not 0 <= coerced < 1:
        raise ConfigError("setting 'decay_archive_below' must be from 0 to below 1")
    if name == "reranker_weight" and not 0 <= coerced <= 1:
        raise ConfigError("setting 'reranker_weight' must be from 0 to 1")
    if name == "summarize_at" and not 0 < coerced <= 1:
        raise ConfigError("setting 'summarize_at' must be above 0 and at most 1")
    if name == "near_duplicate_similarity" and not 0 < coerced <= 1:
        raise ConfigError("setting 'near_duplicate_similarity' must be above 0 and at most 1")
    if name in ("l1_every", "l2_every") and coerced < 2:
        raise ConfigError(f"setting {name!r} must be at least 2")
    if isinstance(coerced, int | float) and coerced < 0:
        raise ConfigError(f"setting {name!r} must not be negative")
    if isinstance(coerced, int | float) and not coerced <= MAX_SETTING_NUMBER:  # NaN too
        raise ConfigError(f"setting {name!r} must be at most {MAX_SETTING_NUMBER}, got {value!r}")
    return coerced


CALIBRATED_FLOORS: dict[str, float] = {"use-multilingual": 0.15}
"""``relevance_floor = auto`` per embedder: the cosine about nine in ten unrelated pairs
stay below (docs/benchmarks-ranking.md). Embedders not listed have no floor of their
own (keyword evidence alone would be too strict for them): auto turns it off."""


CALIBRATED_ANSWER_FLOORS: dict[str, float] = {"use-multilingual": 0.25}
"""``answer_floor = auto`` per embedder: the best cosine below which recall answers
nothing, chosen by leave-one-person-out over ``kronika bench memory`` (0.25 in 10 folds
of 12; docs/benchmarks-abstention.md). Not calibrated for the others: auto is off."""


def _floor_setting(name: str, value: str) -> str:
    text = value.strip().lower()
    if text == "auto":
        return text
    try:
        number = float(text)
    except ValueError as exc:
        raise ConfigError(
            f"setting {name!r} must be auto or a number from 0 to below 1, got {value!r}"
        ) from exc
    if not 0 <= number < 1:
        raise ConfigError(f"setting {name!r} must be from 0 (off) to below 1")
    return text


def relevance_floor(settings: Settings) -> float:
    """The cosine floor recall applies: the setting's number, or for ``auto`` the value
    calibrated for the configured embedder (0, off, for one not calibrated)."""
    return floor_value(settings.relevance_floor, CALIBRATED_FLOORS, settings.embedder)


def answer_floor(settings: Settings) -> float:
    """The best cosine a query must reach for recall to answer: the setting's number, or
    for ``auto`` the value chosen for the configured embedder (0, off, for the others)."""
    return floor_value(settings.answer_floor, CALIBRATED_ANSWER_FLOORS, settings.embedder)


def floor_value(value: str, calibrated: Mapping[str, float], embedder: str) -> float:
    """A floor setting's number: ``value`` itself, or for ``auto`` the value in
    ``calibrated`` for ``embedder`` (0, off, for one not calibrated)."""
    if value == "auto":
        return calibrated.get(embedder, 0.0)
    return float(value)


def _agent_policies(raw: Any, default_autonomy: int) -> dict[str, AgentPolicy]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError("[agents] in the config file must be a table of tables")
    policies: dict[str, AgentPolicy] = {}
    for agent, table in raw.items():
        if not isinstance(table, dict):
            raise ConfigError(f"[agents.{agent}] must be a table")
        autonomy = _coerce("autonomy", table.get("autonomy", default_autonomy))
        writers = table.get("writers", [])
        if not isinstance(writers, list) or not all(isinstance(w, str) for w in writers):
            raise ConfigError(f"[agents.{agent}].writers must be a list of agent names")
        tenant = table.get("tenant")
        if tenant is not None and (not isinstance(tenant, str) or not tenant.strip()):
            raise ConfigError(f"[agents.{agent}].tenant must be a tenant name")
        policies[str(agent)] = AgentPolicy(autonomy=autonomy, writers=tuple(writers), tenant=tenant)
    return policies


def _teams(raw: Any) -> dict[str, tuple[str, ...]]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError("[teams] in the config file must be a table of member lists")
    teams: dict[str, tuple[str, ...]] = {}
    for team, members in raw.items():
        if not isinstance(members, list) or not all(isinstance(m, str) for m in members):
            raise ConfigError(f"[teams].{team} must be a list of user names")
        teams[str(team)] = tuple(members)
    return teams


def load_settings(
    home: str | Path | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    **overrides: Any,
) -> Settings:
    """Build :class:`Settings` from defaults, ``<home>/kronika.toml``, env and overrides."""
    env = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    home_value = home if home is not None else env.get("KRONIKA_HOME", _SPECS["home"].default)
    home_path = Path(os.path.expanduser(str(home_value)))
    config_path = home_path / CONFIG_FILE
    raw_agents: Any = None
    raw_teams: Any = None
    if config_path.is_file():
        try:
            text = config_path.read_text(encoding="utf-8")
            data = tomllib.loads(text)
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"cannot read {config_path}: {exc}") from exc
        raw_agents = data.pop("agents", None)
        raw_rules, raw_retention = data.pop("policy", None), data.pop("retention", None)
        if raw_rules is not None or raw_retention is not None:
            values["storage"] = parse_policies(
                raw_rules, raw_retention, text=text, source=str(config_path)
            )
        raw_teams = data.pop("teams", None)
        for name, value in data.items():
            if name == "home":
                continue
            values[name] = _coerce(name, value)
    for spec in SETTINGS_TABLE:
        if spec.name == "home":
            continue
        env_value = env.get(f"KRONIKA_{spec.name.upper()}")
        if env_value is not None:
            values[spec.name] = _coerce(spec.name, env_value)
    for name, value in overrides.items():
        if value is not None:
            values[name] = _coerce(name, value)
    values["home"] = home_path
    settings = _with_flat(Settings(), values)
    agents = _agent_policies(raw_agents, settings.autonomy)
    teams = _teams(raw_teams)
    return replace(settings, agents=agents, teams=teams) if agents or teams else settings


def grouped_specs() -> list[tuple[str, list[SettingSpec]]]:
    """Each group's heading and its settings, in the order of :data:`GROUPS` and of each
    group's fields (the order of docs/settings.md and of ``kronika init``'s file)."""
    return [(heading, [_SPECS[f.name] for f in fields(cls)]) for heading, _, cls in GROUPS]


def _toml_value(value: Any) -> str:
    """``value`` as TOML writes it (``true``, ``"text"``, ``0.5``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return f'"{value}"' if isinstance(value, str) else str(value)


def default_config_text() -> str:
    """The commented ``kronika.toml`` that ``kronika init`` writes."""
    lines = ["# kronika settings. Every line is optional; see docs/settings.md.", ""]
    for heading, specs in grouped_specs():
        lines.append(f"# --- {heading} ---")
        for spec in specs:
            if spec.name == "home":
                continue
            default = _toml_value(spec.default)
            lines.append(f"# {spec.help}")
            lines.append(f"# {spec.name} = {default}")
    lines += [
        "",
        "# Per-agent write policy:",
        "# [agents.default]",
        "# autonomy = 2",
        '# writers = ["planner"]',
        '# tenant = "default"',
        "",
        "# Teams and their members (who sees team-scoped memory):",
        "# [teams]",
        '# core = ["anna", "bob"]',
        "",
        "# Storage policies (docs/policies.md; `kronika policies` shows them):",
        "# [retention]",
        "# short = 30",
        "# [[policy]]",
        '# name = "no DMs in long-term memory"',
        "# dm = true",
        '# max_tier = "mid"',
        "",
    ]
    return "\n".join(lines)


def settings_markdown() -> str:
    """``docs/settings.md``, generated from the groups of :class:`Settings` and the help of
    :data:`SETTINGS_TABLE` (checked by the tests)."""
    lines = [
        "# Settings",
        "",
        "<!-- generated by `scripts/gen-docs`; do not edit by hand -->",
        "",
        "Every setting can be given in `<home>/kronika.toml` (`name = value`), as an",
        "environment variable `KRONIKA_<NAME>` (upper case), or as a keyword argument to",
        "`load_settings(home, name=value)`; later sources win. The workspace folder itself",
        "comes from `--home`, `$KRONIKA_HOME` or the default `./.kronika`.",
        "A number may be neither negative nor above 1000000000 (nor NaN or infinite); a bad",
        "value stops every command with exit code 2 and names the setting.",
        "",
        "In Python the `Settings` that `load_settings` returns holds each section below as",
        "a frozen group (`settings.recall.recall_k`); each setting also reads by its own",
        "name (`settings.recall_k`), and `settings.with_overrides(recall_k=5)` gives a copy",
        "with settings changed by name.",
        "",
    ]
    # one section per group of Settings, its settings in the group's order
    for (heading, specs), (_, attr, cls) in zip(grouped_specs(), GROUPS, strict=True):
        lines += ["", f"## {heading}", "", f"In Python: `settings.{attr}` (`{cls.__name__}`).", ""]
        lines += ["| name | default | meaning |", "| --- | --- | --- |"]
        lines += [f"| `{spec.name}` | `{spec.default}` | {spec.help} |" for spec in specs]
    lines += [
        "",
        "## Per-agent write policy",
        "",
        "```toml",
        "[agents.jaskier]",
        "autonomy = 1              # 0 read-only, 1 suggest, 2 auto (default), 3 full",
        'writers = ["planner"]     # other agents allowed to write into jaskier\'s memory',
        'tenant = "acme"           # the tenant jaskier belongs to (default: `tenant`)',
        "```",
        "",
        "The person (CLI, API calls without `source_agent`) is never held back by autonomy;",
        "it governs what agents write on their own. Reading another agent's memory is",
        "always allowed (SPEC C6); writing needs the grant.",
        "",
        "## Storage policies",
        "",
        "```toml",
        "[retention]               # days each tier is kept; absent or 0: for ever",
        "short = 30",
        "mid = 365",
        "",
        "[[policy]]",
        'name = "no DMs in long-term memory"',
        "dm = true                 # a channel matching dm_channels",
        'max_tier = "mid"',
        "",
        "[[policy]]",
        'name = "never store #hr-private"',
        'channels = ["hr-private"]',
        "store = false",
        "```",
        "",
        "What each key means, how rules combine and what `kronika policies purge` does: see",
        "[storage policies](policies.md). A bad rule stops every command with exit code 2",
        "and names its line in `kronika.toml`; `kronika policies` shows the rules in force.",
        "",
        "## Teams",
        "",
        "```toml",
        "[teams]",
        'core = ["anna", "bob"]    # members see memory scoped to team core',
        "```",
        "",
        "Who may see what is described in docs/scopes.md.",
        "",
    ]
    return "\n".join(lines)
