"""``kronika init``: a workspace (its config, folders and default agent; with
``--agent``, that agent too)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from kronika.cli import render
from kronika.cli.agents import create_agent
from kronika.cli.commands import Commands
from kronika.cli.opening import open_memory

if TYPE_CHECKING:
    from kronika.settings import Settings


def cmd_init(args: argparse.Namespace, settings: Settings) -> int:
    from kronika.app import init_workspace

    created = init_workspace(settings)
    agent = args.agent or settings.default_agent
    made = False
    if agent != settings.default_agent:  # `init --agent planner`: that agent too
        with open_memory(settings) as memory:
            made = create_agent(memory, agent)
    if args.json:
        render.print_json({"home": str(settings.home), "created": created, "agent": agent})
        return 0
    verb = "Created" if created else "Workspace already exists at"
    render.out.print(f"{verb} {settings.home} (agent: {settings.default_agent})")
    if agent != settings.default_agent:
        render.out.print(f"{'created' if made else 'already there:'} agent {agent}")
    return 0


def register(cli: Commands) -> None:
    cli.add("init", cmd_init)
