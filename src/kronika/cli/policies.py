"""``kronika policies list`` (the storage policies in force) and ``policies purge`` (remove what
they no longer allow); also how ``remember`` and ``note`` say a policy refused them."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from kronika.cli import render
from kronika.cli.commands import Commands

if TYPE_CHECKING:
    from rich.table import Table

    from kronika.core.policies import StoragePolicies
    from kronika.engine.purge import PurgeReport
    from kronika.engine.write import WriteReceipt
    from kronika.settings import Settings

REFUSED_EXIT_CODE = 6
"""A write a storage policy refused: the write path refused, as for a missing grant."""


def policies_json(settings: Settings) -> dict[str, Any]:
    from kronika.core.policies import TIER_ORDER
    from kronika.settings import CONFIG_FILE

    policies = settings.storage_policies
    return {
        "config": str(settings.home / CONFIG_FILE),
        "dm_channels": list(policies.dm_channels),
        "retention_days": {tier.value: policies.retention.get(tier) for tier in TIER_ORDER},
        "policies": [rule.as_dict() for rule in policies.rules],
    }


def cmd_policies(args: argparse.Namespace, settings: Settings) -> int:
    from rich.table import Table
    from rich.text import Text

    from kronika.settings import CONFIG_FILE

    if args.json:
        render.print_json(policies_json(settings))
        return 0
    policies = settings.storage_policies
    render.out.print(_retention_table(policies))
    if policies.rules:
        table = Table(title="storage policies (the strictest that applies wins)")
        table.title_justify = "left"
        for column in ("policy", "applies to", "effect"):
            table.add_column(column, overflow="fold")
        for rule in policies.rules:
            table.add_row(Text(rule.name), Text(rule.selection()), Text(rule.effect()))
        render.out.print(table)
    else:
        render.out.print(
            "no [[policy]] rules: every item is stored in the tier it asks for", markup=False
        )
    dms = ", ".join(policies.dm_channels) or "none (dm_channels is empty)"
    render.out.print(f"direct messages: channels named {dms}", markup=False)
    render.out.print(f"configured in {settings.home / CONFIG_FILE}", markup=False)
    return 0


def _retention_table(policies: StoragePolicies) -> Table:
    from rich.markup import escape
    from rich.table import Table

    from kronika.core.policies import TIER_ORDER

    table = Table(title=escape("retention per tier ([retention])"), title_justify="left")
    table.add_column("tier")
    table.add_column("holds")
    table.add_column("kept", justify="right")
    holds = {
        "short": "conversation turns",
        "mid": "notes, summaries",
        "long": "Brain facts and their history",
    }
    for tier in TIER_ORDER:
        days = policies.retention.get(tier)
        table.add_row(tier.value, holds[tier.value], f"{days} days" if days else "for ever")
    return table


def purge_json(report: PurgeReport) -> dict[str, Any]:
    return {
        "dry_run": report.dry_run,
        "checked": report.checked,
        "found": len(report.found),
        "forgotten": report.forgotten,
        "index_removed": report.index_removed,
        "files": report.files,
        "proposals": list(report.proposals),
        "reasons": dict(report.reasons()),
        "items": [
            {
                "id": p.item.id,
                "agent": p.item.agent,
                "type": p.item.type.value,
                "tier": p.item.tier.value,
                "channel": p.item.channel,
                "created_at": p.item.created_at.isoformat(),
                "citation": p.item.provenance.citation(),
                "reason": p.reason,
            }
            for p in report.found
        ],
    }


def cmd_purge(args: argparse.Namespace, settings: Settings) -> int:
    from rich.table import Table
    from rich.text import Text

    from kronika.app import build_memory
    from kronika.settings import CONFIG_FILE

    with (
        build_memory(settings) as memory,
        render.progress_bar("purge", enabled=not args.json and not args.dry_run) as update,
    ):
        report = memory.purge(agent=args.agent, dry_run=args.dry_run, progress=update)
    if args.json:
        render.print_json(purge_json(report))
        return 0
    verb = "would forget" if report.dry_run else "forgot"
    if report.found:
        table = Table(title=f"{verb} {len(report.found)} of {report.checked} item(s)")
        table.title_justify = "left"
        for column in ("item", "agent", "tier", "where", "why"):
            table.add_column(column, overflow="fold")
        for p in report.found:
            table.add_row(
                p.item.id,
                Text(p.item.agent),
                p.item.tier.value,
                Text(p.item.provenance.citation()),
                Text(p.reason),
            )
        render.out.print(table)
    elif settings.storage_policies.empty:
        render.out.print(
            f"nothing to purge: no storage policies in {settings.home / CONFIG_FILE}",
            markup=False,
        )
    else:
        render.out.print(
            f"nothing to purge: the policies allow all {report.checked} item(s)", markup=False
        )
    if report.dry_run:
        if report.found:
            render.out.print("dry run: nothing was changed (run without --dry-run to purge)")
        return 0
    if report.files:
        places = ", ".join(f"{path} ({n}×)" for path, n in sorted(report.files.items()))
        render.out.print(f"touched: {places}", markup=False)
        render.out.print(f"index rows removed: {report.index_removed}")
    return 0


def print_refusal(receipt: WriteReceipt, as_json: bool) -> int:
    """Say that a storage policy refused a write, and why; returns the exit code."""
    from rich.markup import escape

    reason = receipt.policy or "a storage policy refused it"
    if as_json:
        from kronika import wire

        render.print_json({**wire.write_receipt(receipt), "policy": reason})
    else:
        render.err.print(f"[red]not stored:[/red] {escape(reason)}")
    return REFUSED_EXIT_CODE


def print_policy_note(receipt: WriteReceipt) -> None:
    """A write a policy kept in a shorter tier than asked says so on stderr."""
    from rich.markup import escape

    if receipt.policy and receipt.outcome == "applied":
        render.err.print(f"[yellow]policy:[/yellow] {escape(receipt.policy)}")


def register(policies: Commands) -> None:
    policies.add("list", cmd_policies)
    p = policies.add("purge", cmd_purge)
    p.add_argument(
        "--dry-run", action="store_true", help="only list what would be forgotten, change nothing"
    )
