"""``kronika`` — the command line, a thin client of :class:`kronika.Memory`.

Every command prints a readable table, or one JSON document with ``--json``.
Errors are mapped to exit codes in one table (:data:`EXIT_CODES`).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from kronika import errors
from kronika.cli import (
    agents,
    audit,
    chat,
    commands_data,
    explain,
    forgetting,
    health,
    index,
    init,
    jobs,
    legacy,
    lessons,
    links,
    note,
    notes,
    policies,
    proposals,
    reading,
    recall,
    recall_log,
    remember,
    render,
    serve,
    usage,
)
from kronika.cli.commands import Commands
from kronika.cli.context import OWNER_ONLY, add_owner_only, refuse_reader
from kronika.cli.health import run_healing

if TYPE_CHECKING:
    from kronika.settings import Settings

EXIT_CODES: tuple[tuple[type[errors.KronikaError], int], ...] = (
    (errors.WorkspaceNotFound, 3),
    (errors.AgentError, 4),
    (errors.NotFound, 5),
    (errors.PermissionDenied, 6),
    (errors.CorruptFileError, 7),
    (errors.IndexError_, 7),
    (errors.EmbedderError, 8),
    (errors.ImportFormatError, 9),
    (errors.LLMError, 10),
    (errors.StoreError, 12),
    (errors.InvalidQuery, 2),
    (errors.InvalidInput, 2),
    (errors.ConfigError, 2),
    (errors.KronikaError, 1),
)
"""The first class an error is an instance of decides the exit code."""
USAGE_EXIT_CODE = 2
"""A command line that cannot be read: an unknown option, a missing argument…"""
OS_EXIT_CODE = 1
"""The system refused to read or write a file (permissions, a full disk…)."""
INTERNAL_EXIT_CODE = 1
"""Anything else: a bug, reported in one line instead of a traceback."""


def exit_code_for(exc: errors.KronikaError) -> int:
    for cls, code in EXIT_CODES:
        if isinstance(exc, cls):
            return code
    return 1


# -------------------------------------------------------------------- parser
class UsageError(Exception):
    """The command line itself could not be read (unknown option, missing argument…)."""


class _Parser(argparse.ArgumentParser):
    """Reports a bad command line by raising :class:`UsageError` instead of exiting, so
    it is printed (as JSON too, with ``--json``) and exits 2 like other bad input."""

    commands: Commands | None = None
    """The commands added to the top-level parser (:func:`build_parser`)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see `{self.prog} --help`)")


GLOBAL_DEFAULTS: dict[str, Any] = {"home": None, "json": False, "verbose": False, "agent": None}
"""The global options, which may stand before or after the command name."""

WITHOUT_WORKSPACE = frozenset({"init", "bench"})
"""Commands that do not need an existing workspace (``init`` makes one, ``bench`` its own);
``import export`` too, which restores a whole workspace from a backup (and removes it
again when the restore fails)."""


def _needs_workspace(args: argparse.Namespace) -> bool:
    restoring = args.command == "import" and getattr(args, "format", None) == "export"
    return args.command not in WITHOUT_WORKSPACE and not restoring


def build_parser() -> _Parser:
    # SUPPRESS lets the global options stand before or after the command name
    common = _Parser(add_help=False, argument_default=argparse.SUPPRESS)
    common.add_argument("--home", help="workspace folder (default $KRONIKA_HOME or ./.kronika)")
    common.add_argument("--json", action="store_true", help="print one JSON document")
    common.add_argument("-v", "--verbose", action="store_true", help="log recall scores")
    common.add_argument("--agent", help="agent to use (default: the workspace's default agent)")

    parser = _Parser(
        prog="kronika",
        usage="%(prog)s [-h] [--version] [--home HOME] [--json] [-v] [--agent AGENT] COMMAND ...",
        description="Long-term memory for LLM agents: Markdown truth, offline recall.",
        epilog="`kronika COMMAND --help` explains a command, `kronika GROUP --help` a group.",
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"kronika {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", prog="kronika")
    sub.help = argparse.SUPPRESS  # listed by section instead (Commands.list_in)
    cli = Commands(sub, common, section="remember and recall")
    init.register(cli)
    remember.register(cli)
    note.register(cli)
    recall.register(cli)
    forgetting.register(cli)  # forget
    reading.register(cli)  # show, list, get, history
    explain.register(cli)

    cli.section = "talk, serve, move, check"
    chat.register(cli)
    serve.register(cli)  # serve, mcp
    commands_data.register(cli)  # export, import, bench
    health.register(cli)  # doctor

    cli.section = "groups (kronika GROUP COMMAND)"
    agents.register(cli)
    proposals.register(cli)
    links.register(cli)
    lessons.register(cli)
    policies.register(cli)
    jobs_group = cli.group("jobs", "memory jobs (decay, reflect, dream, summarize, distill)")
    jobs.register(jobs_group)
    chat.register_consolidate(jobs_group)
    index.register(cli.group("index", "the search index beside the Markdown"))
    logs = cli.group("logs", "what happened (writes, recalls, the model's use)")
    audit.register(logs)
    recall_log.register(logs)
    usage.register(logs)
    serve.register_keys(cli)

    cli.list_in(parser)
    parser.commands = cli
    for name in OWNER_ONLY:  # the owner's commands refuse a reading context, saying why
        add_owner_only(cli.parser_of(name))
    return parser


