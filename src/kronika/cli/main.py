"""``kronika`` — the command line, a thin client of :class:`kronika.Memory`.

Every command prints a readable table, or one JSON document with ``--json``.
Errors are mapped to exit codes in one table (:data:`EXIT_CODES`).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from kronika import errors
from kronika.cli import notes, render
from kronika.cli.agents import create_agent, register_agent_commands
from kronika.cli.chat import register_chat_commands
from kronika.cli.commands_data import register_data_commands
from kronika.cli.context import (
    OWNER_ONLY,
    SCOPES,
    add_owner_only,
    add_reading_context,
    reading,
    reading_context,
    refuse_reader,
    write_audience,
)
from kronika.cli.explain import register_explain_command
from kronika.cli.forgetting import print_receipt, receipt_json
from kronika.cli.health import register_health_commands, run_healing
from kronika.cli.jobs import register_job_commands
from kronika.cli.lessons import register_lesson_commands
from kronika.cli.links import register_link_commands
from kronika.cli.opening import open_memory
from kronika.cli.policies import print_policy_note, print_refusal, register_policy_commands
from kronika.cli.proposals import register_proposal_commands
from kronika.cli.recall_log import register_recall_log_command
from kronika.cli.serve import register_server_commands
from kronika.cli.usage import register_usage_command

if TYPE_CHECKING:
    from kronika.core.model import RecallResult
    from kronika.memory import Memory
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

Handler = Callable[[argparse.Namespace, "Settings"], int]


def exit_code_for(exc: errors.KronikaError) -> int:
    for cls, code in EXIT_CODES:
        if isinstance(exc, cls):
            return code
    return 1


# ------------------------------------------------------------------ commands
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


def cmd_remember(args: argparse.Namespace, settings: Settings) -> int:
    text = " ".join(args.text)
    with open_memory(settings) as memory:
        receipt = reading(memory, args, writes=True).remember(
            text,
            key=args.key,
            agent=args.agent,
            section=args.section,
            multi=args.multi,
            importance=args.importance,
            source="auto" if args.auto else "explicit",
            **write_audience(args),
        )
    if receipt.outcome == "refused":
        return print_refusal(receipt, args.json)
    _print_write_notes(receipt.notes)
    print_policy_note(receipt)
    change = type(receipt.change).__name__
    verbs = {
        "AddFact": "remembered",
        "SupersedeFact": "updated (the old value is kept as history)",
        "TouchFact": "already known; refreshed",
        "AppendNote": "kept as a mid-term note",
    }
    item = receipt.item
    if args.json:
        render.print_json(
            {
                "outcome": receipt.outcome,
                "change": change,
                "item": render.items_json([item])[0] if item else None,
                "notes": list(receipt.notes),
                "policy": receipt.policy,
            }
        )
    elif receipt.outcome == "proposed":
        render.out.print("Proposed; waiting for the user's approval.")
    elif item is not None:
        render.out.print(
            f"{verbs.get(change, 'stored')}: {item.content}  [{item.id}]", markup=False
        )
    return 0


def cmd_note(args: argparse.Namespace, settings: Settings) -> int:
    with open_memory(settings) as memory:
        receipt = reading(memory, args, writes=True).note(
            " ".join(args.text),
            agent=args.agent,
            kind=args.kind,
            confidence=args.confidence,
            **write_audience(args),
        )
    if receipt.outcome == "refused":
        return print_refusal(receipt, args.json)
    _print_write_notes(receipt.notes)
    item = receipt.item
    if args.json:
        render.print_json(
            {
                "outcome": receipt.outcome,
                "item": render.items_json([item])[0] if item else None,
                "notes": list(receipt.notes),
            }
        )
    elif item is not None:
        render.out.print(f"noted in {item.provenance.citation()}  [{item.id}]", markup=False)
    return 0


def _print_write_notes(notes: tuple[str, ...]) -> None:
    """What did not finish after a change was stored (stderr: the change itself stands)."""
    from rich.markup import escape

    for note in notes:
        render.err.print(f"[yellow]note:[/yellow] {escape(note)}")


def cmd_forget(args: argparse.Namespace, settings: Settings) -> int:
    with open_memory(settings) as memory:
        receipt = memory.forget(
            args.id,
            key=args.key,
            value=args.value,
            topic=args.topic,
            agent=args.agent,
            dry_run=args.dry_run,
        )
    if args.dry_run and not receipt.items and not receipt.places:
        raise errors.NotFound("nothing matches: nothing would be forgotten")
    if args.json:
        render.print_json(receipt_json(receipt))
    else:
        print_receipt(receipt)
    return 0


def cmd_recall(args: argparse.Namespace, settings: Settings) -> int:
    from rich.markup import escape

    query = " ".join(args.query)
    if not query.strip():
        raise errors.InvalidQuery("the query is empty: say what to look for")
    with open_memory(settings) as memory:
        result = reading(memory, args).recall(
            query,
            agent=args.agent,
            all_agents=args.all_agents,
            k=args.k,
            mode=args.mode,
            since=args.since,
            until=args.until,
            as_of=args.as_of,
            types=args.type or (),
            keys=args.key or (),
            entities=args.entity or (),
            speakers=args.speaker or (),
            scopes=args.scope or (),
            include_superseded=args.include_superseded,
            budget_tokens=args.budget,
            record_access=not args.no_record,
        )
        evidence = hit_links(reading(memory, args), result) if args.json else {}
    if args.json:
        document = render.recall_json(result)
        for hit in document["hits"]:
            hit["links"] = evidence.get(hit["id"], [])
        render.print_json(document)
        return 0
    for note in result.notes:
        render.err.print(f"[yellow]note:[/yellow] {escape(note)}")
    if not result.hits:
        render.out.print("nothing recalled")
    else:
        render.out.print(render.recall_table(result, explain=args.explain))
        if args.explain:
            from kronika.settings import relevance_floor

            render.out.print(
                f"[dim]score = rel x ({settings.alpha:g} + {settings.beta:g} x imp + "
                f"{settings.gamma:g} x rec) / {settings.alpha + settings.beta + settings.gamma:g};"
                f" relevance floor {relevance_floor(settings):g} (docs/scoring.md)[/dim]"
            )
        note = f"{len(result.hits)} of {result.candidates} candidates, {result.total_tokens} tokens"
        if result.dropped_for_budget:
            note += f"; {result.dropped_for_budget} left out to fit --budget {args.budget}"
        render.out.print(f"[dim]{note}[/dim]")
    return 0


def hit_links(memory: Memory, result: RecallResult) -> dict[str, list[dict[str, str]]]:
    """Each hit's links (evidence, reflections, strategies, related items) as
    ``{"from", "to", "kind"}``, for ``recall --json``."""
    wanted = {hit.item.id for hit in result.hits}
    found: dict[str, list[dict[str, str]]] = {}
    for agent in sorted({hit.item.agent for hit in result.hits}):
        for link in memory.links(agent=agent):
            row = {"from": link.from_id, "to": link.to_id, "kind": link.kind.value}
            for end in {link.from_id, link.to_id} & wanted:
                found.setdefault(end, []).append(row)
    return found


def cmd_show(args: argparse.Namespace, settings: Settings) -> int:
    with open_memory(settings) as opened:
        memory = reading(opened, args)
        what = args.what
        scopes = args.scope or ()
        if what == "brain":
            text = memory.brain(agent=args.agent, scopes=scopes)
        elif what == "identity":
            text = memory.identity(agent=args.agent)
        elif what == "context":
            text = memory.active_context(agent=args.agent)
        elif what == "prompt":
            text = memory.format_for_prompt(agent=args.agent, query=args.query, scopes=scopes)
        else:  # archive
            listed = memory.facts(agent=args.agent, scopes=scopes)
            facts = [f for f in listed if f.status.value == "archived"]
            if args.json:
                render.print_json(render.items_json(facts))
            else:
                render.out.print(render.items_table(facts, "brain archive"))
            return 0
    if args.json:
        render.print_json({"what": what, "text": text})
    else:
        render.out.print(text or f"({what} is empty)", markup=False)
    return 0


def cmd_list(args: argparse.Namespace, settings: Settings) -> int:
    with open_memory(settings) as opened:
        memory = reading(opened, args)
        items = memory.items(
            agent=args.agent,
            types=args.type or (),
            include_superseded=args.include_superseded,
            limit=args.limit,
            offset=args.offset,
            scopes=args.scope or (),
        )
        total = memory.count(agent=args.agent)
    if args.json:
        render.print_json(render.items_json(items))
    else:
        render.out.print(render.items_table(items, f"{len(items)} of {total} items"))
    return 0


def cmd_get(args: argparse.Namespace, settings: Settings) -> int:
    with open_memory(settings) as memory:
        item = reading(memory, args).get(args.id, agent=args.agent)
    data = render.items_json([item])[0]
    if args.json:
        render.print_json(data)
    else:
        render.out.print(render.kv_table(data, item.id))
    return 0


def cmd_history(args: argparse.Namespace, settings: Settings) -> int:
    with open_memory(settings) as memory:
        values = reading(memory, args).history(args.key, agent=args.agent)
    if not values:
        raise errors.NotFound(f"no fact with key {args.key!r} (see `kronika list --type fact`)")
    if args.json:
        render.print_json(render.items_json(values))
        return 0
    for item in values:
        start = item.valid_from.isoformat() if item.valid_from else "?"
        end = item.valid_to.isoformat() if item.valid_to else "now"
        render.out.print(f"{start} → {end}  {item.value}  [{item.status.value}]", markup=False)
    return 0


def cmd_stats(args: argparse.Namespace, settings: Settings) -> int:
    from kronika.engine.learning import lesson_stats

    with open_memory(settings) as memory:
        memory.sync()
        stats = memory.stats()
        lessons = lesson_stats(memory)
    stats = {"home": str(settings.home), "embedder": settings.embedder, **stats, **lessons}
    if args.json:
        render.print_json(stats)
    else:
        render.out.print(render.kv_table(stats, "kronika"))
    return 0


def cmd_audit(args: argparse.Namespace, settings: Settings) -> int:
    from rich.table import Table

    with open_memory(settings) as memory:
        context = reading_context(memory, args)
        if context is None:
            entries = memory.audit(agent=args.agent, limit=args.limit)
        else:  # a reader's: entries about its tenant's items it may see
            from kronika.memory.checks import MAX_LIMIT, optional_count

            limit = optional_count(args.limit, what="the limit", low=1, high=MAX_LIMIT)
            entries = context.audit(memory, args.agent)[-(limit or 1) :]
    rows = [
        {
            "at": e.at.isoformat(),
            "action": e.action,
            "agent": e.target_agent,
            "by": e.source_agent,
            "outcome": e.outcome,
            "item": e.item_id,
            "summary": e.summary,
        }
        for e in entries
    ]
    if args.json:
        render.print_json(rows)
        return 0
    table = Table(title="audit trail", title_justify="left")
    columns = ("at", "action", "agent", "by", "outcome", "summary")
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(
            *(str(row[c] or "") for c in ("at", "action", "agent", "by", "outcome", "summary"))
        )
    render.out.print(table)
    return 0


def cmd_reindex(args: argparse.Namespace, settings: Settings) -> int:
    with (
        open_memory(settings) as memory,
        render.progress_bar("reindex", enabled=not args.json) as update,
    ):
        report = memory.reindex(progress=update)
    return _print_sync(args, report)


def cmd_sync(args: argparse.Namespace, settings: Settings) -> int:
    with (
        open_memory(settings) as memory,
        render.progress_bar("sync", enabled=not args.json) as update,
    ):
        report = memory.sync(args.agent, progress=update)
    return _print_sync(args, report)


def _print_sync(args: argparse.Namespace, report: Any) -> int:
    from rich.text import Text

    data = {
        "files_seen": report.files_seen,
        "files_indexed": report.files_indexed,
        "files_removed": report.files_removed,
        "items_indexed": report.items_indexed,
        "texts_embedded": report.texts_embedded,
        "vectors_dropped": report.vectors_dropped,
        "seconds": round(report.seconds, 3),
        "warnings": report.warnings,
    }
    if args.json:
        render.print_json(data)
    else:
        for warning in report.warnings:
            render.err.print(Text.assemble(("warning: ", "yellow"), warning))
        notes.shown(report.warnings)
        render.out.print(
            f"indexed {data['items_indexed']} items from {data['files_indexed']} files "
            f"({data['texts_embedded']} texts embedded, {data['vectors_dropped']} unused"
            f" vectors dropped) in {data['seconds']} s"
        )
    return 0


# -------------------------------------------------------------------- parser
class UsageError(Exception):
    """The command line itself could not be read (unknown option, missing argument…)."""


class _Parser(argparse.ArgumentParser):
    """Reports a bad command line by raising :class:`UsageError` instead of exiting, so
    it is printed (as JSON too, with ``--json``) and exits 2 like other bad input."""

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


def build_parser() -> argparse.ArgumentParser:
    # SUPPRESS lets the global options stand before or after the command name
    common = _Parser(add_help=False, argument_default=argparse.SUPPRESS)
    common.add_argument("--home", help="workspace folder (default $KRONIKA_HOME or ./.kronika)")
    common.add_argument("--json", action="store_true", help="print one JSON document")
    common.add_argument("-v", "--verbose", action="store_true", help="log recall scores")
    common.add_argument("--agent", help="agent to use (default: the workspace's default agent)")

    parser = _Parser(
        prog="kronika",
        description="Long-term memory for LLM agents: Markdown truth, offline recall.",
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"kronika {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name: str, handler: Handler, help_text: str, *, with_agent: bool = True) -> Any:
        # every command accepts --agent (a global option); with_agent only says it matters
        p = sub.add_parser(name, parents=[common], help=help_text, description=help_text)
        p.set_defaults(handler=handler)
        return p

    add(
        "init",
        cmd_init,
        "create a workspace (config, folders, the default agent; with --agent, that agent too)",
        with_agent=False,
    )

    p = add("remember", cmd_remember, "remember a fact in the Brain")
    p.add_argument("text", nargs="+", help="the fact (or the value of --key)")
    p.add_argument("--key", help="fact key; a new value supersedes the old one")
    p.add_argument("--section", help="Brain section: User, Preferences, Decisions, Current")
    p.add_argument("--multi", action="store_true", help="the key may hold several values")
    p.add_argument("--importance", type=float, help="0..1 (default from settings)")
    p.add_argument("--auto", action="store_true", help="mark as learned automatically")
    add_reading_context(p, writes=True)

    p = add("note", cmd_note, "retain a note in today's daily log")
    p.add_argument("text", nargs="+")
    p.add_argument(
        "--kind",
        choices=("W", "B", "O", "S"),
        help="W world, B experience (first person), O opinion, S observation",
    )
    p.add_argument("--confidence", type=float, help="an opinion's confidence, 0 to 1")
    add_reading_context(p, writes=True)

    p = add("forget", cmd_forget, "forget an item, a key, a value or a topic, with a receipt")
    p.add_argument("id", nargs="?", help="item id (see `kronika list` / `recall --json`)")
    p.add_argument("--key", help="forget this fact key, its history included")
    p.add_argument("--value", help="forget only this value (of --key, or of any key)")
    p.add_argument("--topic", help="forget what these words name, as said in a conversation")
    p.add_argument("--dry-run", action="store_true", help="change nothing: say what would go")

    p = add("recall", cmd_recall, "find the memories that best match a query")
    p.add_argument("query", nargs="+")
    p.add_argument("--k", type=int, default=None, help="how many results (default 10)")
    p.add_argument("--mode", choices=("hybrid", "lexical", "vector"), default="hybrid")
    p.add_argument("--since", help="30d, 2w, 2025-11-01, yesterday, last week…")
    p.add_argument("--until", help="same forms as --since (a date means its end)")
    p.add_argument("--as-of", help="only what was true at that time (fact history)")
    p.add_argument("--type", action="append", help="item type (repeatable)")
    p.add_argument("--key", action="append", help="fact key (repeatable)")
    p.add_argument("--entity", action="append", help="mentioned entity (repeatable)")
    p.add_argument("--speaker", action="append", help="conversation speaker (repeatable)")
    p.add_argument(
        "--scope",
        action="append",
        choices=("personal", "channel", "team", "global"),
        help="memory scope (repeatable)",
    )
    p.add_argument("--budget", type=int, help="pack results into this many tokens")
    p.add_argument("--all-agents", action="store_true", help="search every agent's memory")
    p.add_argument("--include-superseded", action="store_true", help="include old fact values")
    p.add_argument("--explain", action="store_true", help="show the parts of each score")
    p.add_argument("--no-record", action="store_true", help="do not record this access")
    add_reading_context(p)

    p = add("show", cmd_show, "show the Brain, identity, active context, archive or prompt block")
    p.add_argument("what", choices=("brain", "identity", "context", "archive", "prompt"))
    p.add_argument("--query", help="with `show prompt`: add the LONG_TERM_MEMORY block")
    p.add_argument("--scope", action="append", choices=SCOPES, help="only these scopes' facts")
    add_reading_context(p)

    p = add("list", cmd_list, "list stored items, newest first")
    p.add_argument("--type", action="append")
    p.add_argument("--limit", type=int, default=50)
    p.add_argument("--offset", type=int, default=0)
    p.add_argument("--include-superseded", action="store_true")
    p.add_argument("--scope", action="append", choices=SCOPES, help="memory scope (repeatable)")
    add_reading_context(p)

    p = add("get", cmd_get, "show one item with all its fields")
    p.add_argument("id")
    add_reading_context(p)

    p = add("history", cmd_history, "every value a fact key has had")
    p.add_argument("key")
    add_reading_context(p)

    register_agent_commands(add)
    add("stats", cmd_stats, "index statistics", with_agent=False)
    p = add("audit", cmd_audit, "show the audit trail of writes")
    p.add_argument("--limit", type=int, default=50)
    add_reading_context(p)
    add("reindex", cmd_reindex, "rebuild the index from the Markdown alone", with_agent=False)
    add("sync", cmd_sync, "pick up hand edits of the Markdown now")

    register_data_commands(add)
    register_chat_commands(add)
    register_proposal_commands(add)
    register_link_commands(add)
    register_health_commands(add)
    register_usage_command(add)
    register_recall_log_command(add)
    register_explain_command(add)
    register_lesson_commands(add)
    register_job_commands(add)
    register_policy_commands(add)
    register_server_commands(add)
    for name in OWNER_ONLY:  # the owner's commands refuse a reading context, saying why
        add_owner_only(sub.choices[name])
    return parser


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
    try:
        args = build_parser().parse_args(argv)
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
