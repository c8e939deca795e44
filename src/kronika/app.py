"""The composition root: the one place that chooses concrete adapters.

``build_memory(settings)`` wires the Markdown workspace, the SQLite index, the
embedder, the token counter, the clock and the audit trail into a :class:`Memory`.
With ``qdrant_url`` or ``qdrant_path`` set, vector search goes to a Qdrant collection
(:func:`build_vector_index`). ``build_llm(settings)`` picks the chat model (or none),
``build_reranker(settings.reranker)`` the reranking service recall may consult (or none).
Tests and applications that want other parts construct them themselves.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from kronika.engine.derivation import rederive_if_stale
from kronika.engine.doctor_held import watch_settings
from kronika.engine.restore import recover_interrupted_imports
from kronika.engine.undone import auditing_undone
from kronika.errors import ConfigError, WorkspaceNotFound
from kronika.memory import Memory
from kronika.ports import (
    LLM,
    AuditLog,
    Clock,
    Embedder,
    PointSource,
    Reranker,
    StoreOfRecord,
    WriteLock,
)
from kronika.providers.clock import SystemClock
from kronika.providers.embedders import build_embedder
from kronika.providers.prepared import PreparedCopies
from kronika.providers.tokens import TiktokenCounter
from kronika.settings import (
    CONFIG_FILE,
    RerankerGroup,
    Settings,
    VectorIndexGroup,
    default_config_text,
)
from kronika.stores.audit import JsonlAuditLog
from kronika.stores.lock import recover_batch
from kronika.stores.markdown.atomic import atomic_write_text
from kronika.stores.markdown.workspace import MarkdownWorkspace
from kronika.stores.private import DIR_MODE, make_private_dir, tighten_home
from kronika.stores.sqlite import SqliteIndex
from kronika.stores.usage import USAGE_FILE as USAGE_FILE
from kronika.stores.vectored import IndexWithVectors

if TYPE_CHECKING:
    from datetime import datetime

    from kronika.core.usage import UsageEntry
    from kronika.engine.indexer import Progress
    from kronika.stores.postgres.replica import ReplayMark
    from kronika.stores.qdrant.index import QdrantVectorIndex

log = logging.getLogger("kronika")

INDEX_FILE = "index.sqlite"
AUDIT_FILE = "audit.jsonl"
MODEL_MARKER = "index.model"
"""Names the embedding model the index was last built with, and the words of exchange
context each turn was embedded with (:func:`vectors_made_with`); a change triggers
re-embedding."""
TENANTS_MARKER = "index.tenants"
"""The tenants the index's items were given (the ``tenant`` setting and each agent's
own, :func:`tenants_of`); a change re-reads the agents whose tenant changed."""


def init_workspace(settings: Settings) -> bool:
    """Create the workspace (config file, folders, the default agent); False if it existed.

    Everything is its owner's alone (:mod:`kronika.stores.private`). The config file is
    the commented defaults: a key given in the environment (``KRONIKA_LLM_API_KEY``…)
    stays there and is never written into it. In team mode (``database_url``) the folder
    becomes a working copy of the record, where the default agent is made if missing.
    """
    workspace = MarkdownWorkspace(settings.home, tenant=settings.tenant, tenants=settings.tenants())
    existed = workspace.exists()
    make_private_dir(settings.home)
    _keep_private(settings.home)
    workspace.initialize()
    config = settings.home / CONFIG_FILE
    if not config.exists():
        atomic_write_text(config, default_config_text())
    if settings.database_url:
        _team_parts(settings)[2].close()
    elif not workspace.has_agent(settings.default_agent):
        workspace.create_agent(settings.default_agent)
    return not existed


def build_memory(
    settings: Settings,
    *,
    create: bool = False,
    embedder: Embedder | None = None,
    clock: Clock | None = None,
    index: PointSource | None = None,
    progress: Progress | None = None,
) -> Memory:
    """A ready :class:`Memory` for the workspace at ``settings.home``.

    ``index`` replaces the SQLite index beside the workspace (a benchmark runs the
    same workspace over :class:`kronika.stores.postgres.index.PostgresIndex`), as the
    caller opened it.

    ``create`` makes the workspace when it is missing (otherwise that is an error
    telling the user to run ``kronika init``). With ``settings.database_url`` the memory
    is the tenant's in that PostgreSQL database and the folder its working copy,
    made as needed (:func:`_team_parts`); with ``settings.postgres_read_url`` the
    index's reads that may lag go to that replica (:mod:`kronika.stores.postgres.replica`).
    A corrupt index is moved aside and
    rebuilt from the Markdown; an index built with another embedding model is
    re-embedded, never mixed; an index built by an older reading of the Markdown is
    rebuilt (:mod:`kronika.engine.derivation`; ``progress(done, total)`` follows it).
    """
    if settings.postgres_read_url and not settings.database_url:
        raise ConfigError("setting 'postgres_read_url' needs 'database_url' (team mode)")
    if settings.database_url:
        mark = _replay_mark(settings)
        team = _team_parts(settings, mark)
        return _with_index(settings, team, embedder, clock, index, progress=progress, mark=mark)
    workspace = MarkdownWorkspace(
        settings.home,
        tenant=settings.tenant,
        tenants=settings.tenants(),
        message_importance=settings.importance_message,
    )
    if not workspace.exists():
        if not create:
            raise WorkspaceNotFound(
                f"no kronika workspace at {settings.home} (run `kronika init` or set KRONIKA_HOME)"
            )
        init_workspace(settings)
    else:
        _keep_private(settings.home)
    audit = JsonlAuditLog(Path(settings.home) / AUDIT_FILE)
    parts = (workspace, audit, None)
    return _with_index(settings, parts, embedder, clock, index, progress=progress)


def _with_index(
    settings: Settings,
    parts: tuple[MarkdownWorkspace, AuditLog, WriteLock | None],
    embedder: Embedder | None,
    clock: Clock | None,
    index: PointSource | None,
    *,
    progress: Progress | None = None,
    mark: ReplayMark | None = None,
) -> Memory:
    """The memory of ``parts`` (workspace, audit trail, write lock) with its index, the
    embedder and the rest; the index is repaired or re-embedded when it must be. With
    ``mark`` (team mode with a read replica) the index reads what may lag there."""
    workspace, audit, lock = parts
    for done in recover_interrupted_imports(Path(settings.home)):
        log.warning("%s in %s", done, settings.home)
    if lock is None:  # (a working copy's lock did, when it was first taken)
        recover_batch(Path(settings.home), auditing_undone(audit, clock or SystemClock()))
    embedding = settings.embedding
    copies = PreparedCopies.from_setting(embedding.model_cache)
    chosen = embedder or build_embedder(
        embedding.embedder,
        threads=embedding.embedder_threads,
        copies=copies,
        without_mood=embedding.embed_without_mood,
    )
    index_path = Path(settings.home) / INDEX_FILE
    recreated = False
    if index is None and settings.database_url:
        from kronika.stores.postgres.index import HnswOptions, PostgresIndex

        try:
            index = PostgresIndex(
                settings.database_url,
                embedding_model=chosen.model_id,
                dim=chosen.dim,
                ann_threshold=settings.postgres_ann_threshold,
                tenant=settings.tenant,
                read_url=settings.postgres_read_url if mark is not None else "",
                mark=mark,
                hnsw=HnswOptions(
                    m=settings.postgres_hnsw_m,
                    ef_construction=settings.postgres_hnsw_ef_construction,
                    search_margin=settings.postgres_hnsw_search_margin,
                ),
            )
        except BaseException:
            if lock is not None:
                lock.close()
            raise
    if index is None:
        index, recreated = SqliteIndex.open_or_rebuild(
            index_path,
            embedding_model=chosen.model_id,
            dim=chosen.dim,
            ann_threshold=settings.ann_threshold,
            restart_copies=settings.restart_copies,
        )
    try:
        vectors = build_vector_index(
            settings.vector_index,
            Path(settings.home),
            embedding_model=chosen.model_id,
            dim=chosen.dim,
        )
    except BaseException:
        index.close()
        raise
    wrapped = None if vectors is None else IndexWithVectors(index, vectors)
    memory = Memory(
        settings=settings,
        workspace=workspace,
        index=index if wrapped is None else wrapped,
        embedder=chosen,
        tokens=TiktokenCounter(embedding.token_encoding, copies=copies),
        clock=clock or SystemClock(),
        audit=audit,
        reranker=build_reranker(settings.reranker),
        lock=lock,
    )
    memory.finish_forgets()  # before anything reads what a cut-short forget left
    settings_lost = watch_settings(Path(settings.home))
    if settings_lost is not None:
        memory.report_damage(settings_lost)
    marker = Path(settings.home) / MODEL_MARKER
    previous = _read_marker(marker, memory)
    current = vectors_made_with(chosen.model_id, settings.embed_context_words)
    if recreated:
        kept = sorted(index_path.parent.glob(f"{INDEX_FILE}.corrupt-*"))
        memory.report_damage(
            f"the index at {index_path} was damaged and was rebuilt from the Markdown"
            + (f"; the damaged file was kept at {kept[-1]}" if kept else "")
        )
        memory.reindex()
    elif previous is not None and previous != current:
        log.warning("embedding changed (%s -> %s): re-embedding", previous, current)
        memory.reindex()
    elif wrapped is not None and vectors is not None and vectors.created:
        filled = wrapped.fill()
        if filled:
            log.warning("the vector index %s was new: %d points put in", vectors.collection, filled)
    if previous != current:
        atomic_write_text(marker, current + "\n")
    rederive_if_stale(memory.index, lambda bar: memory.reindex(progress=bar), progress)
    tenants = Path(settings.home) / TENANTS_MARKER
    if _read_marker(tenants, memory) != tenants_of(settings):
        memory.follow_tenants()
        atomic_write_text(tenants, tenants_of(settings) + "\n")
    return memory


def _read_marker(marker: Path, memory: Memory) -> str | None:
    """The text of a derived marker file, ``None`` when it is missing. A marker that is
    empty, not UTF-8 or holds control characters (damaged) reads as ``""``: what it
    records is derived again, it is written anew, and that is said."""
    try:
        raw = marker.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raw = b""
        memory.report_damage(f"{marker} cannot be read ({exc})")
    text = raw.decode("utf-8", errors="replace").strip()
    if not text or any(c == "\ufffd" or (ord(c) < 32 and c != "\n") for c in text):
        memory.report_damage(
            f"{marker} was damaged or empty; what it records was derived again and the "
            "file written anew"
        )
        return ""
    return text


def tenants_of(settings: Settings) -> str:
    """What :data:`TENANTS_MARKER` holds for ``settings``."""
    return json.dumps({"tenant": settings.tenant, "agents": settings.tenants()}, sort_keys=True)


def _replay_mark(settings: Settings) -> ReplayMark | None:
    """Team mode with a read replica: the worker's mark, which its record raises and its
    index reads by (:mod:`kronika.stores.postgres.replica`); ``None`` without one."""
    if not settings.postgres_read_url:
        return None
    from kronika.stores.postgres.replica import ReplayMark

    return ReplayMark()


def _team_parts(
    settings: Settings, mark: ReplayMark | None = None
) -> tuple[MarkdownWorkspace, AuditLog, WriteLock]:
    """Team mode: the tenant's record and audit trail in the PostgreSQL database at
    ``settings.database_url`` (migrated on start), and the workspace folder as this
    worker's working copy of the record (made when missing; it holds nothing the
    record does not). The default agent is created in the record when it is missing.
    With ``mark`` the record raises it (:class:`~kronika.stores.postgres.replica.MarkingRecord`).
    """
    from kronika.stores.postgres.connect import migrate, open_pool

    pool = open_pool(settings.database_url, max_size=4)
    try:
        with pool.connection() as conn:
            migrate(conn)
        from kronika.stores.postgres.record import PostgresRecord
        from kronika.stores.postgres.record_audit import PostgresAuditLog
        from kronika.stores.working_copy import WorkingCopy

        make_private_dir(settings.home)
        _keep_private(settings.home)
        workspace = MarkdownWorkspace(
            settings.home,
            tenant=settings.tenant,
            tenants=settings.tenants(),
            message_importance=settings.importance_message,
        )
        workspace.initialize()
        rows = PostgresRecord(pool, settings.tenant, owns_pool=True)
        record: StoreOfRecord = rows
        if mark is not None:
            from kronika.stores.postgres.replica import MarkingRecord

            record = MarkingRecord(record, pool, mark)
        copy = WorkingCopy(settings.home, workspace, record)
        # another worker's forget leaves this folder at once, not at its next call
        rows.follow_forgets(copy.refresh)
        # an entry audited under the write lock commits with the write it records
        audit = PostgresAuditLog(pool, settings.tenant, record=rows)
        copy.on_undone(auditing_undone(audit, SystemClock()))
        with copy:  # brings the copy up to date; what it creates goes into the record
            if not workspace.has_agent(settings.default_agent):
                workspace.create_agent(settings.default_agent)
    except BaseException:
        pool.close()
        raise
    return workspace, audit, copy


TENANTS_DIR = "tenants"
"""In team mode, the folder (under the home) of the working copies of the other
tenants a server serves from the same database."""


def team_memories(
    settings: Settings, tenants: Iterable[str], *, clock: Clock | None = None
) -> dict[str, Memory]:
    """Team mode: a memory for every tenant of ``tenants`` in the one database at
    ``settings.database_url``, by tenant. The tenant of ``settings`` and those its
    agents name (``[agents.<name>] tenant``) share the memory at ``settings.home``, as
    without a database; every other tenant gets a memory of its own, with its working
    copy in ``<home>/tenants/<name>`` and every agent its own (the agents' policies
    apply, their tenants do not), loading the embedding model once for all of them.
    """
    main = build_memory(settings, clock=clock)
    memories = dict.fromkeys({settings.tenant, *settings.tenants().values()}, main)
    try:
        for tenant in sorted(set(tenants) - set(memories)):
            memories[tenant] = tenant_memory(settings, tenant, embedder=main.embedder, clock=clock)
    except BaseException:
        for memory in {id(m): m for m in memories.values()}.values():
            memory.close()
        raise
    return memories


def tenant_memory(
    settings: Settings, tenant: str, *, embedder: Embedder, clock: Clock | None = None
) -> Memory:
    """Team mode: the memory of ``tenant`` (not the one of ``settings``) in the database
    at ``settings.database_url``, its working copy in ``<home>/tenants/<name>``."""
    from dataclasses import replace

    from kronika.stores.postgres.connect import index_schema

    folder = index_schema(tenant).removeprefix("kronika_idx_")
    own = settings.with_overrides(
        home=Path(settings.home) / TENANTS_DIR / folder,
        tenant=tenant,
        agents={name: replace(p, tenant=None) for name, p in settings.agents.items()},
    )
    return build_memory(own, create=True, embedder=embedder, clock=clock)


def build_vector_index(
    settings: VectorIndexGroup, home: Path, *, embedding_model: str, dim: int
) -> QdrantVectorIndex | None:
    """The Qdrant collection vector search goes to (``qdrant_url``, else ``qdrant_path``
    relative to the workspace ``home``), or ``None``: the index's built-in vectors."""
    if not settings.qdrant_url and not settings.qdrant_path:
        return None
    from kronika.stores.qdrant import open_vector_index  # the client: only when configured

    path = None if settings.qdrant_url else home / settings.qdrant_path
    return open_vector_index(
        collection=settings.qdrant_collection,
        embedding_model=embedding_model,
        dim=dim,
        url=settings.qdrant_url or None,
        path=path,
        api_key=settings.qdrant_api_key or None,
        timeout=settings.qdrant_timeout,
    )


