"""The reading context on the command line: ``--tenant``, ``--user``, ``--channel``,
``--team`` (and ``--scope`` where a command writes or filters by scope).

Without any of them a command reads as the workspace's owner, unrestricted, as
before readers existed. With one, it reads as :meth:`kronika.Memory.reader` builds
it (the tenant setting and the user's teams from ``[teams]`` fill what is not given)
and writes for the audience :meth:`kronika.Memory.remember` derives from it.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kronika.memory import Memory
    from kronika.memory.context import ReadingContext

SCOPES = ("personal", "channel", "team", "global")
"""The values of :class:`kronika.core.model.Scope`, written out so that the parser (and
``--help``) loads no model; a test keeps the two the same."""


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
    """The reading context the options name (:mod:`kronika.memory.context`); ``None``
    when they name none (the workspace's owner, reading unrestricted)."""
    from kronika.memory.context import ReadingContext

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
