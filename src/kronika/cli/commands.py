"""How commands join the command line: :class:`Commands`.

Each command module adds its commands with one call each (``cli.add(name, handler,
help)``, or the verbs of a group: ``cli.group("proposals", …).add("approve", …)``), and
:mod:`kronika.cli.main` calls each module's registration once. Top-level commands are
listed by section in ``kronika --help``, in the order they were added; a group is
listed with its verbs (``kronika GROUP --help`` explains them).

A group may have a default verb (``kronika proposals`` is ``kronika proposals list``):
:meth:`Commands.expand` writes it into the command line before it is parsed, and turns
an earlier spelling (:mod:`kronika.cli.legacy`) into the current one.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from kronika.settings import Settings

Handler = Callable[[argparse.Namespace, "Settings"], int]
GLOBAL_VALUED = ("--home", "--agent")
"""The global options that take a value (see :func:`command_index`)."""
GLOBAL_FLAGS = ("--json", "-v", "--verbose")


class Entry(NamedTuple):
    """One line of ``kronika --help``: a command, or a group and its verbs."""

    name: str
    help: str
    section: str
    parser: argparse.ArgumentParser
    group: Commands | None = None


class Commands:
    """The commands of the command line, or of one group (``path`` is its name)."""

    def __init__(
        self,
        sub: Any,  # argparse._SubParsersAction: private in typeshed
        common: argparse.ArgumentParser,
        path: str = "",
        default: str | None = None,
        section: str = "commands",
    ) -> None:
        self.sub = sub
        self.common = common
        self.path = path
        self.default = default
        self.section = section
        self.entries: list[Entry] = []

    def add(self, name: str, handler: Handler, help_text: str) -> argparse.ArgumentParser:
        """A command (or a verb of this group) and its parser, to add options to."""
        p: argparse.ArgumentParser = self.sub.add_parser(
            name, parents=[self.common], help=help_text, description=help_text
        )
        p.set_defaults(handler=handler, command=self._named(name))
        self.entries.append(Entry(name, help_text, self.section, p))
        return p

    def group(self, name: str, help_text: str, *, default: str | None = None) -> Commands:
        """A group of verbs, ``kronika NAME VERB``; with a ``default`` verb, ``kronika
        NAME`` alone is that verb."""
        p = self.sub.add_parser(name, parents=[self.common], help=help_text, description=help_text)
        title = "commands" if default is None else f"commands (default: {default})"
        sub = p.add_subparsers(dest="verb", required=True, metavar="COMMAND", title=title)
        made = Commands(sub, self.common, self._named(name), default, self.section)
        self.entries.append(Entry(name, help_text, self.section, p, made))
        return made

    def _named(self, name: str) -> str:
        return f"{self.path} {name}".strip()

    @property
    def verbs(self) -> tuple[str, ...]:
        return tuple(e.name for e in self.entries)

    def parser_of(self, command: str) -> argparse.ArgumentParser:
        """The parser of ``command`` (``"recall"``, ``"index stats"``)."""
        first, _, rest = command.partition(" ")
        entry = next(e for e in self.entries if e.name == first)
        return entry.group.parser_of(rest) if entry.group is not None and rest else entry.parser

    def groups(self) -> dict[str, Commands]:
        """Every group, by its name."""
        return {e.name: e.group for e in self.entries if e.group is not None}

    def list_in(self, parser: argparse.ArgumentParser) -> None:
        """List the commands in ``parser``'s help, one section each, in the order added."""
        sections: dict[str, argparse._ArgumentGroup] = {}
        for entry in self.entries:
            if entry.section not in sections:
                sections[entry.section] = parser.add_argument_group(entry.section)
            said = entry.help
            if entry.group is not None:
                said = f"{said}: {', '.join(entry.group.verbs)}"
            row = argparse.Action([], dest=entry.name, metavar=entry.name, help=said)
            sections[entry.section]._group_actions.append(row)
        # the commands first, the options after them
        parser._action_groups.sort(key=lambda group: group.title not in sections)

    def expand(self, argv: Sequence[str], warn: Callable[[str, str], None]) -> list[str]:
        """``argv`` in the current spelling: an earlier one rewritten (``warn(old,
        new)`` says so), and a group's default verb written where none is named."""
        from kronika.cli.legacy import RENAMED

        args = list(argv)
        i = command_index(args)
        if i is None:
            return args
        if args[i] in RENAMED:
            new = RENAMED[args[i]]
            warn(f"kronika {args[i]}", f"kronika {new}")
            args[i : i + 1] = new.split()
        group = self.groups().get(args[i])
        if group is not None and group.default is not None:
            j = command_index(args, i + 1)
            if j is None or args[j] not in (*group.verbs, "-h", "--help"):
                args.insert(i + 1, group.default)
        return args


def command_index(args: Sequence[str], start: int = 0) -> int | None:
    """Where the first word that is not a global option stands in ``args`` (``None``
    when there is none): the command's name, or after it the verb of a group."""
    i = start
    while i < len(args):
        word = args[i]
        if word in GLOBAL_VALUED:
            i += 2
        elif word in GLOBAL_FLAGS or any(word.startswith(f"{g}=") for g in GLOBAL_VALUED):
            i += 1
        else:
            return i
    return None
