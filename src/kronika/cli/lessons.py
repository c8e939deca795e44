"""``kronika lessons record`` (how an action went) and ``lessons list`` (what was learned)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from kronika.cli import render
from kronika.cli.commands import Commands
from kronika.cli.context import add_reading_context, reading, write_audience
from kronika.errors import InvalidInput

if TYPE_CHECKING:
    from kronika.settings import Settings


def cmd_outcome(args: argparse.Namespace, settings: Settings) -> int:
    from rich.markup import escape

    from kronika.app import build_llm
    from kronika.cli.opening import open_memory
    from kronika.core.lessons import Evaluation, exit_code

    verdicts = [args.ok, args.failed, args.exit_code is not None]
    if sum(bool(v) for v in verdicts) != 1:
        raise InvalidInput("say how it went: exactly one of --ok, --failed, --exit-code N")
    if args.exit_code is not None:
        evaluation = exit_code(args.exit_code, args.stderr or "")
        if args.reason:
            evaluation = Evaluation(
                evaluation.is_ok, evaluation.score, (*evaluation.reasons, *args.reason), "exit_code"
            )
    else:
        evaluation = Evaluation(bool(args.ok), 1.0 if args.ok else 0.0, tuple(args.reason or ()))
    with open_memory(settings) as opened:
        memory = reading(opened, args, writes=True)
        llm = None if args.no_model else build_llm(settings, minion=True, clock=memory.clock)
        report = memory.record_outcome(
            args.task, args.action, evaluation, agent=args.agent, llm=llm, **write_audience(args)
        )
    for note in report.notes:
        render.err.print(f"[yellow]note:[/yellow] {escape(note)}")
    if args.json:
        render.print_json(report.as_dict())
        return 0
    said = "went well" if evaluation.is_ok else "failed"
    render.out.print(f"kept as {report.event_id}: it {said}", markup=False)
    for x in report.learned:
        render.out.print(f"learned {x.kind} {x.id}: {x.text}", markup=False)
    for x in report.reinforced:
        render.out.print(f"the same cause again: {x.id} reinforced", markup=False)
    for x in report.credited:
        render.out.print(f"{x.id}: score {x.score:.2f} ({x.helped} helped, {x.hurt} hurt)")
    for x in report.retired:
        render.out.print(f"retired {x.id}: later outcomes contradict it", markup=False)
    return 0


def cmd_lessons(args: argparse.Namespace, settings: Settings) -> int:
    from rich.table import Table

    from kronika.cli.opening import open_memory

    with open_memory(settings) as opened:
        memory = reading(opened, args)
        if args.task:
            ids = [h.item.id for h in memory.lessons_for(args.task, agent=args.agent)]
            every = {x.id: x for x in memory.lessons(agent=args.agent)}
            found = [every[i] for i in ids if i in every]
        else:
            found = memory.lessons(agent=args.agent, include_retired=args.all)
    if args.json:
        render.print_json([x.as_dict() for x in found])
        return 0
    if not found:
        render.out.print("no lessons yet" if not args.task else "no lesson matches that task")
        return 0
    table = Table(title="lessons", title_justify="left")
    for column in ("id", "kind", "score", "helped", "hurt", "status", "lesson"):
        table.add_column(
            column,
            overflow="fold",
            justify="right" if column in ("score", "helped", "hurt") else "left",
        )
    for x in found:
        table.add_row(x.id, x.kind, f"{x.score:.2f}", str(x.helped), str(x.hurt), x.status, x.text)
    render.out.print(table)
    return 0


def register(lessons: Commands) -> None:
    p = lessons.add("list", cmd_lessons)
    p.add_argument("--all", action="store_true", help="retired lessons too")
    p.add_argument("--task", help="only the lessons served for this task")
    add_reading_context(p)
    p = lessons.add("record", cmd_outcome)
    p.add_argument("task", help="what the agent was trying to do")
    p.add_argument("--action", required=True, help="what it did")
    p.add_argument("--ok", action="store_true", help="it went well")
    p.add_argument("--failed", action="store_true", help="it failed")
    p.add_argument("--exit-code", type=int, help="judge by a process's exit code (0: success)")
    p.add_argument("--stderr", help="with --exit-code: the error output (its last line is kept)")
    p.add_argument("--reason", action="append", help="why (repeatable)")
    p.add_argument("--no-model", action="store_true", help="do not ask the model to reflect")
    add_reading_context(p, writes=True)
