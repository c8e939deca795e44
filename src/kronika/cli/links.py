"""``kronika links list|add``: links between items (an event and its
reflection, an error or a reflection and its strategy, two related items)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from kronika.cli import render
from kronika.cli.commands import Commands
from kronika.cli.context import add_reading_context, reading

if TYPE_CHECKING:
    from kronika.core.model import ItemLink
    from kronika.settings import Settings


def link_json(link: ItemLink) -> dict[str, Any]:
    return {
        "from": link.from_id,
        "to": link.to_id,
        "kind": link.kind.value,
        "created_at": link.created_at.isoformat() if link.created_at else None,
    }


def cmd_link(args: argparse.Namespace, settings: Settings) -> int:
    from kronika.app import build_memory
    from kronika.stores.markdown.links import format_link

    with build_memory(settings) as memory:
        made = memory.link(args.from_id, args.to_id, args.kind, agent=args.agent)
    if args.json:
        render.print_json(link_json(made))
    else:
        render.out.print(format_link(made)[2:], markup=False)
    return 0


def cmd_links(args: argparse.Namespace, settings: Settings) -> int:
    from kronika.app import build_memory
    from kronika.stores.markdown.links import format_link

    with build_memory(settings) as memory:
        found = reading(memory, args).links(args.id, agent=args.agent)
    if args.json:
        render.print_json([link_json(link) for link in found])
        return 0
    if not found:
        render.out.print("no links")
    for link in found:
        render.out.print(format_link(link)[2:], markup=False)
    return 0


LINK_KINDS = ("reflection", "strategy", "related")
"""The values of :class:`kronika.core.model.LinkKind` (no model loads for ``--help``)."""


def register(links: Commands) -> None:
    p = links.add("list", cmd_links)
    p.add_argument("id", nargs="?", help="only the links of this item")
    add_reading_context(p)
    p = links.add("add", cmd_link)
    p.add_argument("from_id", metavar="FROM", help="item id the link starts at")
    p.add_argument("to_id", metavar="TO", help="item id the link points to")
    p.add_argument(
        "--kind",
        choices=LINK_KINDS,
        default="related",
        help="reflection: an event and its reflection; strategy: an error or a reflection"
        " and the strategy that answers it; related (default): both ways",
    )