def _keep_private(home: Path) -> None:
    """Close the workspace folder to other users when it is open to them (files inside
    made before kronika kept its files private still have their old modes)."""
    before = tighten_home(Path(home))
    if before is not None:
        log.warning(
            "the workspace %s was open to other users (mode %o); it is now %o (owner only)",
            home,
            before,
            DIR_MODE,
        )


def vectors_made_with(model_id: str, context_words: int) -> str:
    """What the index's vectors depend on: the model, and the words of context per turn.

    Written to :data:`MODEL_MARKER`; opening a workspace whose marker differs embeds
    every memory again. Without context it is the model id alone, as it always was.
    """
    return model_id if context_words <= 0 else f"{model_id} +exchange {context_words} words"


def build_llm(
    settings: Settings, *, minion: bool = False, clock: Clock | None = None
) -> LLM | None:
    """The configured chat model (``minion``: the background model, L9), or ``None``
    when no endpoint or model is set — everything that needs one then degrades (L8).

    Every call is booked in the workspace's usage ledger and kept within the daily
    budget (:mod:`kronika.providers.ledger`)."""
    model = (settings.minion_model or settings.llm_model) if minion else settings.llm_model
    if not settings.llm_base_url or not model:
        return None
    from kronika.providers.llm import LLMConfig, OpenAICompatibleLLM  # the HTTP client: only here

    config = LLMConfig(
        base_url=settings.llm_base_url,
        model=model,
        api_key=settings.llm_api_key or None,
        timeout=settings.llm_timeout,
        retries=settings.llm_retries,
        json_mode=settings.llm_json_mode,
    )
    from kronika.core.usage import Budget
    from kronika.providers.ledger import LedgeredLLM
    from kronika.stores.usage import JsonlUsageLedger

    return LedgeredLLM(
        OpenAICompatibleLLM(config),
        JsonlUsageLedger(Path(settings.home) / USAGE_FILE),
        clock or SystemClock(),
        budget=Budget(calls=settings.llm_daily_calls, tokens=settings.llm_daily_tokens),
        tokens=TiktokenCounter(settings.token_encoding),
    )


def read_usage(settings: Settings, since: datetime | None = None) -> list[UsageEntry]:
    """The model calls booked in the workspace's usage ledger (:data:`USAGE_FILE`), oldest
    first, from ``since`` on when given: each call's purpose, agent, model, tokens in and
    out, seconds and outcome, as ``kronika usage`` sums them up."""
    from kronika.stores.usage import JsonlUsageLedger

    return JsonlUsageLedger(Path(settings.home) / USAGE_FILE).read(since=since)


def build_reranker(settings: RerankerGroup) -> Reranker | None:
    """The configured reranking service, or ``None`` when no URL is set (recall then
    orders by its own scores alone)."""
    if not settings.reranker_base_url:
        return None
    from kronika.providers.rerankers import HttpReranker, RerankerConfig

    config = RerankerConfig(
        base_url=settings.reranker_base_url,
        model=settings.reranker_model,
        api=settings.reranker_api,
        api_key=settings.reranker_api_key or None,
        timeout=settings.reranker_timeout,
        retries=settings.reranker_retries,
    )
    return HttpReranker(config)
