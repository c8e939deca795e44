"""``kronika jobs run JOB`` and ``kronika jobs list``: the memory jobs
(:mod:`kronika.workflows.jobs`)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from kronika.cli import render
from kronika.cli.commands import Commands
from kronika.cli.numbers import count_in

if TYPE_CHECKING:
    from kronika.settings import Settings

JOB_NAMES = ("decay", "reflect", "dream", "summarize", "distill")


def cmd_jobs(args: argparse.Namespace, settings: Settings) -> int:
    from rich.table import Table

    from kronika.workflows.jobs import last_runs, run_job

    if args.verb == "list":
        runs = last_runs(settings.home)
        if args.json:
            render.print_json(runs)
            return 0
        if not runs:
            render.out.print("no job has run yet")
            return 0
        table = Table(title="last runs", title_justify="left")
        for column in ("job", "agent", "finished", "done", "waiting", "unchanged"):
            table.add_column(column)
        for job, agents in sorted(runs.items()):
            for agent, run in sorted(agents.items()):
                table.add_row(
                    job,
                    agent,
                    str(run.get("finished_at", "")),
                    str(run.get("done", "")),
                    str(run.get("waiting", "")),
                    str(run.get("unchanged", "")),
                )
        render.out.print(table)
        return 0
    from kronika.app import build_llm
    from kronika.cli.opening import open_memory

    reports = []
    with open_memory(settings) as memory, render.labelled_progress_bar(not args.json) as progress:
        llm = build_llm(settings, minion=True, clock=memory.clock)
        names = memory.agents() if args.all_agents else [args.agent or settings.default_agent]
        for agent in names:
            reports.append(
                run_job(
                    memory,
                    args.job,
                    agent=agent,
                    days=args.days,
                    mode=args.mode,
                    llm=llm,
                    progress=progress,
                    clear=True if args.clear else None,
                )
            )
    if args.json:
        render.print_json([r.as_dict() for r in reports])
        return 0
    for report in reports:
        said = f"{report.job} for {report.agent} ({report.mode}, {report.seconds:.1f} s)"
        render.out.print(said, markup=False)
        for line in report.done:
            render.out.print(f"  done: {line}", markup=False)
        for line in report.waiting:
            render.out.print(f"  waiting: {line}", markup=False)
        if not report.done and not report.waiting:
            render.out.print(f"  nothing to do ({report.unchanged} unchanged)", markup=False)
    return 0


def register(jobs: Commands) -> None:
    p = jobs.add("list", cmd_jobs)
    p = jobs.add("run", cmd_jobs)
    p.add_argument("job", choices=JOB_NAMES, help="which job")
    p.add_argument(
        "--days", type=count_in(1, 36600), default=7, help="how far back to look (default 7)"
    )
    p.add_argument("--mode", choices=("lite", "full"), default="full", help="lite: no dreaming")
    p.add_argument("--all-agents", action="store_true", help="run it for every agent")
    p.add_argument(
        "--clear",
        action="store_true",
        help="with distill: clear the messages it distilled (default: the distill_clear setting)",
    )
