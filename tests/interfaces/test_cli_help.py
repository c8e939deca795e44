"""``kronika --help``, ``kronika GROUP --help`` and ``kronika COMMAND --help`` print
from the parser alone, and each command's parser is made only when it is named: the
help is the same either way, and printing it loads no memory, store, model, server or
third-party code (what made it as slow as running a command)."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import subprocess
import sys
from importlib import import_module

import pytest

from kronika.cli import main

cli_main = import_module("kronika.cli.main")  # `kronika.cli.main` the attribute is main()


def _paths() -> list[tuple[str, ...]]:
    """Every command line with a help page: the top, each command, group and verb."""
    found: list[tuple[str, ...]] = [()]
    for entry in cli_main.commands().entries:
        found.append((entry.name,))
        if entry.group is not None:
            found += [(entry.name, verb) for verb in entry.group.verbs]
    return found


PATHS = _paths()
GROUPS = [p for p in PATHS if len(p) == 1 and p[0] in cli_main.commands().groups()]


def _help(argv: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(argv) == 0
    return out.getvalue()


def _every_parser() -> dict[tuple[str, ...], argparse.ArgumentParser]:
    """Every parser of a parser whose sub-parsers were all made, by its command line."""
    found: dict[tuple[str, ...], argparse.ArgumentParser] = {}

    def walk(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> None:
        found[path] = parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, (*path, name))

    walk(cli_main.build_parser(), ())
    return found


def test_each_help_page_is_the_same_with_only_its_command_made_or_every_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    whole = _every_parser()
    assert set(whole) == set(PATHS)
    for path in PATHS:
        alone = _help([*path, "--help"])
        assert alone == whole[path].format_help(), path
        assert alone.startswith(f"usage: {' '.join(('kronika', *path))} ")


def test_the_listing_says_what_each_command_says_of_itself(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "1000")  # a line of help on one line
    top = _help(["--help"])
    for entry in cli_main.commands().entries:
        said = entry.help
        if entry.group is not None:
            said += ": " + ", ".join(entry.group.verbs)
            page = _help([entry.name, "--help"])
            for verb in entry.group.verbs:
                own = _help([entry.name, verb, "--help"]).split("\n\n")[1]
                assert any(line.split() == [verb, *own.split()] for line in page.splitlines())
        assert any(line.split() == [entry.name, *said.split()] for line in top.splitlines())
        own = _help([entry.name, "--help"]).split("\n\n")[1]
        assert own == entry.help


def test_every_command_runs_a_handler_and_a_group_s_default_is_one_of_its_verbs() -> None:
    for path, parser in _every_parser().items():
        if len(path) == 0 or path in GROUPS:
            continue
        assert callable(parser.get_default("handler")), path
        assert parser.get_default("command") == " ".join(path)
    for name, group in cli_main.commands().groups().items():
        assert group.default is None or group.default in group.verbs, name


def test_an_earlier_spelling_still_explains_the_command_it_became() -> None:
    assert _help(["approve", "--help"]).startswith("usage: kronika proposals approve ")
    assert _help(["reindex", "--help"]).startswith("usage: kronika index rebuild ")


# What printing help may load. The parser is the command line's own (kronika.cli) and
# needs the error table and the installed version; nothing that runs a command: no
# memory, store, model, setting, server, workflow or benchmark, no third-party package,
# no database, logging, networking or processes.
PARSER_MODULES = {
    "kronika",
    "kronika.cli",
    "kronika.cli.main",
    "kronika.cli.commands",
    "kronika.cli.context",
    "kronika.cli.legacy",
    "kronika.cli.notes",
    "kronika.errors",
    "kronika.providers",
    "kronika.providers.installed",
}
NOT_FOR_HELP: tuple[str, ...] = ("sqlite3", "logging", "asyncio", "socket", "ssl", "http", "email")
NOT_FOR_HELP += ("concurrent", "multiprocessing", "subprocess", "threading")

PROBE = """
import json, sys
before = set(sys.modules)
from kronika.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "new": {
    name: getattr(module, "__file__", None) or ""
    for name, module in list(sys.modules.items()) if name not in before
}}))
"""


def _loaded(argv: list[str]) -> tuple[str, dict[str, str]]:
    """What ``kronika argv`` printed and the modules it loaded (name -> file), run as a
    fresh process."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    printed, _, last = done.stdout.rstrip("\n").rpartition("\n")
    report = json.loads(last)
    assert report["code"] == 0, done.stderr
    return printed, report["new"]


def _unwanted(loaded: dict[str, str], allowed_cli: bool) -> list[str]:
    bad = []
    for name, file in loaded.items():
        if name.startswith("kronika"):
            if name in PARSER_MODULES or (allowed_cli and name.startswith("kronika.cli.")):
                continue
            bad.append(name)
        elif "site-packages" in file or "dist-packages" in file:
            bad.append(name)  # a third-party package
        elif name.partition(".")[0] in NOT_FOR_HELP:
            bad.append(name)
    return sorted(bad)


@pytest.mark.parametrize(
    "argv", [["--help"], ["--version"]] + [[*g, "--help"] for g in GROUPS], ids=" ".join
)
def test_the_listings_load_the_parser_alone(argv: list[str]) -> None:
    """``kronika --help`` and ``kronika GROUP --help`` list commands without importing
    the module of any."""
    printed, loaded = _loaded(argv)
    assert printed.startswith("usage: kronika" if argv != ["--version"] else "kronika ")
    assert {n for n in loaded if n.startswith("kronika")} <= PARSER_MODULES
    assert set(loaded) & PARSER_MODULES >= {"kronika.cli.main", "kronika.cli.commands"}
    assert _unwanted(loaded, allowed_cli=False) == []


@pytest.mark.parametrize("path", [p for p in PATHS if p and p not in GROUPS], ids=" ".join)
def test_a_command_s_help_loads_its_parser_and_nothing_that_runs_it(
    path: tuple[str, ...],
) -> None:
    printed, loaded = _loaded([*path, "--help"])
    assert printed.startswith(f"usage: kronika {' '.join(path)} ")
    assert _unwanted(loaded, allowed_cli=True) == []
