"""``kronika agents list|create NAME|remove NAME``: the agents of a workspace.

Names follow the same rules as ``POST /v1/agents`` and :meth:`Memory.create_agent`:
1-64 letters, digits, ``.``, ``_`` or ``-``, starting with a letter or digit, and not
another agent's name in another case. Removing asks first (or takes ``--yes``) and says
what goes: the agent's folder and every item of its memory.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from kronika.cli.commands import Commands
from kronika.cli.context import add_reading_context, reading_context, refuse_for_reader

if TYPE_CHECKING:
    from kronika.memory import Memory
    from kronika.settings import Settings


def cmd_agents(args: argparse.Namespace, settings: Settings) -> int:
    action = args.verb
    from kronika.app import build_memory
    from kronika.cli import notes, render

    # as every command opens it: an index built by an older kronika is rebuilt, with a bar
    with render.progress_bar_once_needed("rebuilding the index") as update:
        opened = build_memory(settings, progress=update)
    with notes.watch(opened) as memory:
        if action != "list":
            refuse_for_reader(args, f"`kronika agents {action}`")
        if action == "create":
            return _create(args, memory)
        if action == "remove":
            return _remove(args, memory)
        return _list(args, memory)


def _list(args: argparse.Namespace, memory: Memory) -> int:
    """Every agent and its items; with a reading context the agents of its tenant, and
    the items it may see of each."""
    from kronika.cli import render

    default = memory.settings.default_agent
    context = reading_context(memory, args)
    counts = (
        {name: memory.count(agent=name) for name in memory.agents()}
        if context is None
        else context.counts(memory)
    )
    rows = [
        {"agent": name, "items": items, "default": name == default}
        for name, items in counts.items()
    ]
    if args.json:
        render.print_json(rows)
    else:
        shown = {
            f"{row['agent']} (default)" if row["default"] else str(row["agent"]): row["items"]
            for row in rows
        }
        render.out.print(render.kv_table(shown, "agents (items)"))
    return 0


def create_agent(memory: Memory, name: str) -> bool:
    """Create ``name`` unless it exists; True if it was made."""
    existed = name in memory.agents()
    memory.create_agent(name)
    return not existed


def _create(args: argparse.Namespace, memory: Memory) -> int:
    from kronika.cli import render

    name = args.name
    created = create_agent(memory, name)
    folder = memory.workspace.agent_dir(name)
    if args.json:
        render.print_json({"agent": name, "created": created, "folder": str(folder)})
    elif created:
        render.out.print(f"created agent {name} ({folder})", markup=False)
    else:
        render.out.print(f"agent {name} already exists ({folder})", markup=False)
    return 0


def _remove(args: argparse.Namespace, memory: Memory) -> int:
    from kronika.cli import render
    from kronika.errors import InvalidInput

    name = args.name
    folder = memory.workspace.require_agent(name)  # an unknown agent: exit 4, with the list
    items = memory.count(agent=name)
    files = len(memory.workspace.list_sources(name))
    what = (
        f"agent {name}: {items} items from {files} files in {folder}"
        " (Brain, identity, sessions, daily logs, summaries); the audit trail is kept"
    )
    if not args.yes:
        if args.json or not sys.stdin.isatty():
            raise InvalidInput(f"removing {what}: add --yes to confirm")
        render.err.print(f"This removes {what}.", markup=False)
        render.err.print("(`kronika export -o backup.json` keeps a copy first.)", markup=False)
        answer = input(f"Type {name!r} to remove it: ").strip()
        if answer != name:
            render.err.print("nothing removed")
            return 1
    memory.remove_agent(name)
    if args.json:
        render.print_json({"agent": name, "removed": True, "items": items, "files": files})
    else:
        render.out.print(f"removed {what}", markup=False)
    return 0


def register(agents: Commands) -> None:
    p = agents.add("list", cmd_agents)
    p.set_defaults(name=None)
    add_reading_context(p)
    p = agents.add("create", cmd_agents)
    p.add_argument("name", metavar="NAME", help="the agent's name")
    add_reading_context(p)
    p = agents.add("remove", cmd_agents)
    p.add_argument("name", metavar="NAME", help="the agent's name")
    p.add_argument("--yes", action="store_true", help="do not ask first")
    add_reading_context(p)
