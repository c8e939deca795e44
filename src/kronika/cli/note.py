"""``kronika note``: a typed note in today's daily log (:meth:`kronika.Memory.note`)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from kronika.cli import render
from kronika.cli.commands import Commands
from kronika.cli.context import add_reading_context, reading, write_audience
from kronika.cli.opening import open_memory
from kronika.cli.policies import print_refusal

if TYPE_CHECKING:
    from kronika.settings import Settings


def cmd_note(args: argparse.Namespace, settings: Settings) -> int:
    from kronika import wire

    with open_memory(settings) as memory:
        receipt = reading(memory, args, writes=True).note(
            " ".join(args.text),
            agent=args.agent,
            kind=args.kind,
            confidence=args.confidence,
            **write_audience(args),
        )
    if receipt.outcome == "refused":
        return print_refusal(receipt, args.json)
    render.print_write_notes(receipt.notes)
    item = receipt.item
    if args.json:
        render.print_json(wire.write_receipt(receipt))
    elif item is not None:
        render.out.print(f"noted in {item.provenance.citation()}  [{item.id}]", markup=False)
    return 0


def register(cli: Commands) -> None:
    p = cli.add("note", cmd_note)
    p.add_argument("text", nargs="+")
    p.add_argument(
        "--kind",
        choices=("W", "B", "O", "S"),
        help="W world, B experience (first person), O opinion, S observation",
    )
    p.add_argument("--confidence", type=float, help="an opinion's confidence, 0 to 1")
    add_reading_context(p, writes=True)
