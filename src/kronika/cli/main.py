"""``kronika`` — the command line, a thin client of :class:`kronika.Memory`.

Every command prints a readable table, or one JSON document with ``--json``.
Errors are mapped to exit codes in one table (:data:`EXIT_CODES`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from kronika import errors
from kronika.cli import legacy, notes
from kronika.cli.commands import Commands
from kronika.cli.context import refuse_reader

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


def commands() -> Commands:
    """Every command: its section of ``kronika --help``, its name, its line of help and
    the module of :mod:`kronika.cli` that adds its options (imported only to run it or
    to explain it)."""
    cli = Commands(section="remember and recall")
    cli.command(
        "init",
        "create a workspace (config, folders, the default agent; with --agent, that agent too)",
        "init",
    )
    cli.command("remember", "remember a fact in the Brain", "remember")
    cli.command("note", "note something in today's daily log (typed: W, B, O, S)", "note")
    cli.command("recall", "find the memories that best match a query", "recall")
    cli.command("forget", "forget an item, a key, a value or a topic, with a receipt", "forgetting")
    cli.command(
        "show", "show the Brain, identity, active context, archive or prompt block", "reading"
    )
    cli.command("list", "list stored items, newest first", "reading")
    cli.command("get", "show one item with all its fields", "reading")
    cli.command("history", "every value a fact key has had", "reading")
    cli.command("explain", "tell why an item exists: its origin, events and history", "explain")

    cli.section = "talk, serve, move, check"
    cli.command("chat", "talk to an agent with memory (any OpenAI-compatible model)", "chat")
    cli.command("serve", "serve the REST API and MCP over HTTP (needs [server])", "serve")
    cli.command("mcp", "serve MCP on stdin/stdout as --agent (needs [mcp])", "serve")
    cli.command("export", "export everything kept (files, items, audit) as JSON", "commands_data")
    cli.command(
        "import",
        "import conversations (locomo, longmemeval, jsonl), an export, or kronika's sample",
        "commands_data",
    )
    cli.command("bench", "run a benchmark and write Markdown + JSON results", "commands_data")
    cli.command(
        "doctor", "check the workspace and index for damage; --fix repairs what it can", "health"
    )

    cli.section = "groups (kronika GROUP COMMAND)"
    agents = cli.group("agents", "the agents in the workspace", default="list")
    agents.command("list", "every agent, its items, and which is the default", "agents")
    agents.command("create", "create an agent, with a memory of its own", "agents")
    agents.command("remove", "remove an agent and every item of its memory", "agents")
    proposals = cli.group(
        "proposals", "changes agents proposed, waiting for your approval", default="list"
    )
    proposals.command("list", "list the changes waiting for approval", "proposals")
    proposals.command("approve", "apply a proposed change", "proposals")
    proposals.command("reject", "drop a proposed change", "proposals")
    links = cli.group("links", "links between items", default="list")
    links.command("list", "list the links of an agent, or of one item", "links")
    links.command("add", "link two items (reflection, strategy or related)", "links")
    lessons = cli.group(
        "lessons", "what the agent learned from how its actions went", default="list"
    )
    lessons.command("list", "list what the agent learned from outcomes", "lessons")
    lessons.command("record", "record how an action went; failures become lessons", "lessons")
    policies = cli.group("policies", "the storage policies and what they remove", default="list")
    policies.command(
        "list",
        "show the storage policies: retention per tier, never-store and tier rules, DMs",
        "policies",
    )
    policies.command(
        "purge",
        "forget what the storage policies no longer allow (expired, never stored, too long a tier)",
        "policies",
    )
    jobs = cli.group("jobs", "memory jobs (decay, reflect, dream, summarize, distill)")
    jobs.command("list", "when each job last ran, for each agent", "jobs")
    jobs.command("run", "run a memory job (decay, reflect, dream, summarize, distill)", "jobs")
    jobs.command(
        "consolidate",
        "consolidate ended sessions waiting for a model",
        "chat:register_consolidate",
    )
    index = cli.group("index", "the search index beside the Markdown")
    index.command("sync", "pick up hand edits of the Markdown now", "index")
    index.command("rebuild", "rebuild the index from the Markdown alone", "index")
    index.command("stats", "index statistics: items per agent and type, the model, sizes", "index")
    index.command("graph", "build the vector graph of a large index now and save it", "index")
    logs = cli.group("logs", "what happened (writes, recalls, the model's use)")
    logs.command("audit", "the audit trail of writes", "audit")
    logs.command("recalls", "show or export the recall log of an agent", "recall_log")
    logs.command(
        "usage",
        "show what the language model cost: calls, tokens, time and estimated price",
        "usage",
    )
    keys = cli.group("keys", "the server's API keys")
    keys.command("create", "make a key, shown once, stored hashed", "serve:register_keys")
    keys.command(
        "list",
        "the keys: ids, tenants, roles, bound users (never a key)",
        "serve:register_keys",
    )
    keys.command("revoke", "refuse a key from its next request on", "serve:register_keys")
    return cli


def build_parser() -> _Parser:
    """The command line's parser. Each command's own parser is made when it is first
    asked for (:class:`~kronika.cli.commands.LazyParsers`): ``kronika --help`` makes
    none, ``kronika recall …`` only recall's."""
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
    cli = commands()
    sub = cli.attach(parser, common, dest="command", required=True, metavar="COMMAND")
    sub.help = argparse.SUPPRESS  # listed by section instead (Commands.list_in)
    cli.list_in(parser)
    parser.commands = cli
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
        # what a command needs loads after the parser, never for --help
        import logging

        from kronika.cli.health import run_healing
        from kronika.settings import load_settings

        logging.basicConfig(
            level=logging.DEBUG if args.verbose else logging.WARNING,
            format="%(levelname)s %(name)s: %(message)s",
        )

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
        from kronika.cli import render

        render.err.print("interrupted")
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:
        # a file named on the command line that cannot be read or written
        return _report(OS_EXIT_CODE, type(exc).__name__, str(exc), wants_json)
    except Exception as exc:  # never a traceback for the user
        if args is not None and args.verbose:
            import logging

            logging.getLogger("kronika").exception("unexpected error")
        message = (
            f"unexpected {type(exc).__name__}: {exc} (a bug in kronika; "
            "run again with -v to see where it happened)"
        )
        return _report(INTERNAL_EXIT_CODE, "InternalError", message, wants_json)
    finally:
        _print_notes(wants_json)


def _print_notes(as_json: bool) -> None:
    """What the command met on the way (damage read around, a copy kept…), if anything."""
    found = notes.take()
    if found:
        from kronika.cli import render

        render.print_notes(found, as_json=as_json)


def _report(code: int, name: str, message: str, as_json: bool) -> int:
    _print_notes(as_json)  # what was met on the way, first
    if as_json:
        import json

        print(json.dumps({"error": name, "message": message}), file=sys.stderr)
    else:
        from rich.text import Text

        from kronika.cli import render

        render.err.print(Text.assemble(("error: ", "red"), message))
    return code
