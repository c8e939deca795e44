"""Building the server from settings and running it (``kronika serve``, ``kronika mcp``)."""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import socket
from pathlib import Path

from kronika.app import build_llm, build_memory, team_memories, tenant_memory
from kronika.errors import ConfigError
from kronika.memory import Memory
from kronika.ports import LLM
from kronika.server.access import Caller
from kronika.server.keys import ApiKey, KeyStore, Role, keys_path
from kronika.server.service import Service
from kronika.server.tenants import TenantMemories
from kronika.settings import CONFIG_FILE, Settings

EXTRAS = {
    "server": ("fastapi", "uvicorn"),
    "mcp": ("mcp",),
}


def require_extra(extra: str, what: str) -> None:
    """:class:`ConfigError` naming the pip command when ``extra`` is not installed."""
    missing = [name for name in EXTRAS[extra] if importlib.util.find_spec(name) is None]
    if missing:
        raise ConfigError(
            f"{what} needs the [{extra}] extra ({', '.join(missing)} missing):"
            f" pip install 'kronika[{extra}]'"
        )


def _minion(settings: Settings) -> LLM | None:
    return build_llm(settings, minion=True)


def one_blas_thread() -> None:
    """Vector search on one BLAS thread: a server's concurrency comes from its requests,
    and on a busy machine a second BLAS thread made a matrix-vector product tens of
    times slower, not faster (it waits for a core). Call after numpy is loaded."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")


def build_service(settings: Settings) -> Service:
    """The workspace's memory, served for every tenant its agents belong to (the
    ``tenant`` setting and each ``[agents.<name>] tenant``); distillation uses the
    configured background model (none: jobs report what waits for one). In team mode
    the tenant of every API key is served too, from the same database, including a
    tenant whose first key is made while the server runs (:mod:`.tenants`). The storage
    policies follow ``kronika.toml`` while the server runs (:class:`Service`)."""
    config = Path(settings.home) / CONFIG_FILE
    if settings.database_url:
        tenants = {key.tenant for key in open_keys(settings).list() if key.active}
        memories = team_memories(settings, tenants)
        embedder = next(iter(memories.values())).embedder

        def newly_keyed(tenant: str) -> Memory | None:
            """A tenant given a key since the server started (None: no active key)."""
            with contextlib.closing(open_keys(settings)) as keys:
                if not any(k.tenant == tenant and k.active for k in keys.list()):
                    return None
            return tenant_memory(settings, tenant, embedder=embedder)

        return Service(TenantMemories(memories, newly_keyed), llm=_minion, follow_config=config)
    memory = build_memory(settings)
    tenants = {settings.tenant, *settings.tenants().values()}
    return Service(dict.fromkeys(sorted(tenants), memory), llm=_minion, follow_config=config)


class NoQueryStrings(logging.Filter):
    """The access log without query strings: a secret sent in one (``?api_key=…``,
    which kronika refuses) never reaches the log. Paths are logged as they are."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str):
            record.args = (*args[:2], args[2].split("?", 1)[0], *args[3:])
        return True


def open_keys(settings: Settings) -> KeyStore:
    """The API keys; keys kronika recorded that the file lacks (gone, emptied) are
    logged, naming the file: every request made with them gets 401."""
    from kronika.engine.doctor_held import keys_lost

    keys = KeyStore(keys_path(Path(settings.home)))
    lost = keys_lost(Path(settings.home))
    if lost is not None:
        logging.getLogger("kronika.server").warning("%s", lost)
    return keys


def serve(
    settings: Settings,
    *,
    host: str,
    port: int,
    max_body_bytes: int,
    rate: float,
    burst: int,
    cors_origins: tuple[str, ...],
    log_level: str = "info",
    workers: int = 1,
) -> None:
    """Run the HTTP server until interrupted: one process, or ``workers`` processes
    sharing the address (:mod:`kronika.server.workers`)."""
    require_extra("server", "kronika serve")
    import uvicorn

    from kronika.server.app import ServerConfig, create_app

    with_mcp = importlib.util.find_spec("mcp") is not None
    config = ServerConfig(
        max_body_bytes=max_body_bytes,
        rate_per_second=rate,
        burst=burst,
        cors_origins=cors_origins,
        mcp=with_mcp,
        host=host,
    )

    def run(sockets: list[socket.socket] | None) -> None:
        service = build_service(settings)
        one_blas_thread()
        keys = open_keys(settings)
        app = create_app(service, keys, config)
        # asyncio's own loop even where uvloop is installed: under 64 clients uvloop
        # answered some requests after 30-40 s while the median waited 2 s (asyncio:
        # 7 s at most, 6.6 s median, on the same loaded machine)
        server = uvicorn.Server(
            uvicorn.Config(
                app, host=host, port=port, log_level=log_level, lifespan="on", loop="asyncio"
            )
        )
        access = logging.getLogger("uvicorn.access")  # configured by uvicorn.Config
        if not any(isinstance(f, NoQueryStrings) for f in access.filters):
            access.addFilter(NoQueryStrings())
        try:
            server.run(sockets=sockets)
        finally:
            keys.close()
            service.close()

    if workers <= 1:
        run(None)
        return
    from kronika.server.workers import bind, supervise

    try:
        sock = bind(host, port)
    except OSError as exc:
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    supervise(workers, sock, lambda own: run([own]))


def run_stdio(settings: Settings, agent: str | None) -> None:
    """``kronika mcp``: the MCP server on stdin/stdout, acting as ``agent`` (the
    workspace's default agent when None): its autonomy applies to what it writes."""
    require_extra("mcp", "kronika mcp")
    from kronika.server.mcp import build_mcp

    name = agent or settings.default_agent
    service = build_service(settings)
    memory = service.memories[settings.tenant]
    memory.workspace.require_agent(name)
    caller = Caller(ApiKey(id="stdio", tenant=settings.tenant, role=Role.AGENT, agent=name))
    try:
        build_mcp(service, caller=caller).run("stdio")
    finally:
        service.close()
