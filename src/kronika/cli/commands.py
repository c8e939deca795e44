"""How commands join the command line: :class:`Commands`.

:mod:`kronika.cli.main` lists every command once, with its line of help and the
module that adds its options (``cli.command("recall", "find …", "recall")``; the verbs
of a group: ``cli.group("proposals", …).command("approve", …)``). That list is all
``kronika --help`` needs: top-level commands are listed by section, in the order they
were listed, a group with its verbs.

A command's parser is made when it is first asked for: the command line names one
command, so only that command's module is imported and only its parser is built
(:class:`LazyParsers`). The module's ``register`` function then adds its options
(``p = cli.add("recall", cmd_recall)``), and its other commands' with them.

A group may have a default verb (``kronika proposals`` is ``kronika proposals list``):
:meth:`Commands.expand` writes it into the command line before it is parsed, and turns
an earlier spelling (:mod:`kronika.cli.legacy`) into the current one.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator, MutableMapping, Sequence
from importlib import import_module
from typing import TYPE_CHECKING, Any, NamedTuple

from kronika.cli.context import OWNER_ONLY, add_owner_only

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
    registers: str = ""
    """``module`` or ``module:function`` in :mod:`kronika.cli`: what adds its options."""
    group: Commands | None = None


class LazyParsers(MutableMapping[str, argparse.ArgumentParser]):
    """The parsers of a command's sub-commands by name, each made when first asked for.

    It stands in for the dictionary of an ``add_subparsers`` action: argparse checks a
    name against its keys (every listed name) and looks up only the parser it runs.
    Asking for every value (``.items()``) makes every parser."""

    def __init__(self, make: Callable[[str], None]) -> None:
        self._names: list[str] = []
        self._made: dict[str, argparse.ArgumentParser] = {}
        self._make = make

    def declare(self, name: str) -> None:
        self._names.append(name)

    def made(self, name: str) -> bool:
        return name in self._made

    def __getitem__(self, name: str) -> argparse.ArgumentParser:
        if name not in self._made and name in self._names:
            self._make(name)
        return self._made[name]

    def __setitem__(self, name: str, parser: argparse.ArgumentParser) -> None:
        if name not in self._names:
            raise KeyError(f"{name!r} is not a listed command")
        self._made[name] = parser

    def __delitem__(self, name: str) -> None:
        raise TypeError("a listed command cannot be removed")

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


class Commands:
    """The commands of the command line, or of one group (``path`` is its name)."""

    def __init__(self, path: str = "", default: str | None = None, section: str = "commands"):
        self.path = path
        self.default = default
        self.section = section
        self.entries: list[Entry] = []
        self.parsers = LazyParsers(self._make)
        self._common: argparse.ArgumentParser | None = None
        self._prog = "kronika"
        self._parser_class: type[argparse.ArgumentParser] = argparse.ArgumentParser

    # ------------------------------------------------------------ the listing
    def command(self, name: str, help_text: str, registers: str) -> None:
        """List a command (or a verb of this group): ``registers`` names the module of
        :mod:`kronika.cli` whose ``register`` adds its options (``"serve:register_keys"``
        another function of it)."""
        self._list(Entry(name, help_text, self.section, registers))

    def group(self, name: str, help_text: str, *, default: str | None = None) -> Commands:
        """List a group of verbs, ``kronika NAME VERB``; with a ``default`` verb,
        ``kronika NAME`` alone is that verb."""
        made = Commands(self._named(name), default, self.section)
        self._list(Entry(name, help_text, self.section, group=made))
        return made

    def _list(self, entry: Entry) -> None:
        if entry.name in self.parsers:
            raise ValueError(f"`kronika {self._named(entry.name)}` is listed twice")
        self.entries.append(entry)
        self.parsers.declare(entry.name)

    def _named(self, name: str) -> str:
        return f"{self.path} {name}".strip()

    @property
    def verbs(self) -> tuple[str, ...]:
        return tuple(e.name for e in self.entries)

    def groups(self) -> dict[str, Commands]:
        """Every group, by its name."""
        return {e.name: e.group for e in self.entries if e.group is not None}

    # ------------------------------------------------------------ the parsers
    def attach(
        self, parser: argparse.ArgumentParser, common: argparse.ArgumentParser, **kw: Any
    ) -> Any:  # argparse._SubParsersAction: private in typeshed
        """Give ``parser`` these commands as its sub-commands (``kw`` for
        ``add_subparsers``), each parser made when first asked for; ``common`` holds the
        options every command takes."""
        self._common, self._prog, self._parser_class = common, parser.prog, type(parser)
        sub: Any = parser.add_subparsers(prog=parser.prog, **kw)
        sub.choices = sub._name_parser_map = self.parsers
        for entry in self.entries:  # what `add_parser(name, help=…)` lists in the help
            sub._choices_actions.append(sub._ChoicesPseudoAction(entry.name, (), entry.help))
        return sub

    def add(self, name: str, handler: Handler) -> argparse.ArgumentParser:
        """The parser of a listed command (or verb of this group) that runs ``handler``,
        to add options to: called by the ``register`` function of its module."""
        if self.parsers.made(name):
            raise ValueError(f"`kronika {self._named(name)}` is registered twice")
        p = self._new_parser(self._entry(name))
        p.set_defaults(handler=handler, command=self._named(name))
        self.parsers[name] = p
        return p

    def _entry(self, name: str) -> Entry:
        found = next((e for e in self.entries if e.name == name), None)
        if found is None:
            raise ValueError(f"`kronika {self._named(name)}` is not listed in kronika.cli.main")
        return found

    @property
    def common(self) -> argparse.ArgumentParser:
        """The parser of the options every command takes (given by :meth:`attach`)."""
        if self._common is None:
            raise RuntimeError("the commands are not attached to a parser yet")
        return self._common

    def _new_parser(self, entry: Entry) -> argparse.ArgumentParser:
        # as `add_parser(name, parents=[common], description=help)` would make it
        return self._parser_class(
            prog=f"{self._prog} {entry.name}", parents=[self.common], description=entry.help
        )

    def _make(self, name: str) -> None:
        """Make the parser of ``name``: a group's with its verbs listed, a command's by
        its module's ``register`` (which makes its other commands' too)."""
        entry = self._entry(name)
        if entry.group is not None:
            p = self._new_parser(entry)
            default = entry.group.default
            title = "commands" if default is None else f"commands (default: {default})"
            entry.group.attach(
                p, self.common, dest="verb", required=True, metavar="COMMAND", title=title
            )
            self.parsers[name] = p
            return
        before = {n for n in self.parsers if self.parsers.made(n)}
        module, _, function = entry.registers.partition(":")
        register = getattr(import_module(f"kronika.cli.{module}"), function or "register")
        register(self)
        if not self.parsers.made(name):
            raise ValueError(f"{entry.registers} does not register `kronika {self._named(name)}`")
        for made in (n for n in self.parsers if self.parsers.made(n) and n not in before):
            if self._named(made) in OWNER_ONLY:  # they refuse a reading context, saying why
                add_owner_only(self.parsers[made])

    def parser_of(self, command: str) -> argparse.ArgumentParser:
        """The parser of ``command`` (``"recall"``, ``"index stats"``)."""
        first, _, rest = command.partition(" ")
        entry = self._entry(first)
        if entry.group is not None and rest:
            _ = self.parsers[first]  # making the group's parser attaches its verbs
            return entry.group.parser_of(rest)
        return self.parsers[first]

    # ------------------------------------------------------------ the help and argv
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
