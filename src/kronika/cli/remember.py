"""``kronika remember``: a fact in the Brain (:meth:`kronika.Memory.remember`)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from kronika.cli import render
from kronika.cli.commands import Commands
from kronika.cli.context import add_reading_context, reading, write_audience
from kronika.cli.opening import open_memory
from kronika.cli.policies import print_policy_note, print_refusal

if TYPE_CHECKING:
    from kronika.settings import Settings


def cmd_remember(args: argparse.Namespace, settings: Settings) -> int:
    from kronika import wire

    text = " ".join(args.text)
    with open_memory(settings) as memory:
        receipt = reading(memory, args, writes=True).remember(
            text,
            key=args.key,
            agent=args.agent,
            section=args.section,
            multi=args.multi,
            importance=args.importance,
            source="auto" if args.auto else "explicit",
            **write_audience(args),
        )
    if receipt.outcome == "refused":
        return print_refusal(receipt, args.json)
    render.print_write_notes(receipt.notes)
    print_policy_note(receipt)
    change = type(receipt.change).__name__
    verbs = {
        "AddFact": "remembered",
        "SupersedeFact": "updated (the old value is kept as history)",
        "TouchFact": "already known; refreshed",
        "AppendNote": "kept as a mid-term note",
    }
    item = receipt.item
    if args.json:
        render.print_json(wire.write_receipt(receipt))
    elif receipt.outcome == "proposed":
        render.out.print("Proposed; waiting for the user's approval.")
    elif item is not None:
        render.out.print(
            f"{verbs.get(change, 'stored')}: {item.content}  [{item.id}]", markup=False
        )
    return 0


def register(cli: Commands) -> None:
    p = cli.add("remember", cmd_remember)
    p.add_argument("text", nargs="+", help="the fact (or the value of --key)")
    p.add_argument("--key", help="fact key; a new value supersedes the old one")
    p.add_argument("--section", help="Brain section: User, Preferences, Decisions, Current")
    p.add_argument("--multi", action="store_true", help="the key may hold several values")
    p.add_argument("--importance", type=float, help="0..1 (default from settings)")
    p.add_argument("--auto", action="store_true", help="mark as learned automatically")
    add_reading_context(p, writes=True)
