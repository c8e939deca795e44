"""``kronika show``, ``list``, ``get`` and ``history``: what memory holds, read as
it is (no search)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from kronika import errors
from kronika.cli import render
from kronika.cli.commands import Commands
from kronika.cli.context import SCOPES, add_reading_context, reading
from kronika.cli.opening import open_memory

if TYPE_CHECKING:
    from kronika.settings import Settings


def cmd_show(args: argparse.Namespace, settings: Settings) -> int:
    from kronika import wire

    with open_memory(settings) as opened:
        memory = reading(opened, args)
        what = args.what
        scopes = args.scope or ()
        if what == "brain":
            text = memory.brain(agent=args.agent, scopes=scopes)
        elif what == "identity":
            text = memory.identity(agent=args.agent)
        elif what == "context":
            text = memory.active_context(agent=args.agent)
        elif what == "prompt":
            text = memory.format_for_prompt(agent=args.agent, query=args.query, scopes=scopes)
        else:  # archive
            listed = memory.facts(agent=args.agent, scopes=scopes)
            facts = [f for f in listed if f.status.value == "archived"]
            if args.json:
                render.print_json(wire.items(facts))
            else:
                render.out.print(render.items_table(facts, "brain archive"))
            return 0
    if args.json:
        render.print_json({"what": what, "text": text})
    else:
        render.out.print(text or f"({what} is empty)", markup=False)
    return 0


def cmd_list(args: argparse.Namespace, settings: Settings) -> int:
    from kronika import wire

    with open_memory(settings) as opened:
        memory = reading(opened, args)
        items = memory.items(
            agent=args.agent,
            types=args.type or (),
            include_superseded=args.include_superseded,
            limit=args.limit,
            offset=args.offset,
            scopes=args.scope or (),
        )
        total = memory.count(agent=args.agent)
    if args.json:
        render.print_json(wire.items(items))
    else:
        render.out.print(render.items_table(items, f"{len(items)} of {total} items"))
    return 0


def cmd_get(args: argparse.Namespace, settings: Settings) -> int:
    from kronika import wire

    with open_memory(settings) as memory:
        item = reading(memory, args).get(args.id, agent=args.agent)
    data = wire.item(item)
    if args.json:
        render.print_json(data)
    else:
        render.out.print(render.kv_table(data, item.id))
    return 0


def cmd_history(args: argparse.Namespace, settings: Settings) -> int:
    from kronika import wire

    with open_memory(settings) as memory:
        values = reading(memory, args).history(args.key, agent=args.agent)
    if not values:
        raise errors.NotFound(f"no fact with key {args.key!r} (see `kronika list --type fact`)")
    if args.json:
        render.print_json(wire.items(values))
        return 0
    for item in values:
        start = item.valid_from.isoformat() if item.valid_from else "?"
        end = item.valid_to.isoformat() if item.valid_to else "now"
        render.out.print(f"{start} → {end}  {item.value}  [{item.status.value}]", markup=False)
    return 0


def register(cli: Commands) -> None:
    p = cli.add("show", cmd_show)
    p.add_argument("what", choices=("brain", "identity", "context", "archive", "prompt"))
    p.add_argument("--query", help="with `show prompt`: add the LONG_TERM_MEMORY block")
    p.add_argument("--scope", action="append", choices=SCOPES, help="only these scopes' facts")
    add_reading_context(p)

    p = cli.add("list", cmd_list)
    p.add_argument("--type", action="append")
    p.add_argument("--limit", type=int, default=50)
    p.add_argument("--offset", type=int, default=0)
    p.add_argument("--include-superseded", action="store_true")
    p.add_argument("--scope", action="append", choices=SCOPES, help="memory scope (repeatable)")
    add_reading_context(p)

    p = cli.add("get", cmd_get)
    p.add_argument("id")
    add_reading_context(p)

    p = cli.add("history", cmd_history)
    p.add_argument("key")
    add_reading_context(p)
