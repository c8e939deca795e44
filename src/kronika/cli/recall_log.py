"""``kronika logs recalls``: the recall log of an agent, as a table or exported as JSON.

It reads as the reading context the options name (:mod:`kronika.cli.context`): without
one, as the workspace's owner, every recall whole; with one, that reader's own recalls
whole and another reader's only by the items it may see (:mod:`kronika.core.recall_log`).
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from kronika.cli import render
from kronika.cli.commands import Commands
from kronika.cli.context import add_reading_context, reading
from kronika.cli.numbers import count_in

if TYPE_CHECKING:
    from kronika.settings import Settings


def cmd_recalls(args: argparse.Namespace, settings: Settings) -> int:
    from rich.table import Table
    from rich.text import Text

    from kronika.cli.opening import open_memory
    from kronika.workflows.charts import recall_entries

    agent = args.agent or settings.default_agent
    with open_memory(settings) as memory:
        since = None
        if args.days is not None:
            today = memory.clock.now().astimezone(UTC).date() - timedelta(days=args.days - 1)
            since = datetime.combine(today, datetime.min.time(), tzinfo=UTC)
        entries = recall_entries(reading(memory, args), agent, since)
    if args.json:
        render.print_json({"agent": agent, "recalls": [e.as_dict() for e in entries]})
        return 0
    table = Table(title=f"recall log of {agent}", title_justify="left")
    for column in ("at", "user", "channel", "hits", "items", "query"):
        table.add_column(column)
    for e in entries:
        table.add_row(
            e.at.isoformat(timespec="seconds"),
            Text(e.user or ""),
            Text(e.channel or ""),
            str(e.hits),
            Text(", ".join(e.item_ids)),
            Text(e.query or ""),
        )
    render.out.print(table)
    return 0


def register(cli: Commands) -> None:
    p = cli.add("recalls", cmd_recalls)
    p.add_argument(
        "--days",
        type=count_in(1, 3660),
        default=None,
        help="only the last N days, today included (default: the whole log)",
    )
    add_reading_context(p)
