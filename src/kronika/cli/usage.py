"""``kronika logs usage``: what the language model cost, per day, agent, purpose and model."""

from __future__ import annotations

import argparse
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from kronika.cli import render
from kronika.cli.commands import Commands
from kronika.cli.context import add_reading_context
from kronika.cli.numbers import count_in
from kronika.errors import WorkspaceNotFound

if TYPE_CHECKING:
    from kronika.core.usage import UsageEntry
    from kronika.settings import Settings


def cmd_usage(args: argparse.Namespace, settings: Settings) -> int:
    from rich.table import Table

    from kronika.app import USAGE_FILE
    from kronika.core.usage import Budget, spent, totals
    from kronika.providers.clock import SystemClock
    from kronika.stores.markdown.workspace import MarkdownWorkspace
    from kronika.stores.usage import JsonlUsageLedger

    if not MarkdownWorkspace(settings.home).exists():
        raise WorkspaceNotFound(
            f"no kronika workspace at {settings.home} (run `kronika init` or set KRONIKA_HOME)"
        )
    now = SystemClock().now()
    first_day = (now - timedelta(days=args.days - 1)).replace(
        hour=0, minute=0, second=0, microsecond=0
    )
    entries = JsonlUsageLedger(Path(settings.home) / USAGE_FILE).read(since=first_day)
    if args.agent:
        entries = [e for e in entries if e.agent == args.agent]
    if any(getattr(args, name, None) for name in ("tenant", "user", "channel", "team")):
        entries = _readers_agents(entries, args, settings)
    rows = totals(
        entries, price_input=settings.llm_price_input, price_output=settings.llm_price_output
    )
    budget = Budget(calls=settings.llm_daily_calls, tokens=settings.llm_daily_tokens)
    today = []
    for agent in sorted({e.agent for e in entries if e.at.date() == now.date()}):
        calls, tokens = spent(entries, agent, now.date())
        waited = sum(
            1
            for e in entries
            if e.agent == agent and e.at.date() == now.date() and e.outcome == "over budget"
        )
        today.append(
            {
                "agent": agent,
                "calls": calls,
                "calls_limit": budget.calls or None,
                "tokens": tokens,
                "tokens_limit": budget.tokens or None,
                "refused": waited,
            }
        )
    if args.json:
        render.print_json(
            {
                "days": args.days,
                "rows": [
                    {
                        "day": r.day.isoformat(),
                        "agent": r.agent,
                        "purpose": r.purpose,
                        "model": r.model,
                        "calls": r.calls,
                        "failed": r.failed,
                        "tokens_in": r.tokens_in,
                        "tokens_out": r.tokens_out,
                        "seconds": round(r.seconds, 3),
                        "cost": round(r.cost, 6),
                    }
                    for r in rows
                ],
                "today": today,
            }
        )
        return 0
    if not rows:
        render.out.print(f"no model calls in the last {args.days} day(s)")
    else:
        table = Table(title=f"model usage, last {args.days} day(s)", title_justify="left")
        numbers = ("calls", "failed", "tokens in", "tokens out", "mean s", "cost")
        for column in ("day", "agent", "purpose", "model", *numbers):
            table.add_column(column, justify="right" if column in numbers else "left")
        for r in rows:
            table.add_row(
                r.day.isoformat(),
                r.agent,
                r.purpose,
                r.model,
                str(r.calls),
                str(r.failed),
                f"{r.tokens_in:,}",
                f"{r.tokens_out:,}",
                f"{r.seconds / r.calls:.2f}",
                f"{r.cost:.4f}",
            )
        render.out.print(table)
    for t in today:
        limit = "" if t["calls_limit"] is None else f" of {t['calls_limit']}"
        tlimit = "" if t["tokens_limit"] is None else f" of {t['tokens_limit']:,}"
        waits = f"; {t['refused']} call(s) waited for tomorrow" if t["refused"] else ""
        render.out.print(
            f"today, {t['agent']}: {t['calls']}{limit} calls, {t['tokens']:,}{tlimit} tokens{waits}"
        )
    return 0


def _readers_agents(
    entries: list[UsageEntry], args: argparse.Namespace, settings: Settings
) -> list[UsageEntry]:
    """The entries of the agents the reading context reads (its tenant's)."""
    from kronika.cli.context import reading_context
    from kronika.cli.opening import open_memory

    with open_memory(settings) as memory:
        context = reading_context(memory, args)
        names = set(memory.agents() if context is None else context.agents(memory))
    return [e for e in entries if e.agent in names]


def register(cli: Commands) -> None:
    p = cli.add("usage", cmd_usage)
    p.add_argument(
        "--days",
        type=count_in(1, 3660),
        default=7,
        help="how many days back, today included (default 7)",
    )
    add_reading_context(p)
