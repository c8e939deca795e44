"""``kronika explain ID|KEY``: why an item exists (:mod:`kronika.workflows.explain`)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from kronika.cli import render
from kronika.cli.commands import Commands
from kronika.cli.context import add_reading_context, reading

if TYPE_CHECKING:
    from kronika.settings import Settings


def cmd_explain(args: argparse.Namespace, settings: Settings) -> int:
    from rich.table import Table

    from kronika.cli.opening import open_memory
    from kronika.workflows.explain import explain, explanation_json, when

    with open_memory(settings) as memory:
        found = explain(reading(memory, args), args.target, agent=args.agent)
    if args.json:
        render.print_json(explanation_json(found))
        return 0
    item, origin = found.item, found.origin
    render.out.print(f"[bold]{item.content}[/bold]  ({item.id}, {item.status.value})")
    render.out.print(f"lives in {item.provenance.citation()} of agent {item.agent}")
    said = {
        "remembered": f"remembered by {origin.by}",
        "extracted": f"taken by the rule extractor ({origin.by})",
        "consolidated": f"extracted by a consolidation ({origin.by}"
        + (f", model {origin.model})" if origin.model else ")"),
        "imported": "imported",
        "hand-written": "written by hand in the Markdown (no write through kronika)",
        "conversation": f"said by {origin.by}",
    }[origin.how]
    if origin.session_id:
        said += f" from session {origin.session_id}"
        if origin.turn_ids:
            said += f" (turns {', '.join(origin.turn_ids)})"
    render.out.print(said)
    for turn in origin.turns:
        render.out.print(f"  > {turn}")
    if found.events:
        table = Table(title="what happened to it", title_justify="left")
        for column in ("at", "action", "by", "outcome", "summary"):
            table.add_column(column, overflow="fold")
        for e in found.events:
            table.add_row(
                e.at.isoformat(timespec="seconds"), e.action, e.source_agent, e.outcome, e.summary
            )
        render.out.print(table)
    if len(found.lineage) > 1:
        table = Table(title=f"values of {item.key}", title_justify="left")
        for column in ("value", "status", "from", "to"):
            table.add_column(column, overflow="fold")
        for it in found.lineage:
            table.add_row(
                it.value or it.content, it.status.value, when(it.valid_from), when(it.valid_to)
            )
        render.out.print(table)
    return 0


def register(cli: Commands) -> None:
    p = cli.add("explain", cmd_explain)
    p.add_argument("target", help="an item id, or a fact key (its current value)")
    add_reading_context(p)
