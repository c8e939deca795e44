"""``kronika logs audit``: the audit trail of writes (``audit.jsonl``)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from kronika.cli import render
from kronika.cli.commands import Commands
from kronika.cli.context import add_reading_context, reading_context
from kronika.cli.opening import open_memory

if TYPE_CHECKING:
    from kronika.settings import Settings


def cmd_audit(args: argparse.Namespace, settings: Settings) -> int:
    from rich.table import Table

    from kronika import wire

    with open_memory(settings) as memory:
        context = reading_context(memory, args)
        if context is None:
            entries = memory.audit(agent=args.agent, limit=args.limit)
        else:  # a reader's: entries about its tenant's items it may see
            from kronika.core.checks import MAX_LIMIT, optional_count

            limit = optional_count(args.limit, what="the limit", low=1, high=MAX_LIMIT)
            entries = context.audit(memory, args.agent)[-(limit or 1) :]
    # each entry as REST sends it, with the keys --json printed before (kept for a release)
    rows = [
        {**wire.audit_entry(e), "agent": e.target_agent, "by": e.source_agent, "item": e.item_id}
        for e in entries
    ]
    if args.json:
        render.print_json(rows)
        return 0
    table = Table(title="audit trail", title_justify="left")
    columns = ("at", "action", "agent", "by", "outcome", "summary")
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(
            *(str(row[c] or "") for c in ("at", "action", "agent", "by", "outcome", "summary"))
        )
    render.out.print(table)
    return 0


def register(logs: Commands) -> None:
    p = logs.add("audit", cmd_audit)
    p.add_argument("--limit", type=int, default=50)
    add_reading_context(p)
