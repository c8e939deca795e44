"""``kronika proposals list|approve|reject``: changes waiting
for the person's approval (agents at autonomy 1, "suggest")."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from kronika.cli import render
from kronika.cli.commands import Commands
from kronika.cli.context import add_reading_context, reading

if TYPE_CHECKING:
    from kronika.engine.proposals import Proposal
    from kronika.settings import Settings


def proposal_json(proposal: Proposal) -> dict[str, Any]:
    """The proposal as the REST API sends it (:func:`kronika.wire.proposal`), with
    ``when`` and ``change`` (its ``created_at`` and ``summary``), the keys ``--json``
    printed before (kept for scripts for one more release)."""
    from kronika import wire

    return {
        **wire.proposal(proposal),
        "when": proposal.created_at.isoformat(),
        "change": proposal.summary,
    }


def cmd_proposals(args: argparse.Namespace, settings: Settings) -> int:
    from rich.table import Table
    from rich.text import Text

    from kronika.app import build_memory

    with build_memory(settings) as memory:
        rows = [proposal_json(p) for p in reading(memory, args).proposals(args.agent)]
    if args.json:
        render.print_json(rows)
        return 0
    if not rows:
        render.out.print("no proposals waiting")
        return 0
    table = Table(title="proposals waiting for approval", title_justify="left")
    for column in ("id", "agent", "from", "when", "change"):
        table.add_column(column, overflow="fold")
    for row in rows:
        row["when"] = row["when"][:16].replace("T", " ")  # UTC, to the minute
        table.add_row(*(Text(str(row[c])) for c in ("id", "agent", "from", "when", "change")))
    render.out.print(table)
    return 0


def cmd_approve(args: argparse.Namespace, settings: Settings) -> int:
    from kronika import wire
    from kronika.app import build_memory

    with build_memory(settings) as memory:
        receipt = memory.approve(args.id, args.agent)
    item = receipt.item
    if args.json:
        # the receipt as REST sends it, and the proposal's id under the key printed before
        render.print_json({"approved": args.id, **wire.write_receipt(receipt)})
    else:
        shown = f": {item.content}  [{item.id}]" if item is not None else ""
        render.out.print(f"approved {args.id}{shown}", markup=False)
    return 0


def cmd_reject(args: argparse.Namespace, settings: Settings) -> int:
    from kronika.app import build_memory

    with build_memory(settings) as memory:
        proposal = memory.reject(args.id, args.agent)
    if args.json:
        render.print_json({"rejected": proposal_json(proposal)})
    else:
        render.out.print(f"rejected {proposal.id}: {proposal.summary}", markup=False)
    return 0


def register(proposals: Commands) -> None:
    p = proposals.add("list", cmd_proposals)
    add_reading_context(p)
    p = proposals.add("approve", cmd_approve)
    p.add_argument("id", help="proposal id, e.g. p-1a2b3c (see `kronika proposals list`)")
    p = proposals.add("reject", cmd_reject)
    p.add_argument("id", help="proposal id, e.g. p-1a2b3c")
