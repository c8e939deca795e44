"""``kronika explain ID|KEY``: why an item exists (:mod:`kronika.engine.explain`)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kronika.cli import render
from kronika.cli.context import add_reading_context, reading

if TYPE_CHECKING:
    from kronika.engine.explain import Explanation
    from kronika.settings import Settings


def explanation_json(found: Explanation) -> dict[str, Any]:
    item, origin = found.item, found.origin
    return {
        "item": {
            "id": item.id,
            "agent": item.agent,
            "content": item.content,
            "type": item.type.value,
            "key": item.key,
            "value": item.value,
            "status": item.status.value,
            "source": item.source.value,
            "created_at": item.created_at.isoformat(),
            "valid_from": item.valid_from.isoformat() if item.valid_from else None,
            "valid_to": item.valid_to.isoformat() if item.valid_to else None,
            "citation": item.provenance.citation(),
        },
        "origin": {
            "how": origin.how,
            "by": origin.by,
            "session_id": origin.session_id,
            "turn_ids": list(origin.turn_ids),
            "turns": list(origin.turns),
            "model": origin.model,
        },
        "events": [
            {
                "at": e.at.isoformat(),
                "action": e.action,
                "by": e.source_agent,
                "outcome": e.outcome,
                "item": e.item_id,
                "summary": e.summary,
            }
            for e in found.events
        ],
        "lineage": [
            {
                "id": it.id,
                "value": it.value or it.content,
                "status": it.status.value,
                "valid_from": it.valid_from.isoformat() if it.valid_from else None,
                "valid_to": it.valid_to.isoformat() if it.valid_to else None,
            }
            for it in found.lineage
        ],
    }


def cmd_explain(args: argparse.Namespace, settings: Settings) -> int:
    from rich.table import Table

    from kronika.cli.main import open_memory
    from kronika.engine.explain import explain, when

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


def register_explain_command(add: Callable[..., Any]) -> None:
    p = add("explain", cmd_explain, "tell why an item exists: its origin, events and history")
    p.add_argument("target", help="an item id, or a fact key (its current value)")
    add_reading_context(p)