def expand(parser: _Parser, argv: Sequence[str]) -> list[str]:
    """``argv`` in the current spelling (:meth:`Commands.expand`)."""
    return list(argv) if parser.commands is None else parser.commands.expand(argv, legacy.warn)


def _version() -> str:
    from kronika.providers.installed import installed_version

    return installed_version("kronika") or "unknown"


def require_workspace(settings: Settings) -> None:
    """:class:`WorkspaceNotFound` unless ``settings.home`` holds a workspace: only
    ``kronika init`` creates one, so a mistyped ``--home`` never makes a new one."""
    from kronika.stores.markdown.workspace import MarkdownWorkspace

    if not MarkdownWorkspace(settings.home).exists():
        raise errors.WorkspaceNotFound(
            f"no kronika workspace at {settings.home}: check --home or KRONIKA_HOME,"
            " or run `kronika init` to create one there"
        )


def main(argv: Sequence[str] | None = None) -> int:
    wants_json = "--json" in (sys.argv[1:] if argv is None else argv)
    args: argparse.Namespace | None = None
    notes.reset()
    legacy.AS_JSON[0] = wants_json
    try:
        parser = build_parser()
        given = sys.argv[1:] if argv is None else argv
        args = parser.parse_args(expand(parser, given))
        # The global options are shared with every subcommand (so they may stand before
        # or after it) and default to "absent"; fill them in here, not with
        # set_defaults, which would change the shared actions and let the subcommand's
        # defaults win.
        for name, default in GLOBAL_DEFAULTS.items():
            if not hasattr(args, name):
                setattr(args, name, default)
        logging.basicConfig(
            level=logging.DEBUG if args.verbose else logging.WARNING,
            format="%(levelname)s %(name)s: %(message)s",
        )
        from kronika.settings import load_settings  # after the parser: not for --help

        refused = refuse_reader(args)
        if refused is not None:
            raise UsageError(refused)
        settings = load_settings(args.home)
        if _needs_workspace(args):
            require_workspace(settings)
        return run_healing(args, settings)
    except SystemExit as exc:  # --help and --version
        return exc.code if isinstance(exc.code, int) else 0
    except UsageError as exc:
        return _report(USAGE_EXIT_CODE, "UsageError", str(exc), wants_json)
    except errors.KronikaError as exc:
        return _report(exit_code_for(exc), type(exc).__name__, str(exc), wants_json)
    except KeyboardInterrupt:
        render.err.print("interrupted")
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:
        # a file named on the command line that cannot be read or written
        return _report(OS_EXIT_CODE, type(exc).__name__, str(exc), wants_json)
    except Exception as exc:  # never a traceback for the user
        if args is not None and args.verbose:
            logging.getLogger("kronika").exception("unexpected error")
        message = (
            f"unexpected {type(exc).__name__}: {exc} (a bug in kronika; "
            "run again with -v to see where it happened)"
        )
        return _report(INTERNAL_EXIT_CODE, "InternalError", message, wants_json)
    finally:
        render.print_notes(notes.take(), as_json=wants_json)


def _report(code: int, name: str, message: str, as_json: bool) -> int:
    from rich.text import Text

    render.print_notes(notes.take(), as_json=as_json)  # what was met on the way, first
    if as_json:
        print(json.dumps({"error": name, "message": message}), file=sys.stderr)
    else:
        render.err.print(Text.assemble(("error: ", "red"), message))
    return code
