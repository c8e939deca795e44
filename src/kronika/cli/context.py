"""The reading context on the command line: ``--tenant``, ``--user``, ``--channel``,
``--team`` (and ``--scope`` where a command writes or filters by scope).

Without any of them a command reads as the workspace's owner, unrestricted, as
before readers existed. With one, it reads as :meth:`kronika.Memory.reader` builds
it (the tenant setting and the user's teams from ``[teams]`` fill what is not given)
and writes for the audience :meth:`kronika.Memory.remember` derives from it.

A command that only the workspace's owner runs (it counts, checks, rebuilds or runs
jobs over the whole workspace: :data:`OWNER_ONLY`) refuses these options with a usage
error that says why and where a reader gets the same answer, never ignoring them.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kronika.memory import Memory
    from kronika.workflows.context import ReadingContext

SCOPES = ("personal", "channel", "team", "global")
"""The values of :class:`kronika.core.model.Scope`, written out so that the parser (and
``--help``) loads no model; a test keeps the two the same."""


OWNER_ONLY = {
    "index stats": "a reader's counts: `GET /v1/stats` with its key",
    "policies list": "the rules a tenant sees: `GET /v1/agents/<agent>/policies` with its key",
    "jobs run": "a tenant's jobs: `POST /v1/agents/<agent>/jobs/<job>` with its admin key",
    "jobs list": "a tenant's jobs: `POST /v1/agents/<agent>/jobs/<job>` with its admin key",
    "doctor": "it checks the workspace's files, which hold every reader's memories",
}
"""Commands that read the workspace whole, as its owner -> where a reader asks instead."""
CONTEXT_OPTIONS = ("tenant", "user", "channel", "team")


def add_owner_only(p: argparse.ArgumentParser) -> None:
    """The reading-context options on a command of :data:`OWNER_ONLY`, hidden: taken by
    the parser so that :func:`refuse_reader` can say why they cannot be honoured."""
    for name in CONTEXT_OPTIONS:
        p.add_argument(f"--{name}", action="append", dest=f"refused_{name}", help=argparse.SUPPRESS)


def refuse_reader(args: argparse.Namespace) -> str | None:
    """Why the command cannot run with the reading-context options given (``None``
    when it can): the message of a usage error."""
    given = [f"--{n}" for n in CONTEXT_OPTIONS if getattr(args, f"refused_{n}", None)]
    command = getattr(args, "command", None)
    if not given or command not in OWNER_ONLY:
        return None
    return (
        f"`kronika {command}` reads the whole workspace as its owner and cannot read as a"
        f" tenant, user, channel or team; leave out {', '.join(given)} ({OWNER_ONLY[command]})"
    )


def refuse_for_reader(args: argparse.Namespace, what: str) -> None:
    """:class:`~kronika.errors.InvalidInput` when the reading-context options name a
    reader: ``what`` is the owner's alone."""
    from kronika.errors import InvalidInput

    given = [f"--{n}" for n in CONTEXT_OPTIONS if getattr(args, n, None)]
    if given:
        raise InvalidInput(f"{what} is the workspace owner's: leave out {', '.join(given)}")


def add_reading_context(p: argparse.ArgumentParser, *, writes: bool = False) -> None:
    """Add the reading-context options to the parser of one command."""
    p.add_argument("--tenant", help="read as a member of this tenant (default: the setting)")
    p.add_argument("--user", help="read (and write) as this user")
    p.add_argument("--channel", help="read (and write) in this channel")
    if writes:
        p.add_argument("--team", help="share the memory with this team (with --scope team)")
        p.add_argument("--scope", choices=SCOPES, help="who the memory is for (docs/scopes.md)")
    else:
        p.add_argument(
            "--team",
            action="append",
            help="the reader's team (repeatable; default: the user's teams in [teams])",
        )


def reading_context(
    memory: Memory, args: argparse.Namespace, *, writes: bool = False
) -> ReadingContext | None:
    """The reading context the options name (:mod:`kronika.workflows.context`); ``None``
    when they name none (the workspace's owner, reading unrestricted)."""
    from kronika.workflows.context import ReadingContext

    tenant, user, channel = (getattr(args, name, None) for name in ("tenant", "user", "channel"))
    team = getattr(args, "team", None)
    if tenant is None and user is None and channel is None and not team:
        return None
    teams = None if writes or not team else tuple(team)
    return ReadingContext(tenant or memory.settings.tenant, user, channel, teams)


def reading(memory: Memory, args: argparse.Namespace, *, writes: bool = False) -> Memory:
    """``memory`` as the reader the options name (itself when they name none)."""
    context = reading_context(memory, args, writes=writes)
    return memory if context is None else context.view(memory)


def write_audience(args: argparse.Namespace) -> dict[str, Any]:
    """The audience keywords a write command passes on (``scope``, ``team``)."""
    return {"scope": getattr(args, "scope", None), "team": getattr(args, "team", None)}
