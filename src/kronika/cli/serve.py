"""``kronika serve``, ``kronika mcp`` and ``kronika keys create|list|revoke``."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from kronika.cli import render
from kronika.cli.commands import Commands
from kronika.errors import InvalidInput

if TYPE_CHECKING:
    from kronika.settings import Settings


def cmd_serve(args: argparse.Namespace, settings: Settings) -> int:
    from kronika.server.run import serve
    from kronika.server.workers import MAX_WORKERS

    if not 0 < args.port < 65536:
        raise InvalidInput(f"--port must be 1..65535, not {args.port}")
    if not 1 <= args.workers <= MAX_WORKERS:
        raise InvalidInput(f"--workers must be 1..{MAX_WORKERS}, not {args.workers}")
    if args.max_body < 1024 or args.rate < 0 or args.burst < 1:
        raise InvalidInput("--max-body must be at least 1024, --rate 0 or more, --burst 1 or more")
    serve(
        settings,
        host=args.host,
        port=args.port,
        max_body_bytes=args.max_body,
        rate=args.rate,
        burst=args.burst,
        cors_origins=tuple(args.cors_origin or ()),
        log_level="debug" if args.verbose else "info",
        workers=args.workers,
    )
    return 0


def cmd_mcp(args: argparse.Namespace, settings: Settings) -> int:
    from kronika.server.run import run_stdio

    run_stdio(settings, args.agent)
    return 0


def cmd_keys(args: argparse.Namespace, settings: Settings) -> int:
    from rich.table import Table

    from kronika.server.run import open_keys

    store = open_keys(settings)
    if args.verb == "create":
        if args.tenant is None:
            raise InvalidInput("keys create needs --tenant (this workspace's is "
                               f"{settings.tenant!r})")  # fmt: skip
        _check_key_target(settings, args.tenant, args.agent)
        made = store.create(
            args.tenant,
            role=args.role,
            agent=args.agent,
            label=args.label or "",
            user=args.user,
            channels=tuple(args.channel or ()),
            teams=None if args.team is None else tuple(args.team),
        )
        key = made.key
        if args.json:
            render.print_json({**_key_json(key), "token": made.token})
            return 0
        render.out.print(made.token, markup=False, soft_wrap=True)
        render.err.print(
            f"API key {key.id} ({key.role.value}, tenant {key.tenant}"
            + (f", agent {key.agent}" if key.agent else "")
            + (f", bound to user {key.user}" if key.user else ", unbound: trusted integration")
            + (f" in {', '.join(key.channels)}" if key.channels else "")
            + "): shown once, stored hashed. Revoke it with `kronika keys revoke "
            + f"{key.id}`.",
            markup=False,
        )
        if key.tenant not in _served_tenants(settings):
            render.err.print(
                f"note: `kronika serve` serves tenant {key.tenant!r} from the database once it"
                " (re)starts",
                markup=False,
            )
        return 0
    if args.verb == "revoke":
        if not args.id:
            raise InvalidInput("keys revoke needs the key's id (see `kronika keys list`)")
        key = store.revoke(args.id)
        if args.json:
            render.print_json(_key_json(key))
        else:
            render.out.print(f"revoked {key.id}", markup=False)
        return 0
    keys = store.list()
    if args.json:
        render.print_json({"keys": [_key_json(k) for k in keys]})
        return 0
    table = Table(title="API keys", title_justify="left")
    for column in ("id", "tenant", "role", "agent", "user", "label", "created", "revoked"):
        table.add_column(column)
    for k in keys:
        bound = (k.user or "") + (f" ({', '.join(k.channels)})" if k.channels else "")
        table.add_row(
            k.id,
            k.tenant,
            k.role.value,
            k.agent or "",
            bound,
            k.label,
            k.created_at,
            k.revoked_at or "",
        )
    render.out.print(table if keys else "no API keys yet (`kronika keys create --tenant …`)")
    return 0


def _served_tenants(settings: Settings) -> set[str]:
    """The tenants the workspace's own agents belong to."""
    return {settings.tenant, *settings.tenants().values()}


def _check_key_target(settings: Settings, tenant: str, agent: str | None) -> None:
    """:class:`InvalidInput` for a key no server of this workspace could use: a tenant
    the workspace does not serve (a new tenant needs a database:
    ``KRONIKA_DATABASE_URL``), an agent that does not exist, or one of another tenant."""
    from pathlib import Path

    from kronika.stores.markdown.layout import validate_agent_name

    served = _served_tenants(settings)
    if tenant not in served and not settings.database_url:
        names = ", ".join(sorted(served))
        raise InvalidInput(
            f"this workspace serves tenant(s) {names}, not {tenant!r}: a key of {tenant!r}"
            " would see nothing (declare an agent of it with [agents.<name>] tenant ="
            f' "{tenant}" in kronika.toml, or serve many tenants from a database)'
        )
    if agent is None or tenant not in served:
        return
    owner = settings.tenants().get(agent, settings.tenant)
    folder = Path(settings.home) / "agents" / validate_agent_name(agent)
    if not folder.is_dir() and not settings.database_url:  # a database's may be elsewhere
        raise InvalidInput(f"no agent {agent!r} in this workspace (see `kronika agents`)")
    if owner != tenant:
        raise InvalidInput(f"agent {agent!r} belongs to tenant {owner!r}, not {tenant!r}")


def _key_json(key: Any) -> dict[str, Any]:
    return {
        "id": key.id,
        "tenant": key.tenant,
        "role": key.role.value,
        "agent": key.agent,
        "label": key.label,
        "user": key.user,
        "channels": list(key.channels),
        "teams": None if key.teams is None else list(key.teams),
        "created_at": key.created_at,
        "revoked_at": key.revoked_at,
    }


def register(cli: Commands) -> None:
    p = cli.add("serve", cmd_serve)
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default loopback)")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument(
        "--max-body", type=int, default=4 * 1024 * 1024, help="largest request body in bytes"
    )
    p.add_argument(
        "--rate", type=float, default=50.0, help="requests a second per API key (0: no limit)"
    )
    p.add_argument("--burst", type=int, default=100, help="requests at once per API key")
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        help="server processes sharing the address (one per core; default 1)",
    )
    p.add_argument(
        "--cors-origin",
        action="append",
        help="an origin browsers may call from (repeatable; none: CORS off)",
    )

    cli.add("mcp", cmd_mcp)


def register_keys(keys: Commands) -> None:
    p = keys.add("create", cmd_keys)
    p.add_argument("--tenant", help="the tenant the key belongs to")
    p.add_argument(
        "--role",
        choices=("admin", "agent", "reader"),
        default="admin",
        help="admin (everything), agent (writes as --agent), reader (reads only)",
    )
    p.add_argument("--label", help="a note to tell keys apart")
    p.add_argument("--user", help="bind the key to this user (it acts as no other)")
    p.add_argument(
        "--channel",
        action="append",
        help="a channel the bound key may act in (repeatable; none: no channel)",
    )
    p.add_argument(
        "--team",
        action="append",
        help="a team of the bound key's user (repeatable; default: from [teams])",
    )
    keys.add("list", cmd_keys)
    p = keys.add("revoke", cmd_keys)
    p.add_argument("id", help="the key's id (or the whole key)")
