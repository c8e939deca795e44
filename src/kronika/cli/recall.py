"""``kronika recall``: the memories that best match a query (:meth:`kronika.Memory.recall`)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from kronika import errors
from kronika.cli import render
from kronika.cli.commands import Commands
from kronika.cli.context import add_reading_context, reading
from kronika.cli.legacy import RenamedOption
from kronika.cli.opening import open_memory

if TYPE_CHECKING:
    from kronika.core.model import RecallResult
    from kronika.core.query import RecallQuery
    from kronika.memory import Memory
    from kronika.settings import Settings


def cmd_recall(args: argparse.Namespace, settings: Settings) -> int:
    from rich.markup import escape

    from kronika.core import checks

    query = " ".join(args.query)
    if not query.strip():
        raise errors.InvalidQuery("the query is empty: say what to look for")
    # named as the option is (Memory.recall names its own parameter `k`)
    checks.optional_count(
        args.limit, what="the limit", low=1, high=checks.MAX_K, error=errors.InvalidQuery
    )
    asked = recall_query(query, args)
    with open_memory(settings) as memory:
        result = reading(memory, args).recall(asked)
        evidence = hit_links(reading(memory, args), result) if args.json else {}
    if args.json:
        document = render.recall_json(result)
        for hit in document["hits"]:
            hit["links"] = evidence.get(hit["id"], [])
        render.print_json(document)
        return 0
    for note in result.notes:
        render.err.print(f"[yellow]note:[/yellow] {escape(note)}")
    if not result.hits:
        render.out.print("nothing recalled")
    else:
        render.out.print(render.recall_table(result, explain=args.explain))
        if args.explain:
            from kronika.settings import answer_floor, relevance_floor

            render.out.print(
                f"[dim]score = rel x ({settings.alpha:g} + {settings.beta:g} x imp + "
                f"{settings.gamma:g} x rec) / {settings.alpha + settings.beta + settings.gamma:g};"
                f" relevance floor {relevance_floor(settings):g},"
                f" answer floor {answer_floor(settings):g} (docs/scoring.md)[/dim]"
            )
        note = f"{len(result.hits)} of {result.candidates} candidates, {result.total_tokens} tokens"
        if result.dropped_for_budget:
            note += f"; {result.dropped_for_budget} left out to fit --budget {args.budget}"
        render.out.print(f"[dim]{note}[/dim]")
    return 0


def recall_query(query: str, args: argparse.Namespace) -> RecallQuery:
    """The recall the command line asks (``--channel`` names the reader's channel,
    :mod:`kronika.cli.context`, so the query's ``channel`` filter stays unset)."""
    from kronika.core.query import RecallQuery

    return RecallQuery(
        query,
        agent=args.agent,
        all_agents=args.all_agents,
        k=args.limit,
        mode=args.mode,
        since=args.since,
        until=args.until,
        as_of=args.as_of,
        types=args.type or (),
        keys=args.key or (),
        entities=args.entity or (),
        speakers=args.speaker or (),
        scopes=args.scope or (),
        include_superseded=args.include_superseded,
        budget_tokens=args.budget,
        record_access=not args.no_record,
    )


OPTIONS = {
    "query": "query",
    "agent": "--agent",
    "all_agents": "--all-agents",
    "k": "--limit",
    "mode": "--mode",
    "since": "--since",
    "until": "--until",
    "as_of": "--as-of",
    "types": "--type",
    "keys": "--key",
    "entities": "--entity",
    "speakers": "--speaker",
    "scopes": "--scope",
    "include_superseded": "--include-superseded",
    "budget_tokens": "--budget",
    "record_access": "--no-record",
}
"""Each option of :class:`~kronika.core.query.RecallQuery` and the command line's
spelling of it; ``channel`` is left out (``--channel`` is the reader's channel)."""


def hit_links(memory: Memory, result: RecallResult) -> dict[str, list[dict[str, str]]]:
    """Each hit's links (evidence, reflections, strategies, related items) as
    ``{"from", "to", "kind"}``, for ``recall --json``."""
    wanted = {hit.item.id for hit in result.hits}
    found: dict[str, list[dict[str, str]]] = {}
    for agent in sorted({hit.item.agent for hit in result.hits}):
        for link in memory.links(agent=agent):
            row = {"from": link.from_id, "to": link.to_id, "kind": link.kind.value}
            for end in {link.from_id, link.to_id} & wanted:
                found.setdefault(end, []).append(row)
    return found


def register(cli: Commands) -> None:
    p = cli.add("recall", cmd_recall)
    p.add_argument("query", nargs="+")
    p.add_argument("--limit", type=int, default=None, help="how many results (default 10)")
    p.add_argument("--k", dest="limit", type=int, action=RenamedOption, new="--limit")
    p.add_argument("--mode", choices=("hybrid", "lexical", "vector"), default="hybrid")
    p.add_argument("--since", help="30d, 2w, 2025-11-01, yesterday, last week…")
    p.add_argument("--until", help="same forms as --since (a date means its end)")
    p.add_argument("--as-of", help="only what was true at that time (fact history)")
    p.add_argument("--type", action="append", help="item type (repeatable)")
    p.add_argument("--key", action="append", help="fact key (repeatable)")
    p.add_argument("--entity", action="append", help="mentioned entity (repeatable)")
    p.add_argument("--speaker", action="append", help="conversation speaker (repeatable)")
    p.add_argument(
        "--scope",
        action="append",
        choices=("personal", "channel", "team", "global"),
        help="memory scope (repeatable)",
    )
    p.add_argument("--budget", type=int, help="pack results into this many tokens")
    p.add_argument("--all-agents", action="store_true", help="search every agent's memory")
    p.add_argument("--include-superseded", action="store_true", help="include old fact values")
    p.add_argument("--explain", action="store_true", help="show the parts of each score")
    p.add_argument("--no-record", action="store_true", help="do not record this access")
    add_reading_context(p)
