"""``kronika doctor`` and the damaged index healed under any command.

A command that meets a damaged index (SQLite says the file is malformed) does not
stop: the index is derived, so :func:`run_healing` moves it aside, rebuilds it from
the Markdown, says so, and runs the command once more. A second failure is reported
as it is, so nothing loops.
"""

from __future__ import annotations

import argparse
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kronika.cli import notes, render
from kronika.cli.commands import Commands
from kronika.errors import CorruptIndexError

if TYPE_CHECKING:
    from kronika.engine.doctor import Examined
    from kronika.memory import Memory
    from kronika.settings import Settings

DOCTOR_FOUND_PROBLEMS = 11
"""``kronika doctor``'s exit code when something is wrong (after ``--fix``: still wrong)."""


def run_healing(args: argparse.Namespace, settings: Settings) -> int:
    """Run the command; if it meets a damaged index, heal the index and run it again."""
    from kronika.app import build_memory

    try:
        code: int = args.handler(args, settings)
        return code
    except CorruptIndexError as exc:
        with notes.watch(build_memory(settings)) as memory:
            memory.heal_index(str(exc.__cause__ or exc))
        code = args.handler(args, settings)
        return code


def cmd_doctor(args: argparse.Namespace, settings: Settings) -> int:
    from kronika.app import build_memory

    home = Path(settings.home)
    with notes.watch(build_memory(settings)) as memory:
        found = _examine(memory, home)
        done: list[str] = []
        after = found
        if args.fix and found.findings:
            with memory.lock:
                done = _repair(memory, found, home)
            after = _examine(memory, home)

    remaining = {(f.check, f.where, f.what) for f in after.findings}
    findings = [
        {**asdict(f), "fixed": args.fix and (f.check, f.where, f.what) not in remaining}
        for f in found.findings
    ]
    healthy = after.healthy
    if args.json:
        render.print_json(
            {
                "healthy": healthy,
                "checked": found.counts,
                "findings": findings,
                "repaired": done,
                "remaining": [asdict(f) for f in after.findings] if args.fix else None,
            }
        )
    else:
        _print_report(found, findings, done, after if args.fix else None, healthy)
    return 0 if healthy else DOCTOR_FOUND_PROBLEMS


def _examine(memory: Memory, home: Path) -> Examined:
    from kronika.app import AUDIT_FILE
    from kronika.engine.doctor import examine

    return examine(memory.workspace, memory.index, audit_path=home / AUDIT_FILE, home=home)


def _repair(memory: Memory, found: Examined, home: Path) -> list[str]:
    from kronika.app import AUDIT_FILE
    from kronika.engine.repair import repair

    return repair(
        memory.workspace,
        found,
        audit_path=home / AUDIT_FILE,
        home=home,
        rebuild_index=lambda: memory.heal_index("PRAGMA integrity_check failed"),
        sync_index=lambda: _sync(memory),
        finish_forgets=memory.finish_forgets,
    )


def _sync(memory: Memory) -> None:
    memory.sync()


def _print_report(
    found: Examined,
    findings: list[dict[str, Any]],
    done: list[str],
    after: Examined | None,
    healthy: bool,
) -> None:
    from rich.table import Table

    counts = ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in found.counts.items())
    render.out.print(f"checked {counts or 'an empty workspace'}")
    if findings:
        table = Table(title="findings", title_justify="left")
        for column in ("", "check", "where", "what", "fix"):
            table.add_column(column, overflow="fold")
        for f in findings:
            mark = "fixed" if f["fixed"] else f["severity"]
            table.add_row(mark, f["check"], f["where"], f["what"], f["fix"])
        render.out.print(table)
    for line in done:
        render.out.print(f"repaired: {line}", markup=False)
    if after is not None:
        for left in after.findings:
            render.out.print(
                f"not repaired ({left.severity}): {left.where}: {left.what}", markup=False
            )
    if healthy and not findings:
        render.out.print("no problems found")
    elif healthy:
        render.out.print("no problems left (warnings only)" if after is None else "healthy now")
    else:
        hint = "" if after is not None else "; `kronika doctor --fix` repairs what it can"
        render.out.print(f"problems found{hint}")


def register(cli: Commands) -> None:
    p = cli.add("doctor", cmd_doctor)
    p.add_argument("--fix", action="store_true", help="repair what can be repaired")
