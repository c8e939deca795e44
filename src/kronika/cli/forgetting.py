"""``kronika forget`` (:meth:`kronika.Memory.forget`) and its output: what was forgotten
and the receipt of every place touched."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from kronika import errors
from kronika.cli import render
from kronika.cli.commands import Commands
from kronika.cli.opening import open_memory

if TYPE_CHECKING:
    from kronika.engine.forgetting import ForgetReceipt
    from kronika.settings import Settings


def cmd_forget(args: argparse.Namespace, settings: Settings) -> int:
    with open_memory(settings) as memory:
        receipt = memory.forget(
            args.id,
            key=args.key,
            value=args.value,
            topic=args.topic,
            agent=args.agent,
            dry_run=args.dry_run,
        )
    if args.dry_run and not receipt.items and not receipt.places:
        raise errors.NotFound("nothing matches: nothing would be forgotten")
    if args.json:
        from kronika import wire

        render.print_json(wire.forget_receipt(receipt))
    else:
        print_receipt(receipt)
    return 0


def register(cli: Commands) -> None:
    p = cli.add("forget", cmd_forget)
    p.add_argument("id", nargs="?", help="item id (see `kronika list` / `recall --json`)")
    p.add_argument("--key", help="forget this fact key, its history included")
    p.add_argument("--value", help="forget only this value (of --key, or of any key)")
    p.add_argument("--topic", help="forget what these words name, as said in a conversation")
    p.add_argument("--dry-run", action="store_true", help="change nothing: say what would go")


def print_receipt(receipt: ForgetReceipt) -> None:
    """The forgotten items, then a table of the places touched, for people."""
    from rich.table import Table
    from rich.text import Text

    verb = "forgotten" if receipt.applied else "would forget"
    for item in receipt.items:
        render.out.print(f"{verb}: {item.content}  [{item.id}]", markup=False)
    preview = receipt.outcome == "preview"
    if preview:
        render.out.print("--dry-run: nothing was forgotten", markup=False)
    elif not receipt.applied:
        render.out.print(
            f"proposed as {receipt.proposal}: nothing is forgotten until it is approved "
            "(`kronika proposals`)",
            markup=False,
        )
    title = "forgetting would touch" if preview else "approving it would touch"
    table = Table(title="receipt" if receipt.applied else title)
    table.title_justify = "left"
    table.add_column("place", overflow="fold")
    table.add_column("action")
    table.add_column("count", justify="right")
    table.add_column("lines", justify="right")
    for place in receipt.places:
        lines = str(place.lines) if place.lines else ""
        table.add_row(Text(place.path), place.action, str(place.count), lines)
    if receipt.applied:
        table.add_row("index rows", "removed", str(receipt.index_removed), "")
        table.add_row("index rows", "rewritten", str(receipt.index_rewritten), "")
    render.out.print(table)
