"""CLI commands that move data in and out: export, import, bench."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kronika.cli import notes, render
from kronika.cli.commands import Commands
from kronika.cli.context import SCOPES, add_reading_context, reading
from kronika.cli.numbers import count_in
from kronika.errors import ImportFormatError, InvalidInput

if TYPE_CHECKING:
    from kronika.settings import Settings


def cmd_export(args: argparse.Namespace, settings: Settings) -> int:
    from kronika.app import build_memory
    from kronika.workflows.portability import export_memory

    for target in (args.output, args.markdown):
        if target:
            _refuse_memory_file(Path(target), settings.home)
    with notes.watch(build_memory(settings)) as memory:
        agents = [args.agent] if args.agent else None
        data = export_memory(reading(memory, args), agents, scopes=args.scope or ())
    if args.markdown:
        if "view" in data:  # a reader's view holds items, not the files everyone shares
            raise InvalidInput(
                "--markdown writes the workspace's files, which hold every reader's memories: "
                "export them without --user, --channel, --team or --scope"
            )
        written = _write_markdown(data, Path(args.markdown))
        render.err.print(f"wrote {written} Markdown files to {args.markdown}")
        return 0
    text = json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        render.err.print(f"exported {len(data['agents'])} agents to {args.output}")
    else:
        sys.stdout.write(text)
    return 0


def _write_markdown(data: dict[str, Any], folder: Path) -> int:
    """Each exported agent's files as ``folder/<agent>/<path>``, with their times."""
    from kronika.engine.backup_format import markdown_files

    written = 0
    for rel, text, moment in markdown_files(data):
        target = folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.encode("utf-8"))
        if moment is not None:
            os.utime(target, ns=(moment, moment))
        written += 1
    return written


def _refuse_memory_file(output: Path, home: Path) -> None:
    """An export written over the workspace's own files would destroy what it saves."""
    from kronika.app import AUDIT_FILE, INDEX_FILE, MODEL_MARKER
    from kronika.settings import CONFIG_FILE

    target, root = output.resolve(), Path(home).resolve()
    own = {root / name for name in (INDEX_FILE, AUDIT_FILE, MODEL_MARKER, CONFIG_FILE)}
    beside_index = target.parent == root and target.name.startswith(INDEX_FILE)
    if target.is_relative_to(root / "agents") or target in own or beside_index:
        raise InvalidInput(
            f"refusing to write the export to {output}: it is one of the workspace's memory "
            f"files (in {home}); choose a path outside {root / 'agents'}"
        )


def cmd_import(args: argparse.Namespace, settings: Settings) -> int:
    from kronika.app import build_memory

    if args.format == "sample":
        if args.path is not None:
            raise InvalidInput("`kronika import sample` takes no file: it imports its own")
        from kronika.importers.jsonl import SAMPLE_FILE

        path = SAMPLE_FILE
    elif args.path is None:
        raise InvalidInput(f"say which file to import: `kronika import {args.format} PATH`")
    else:
        path = Path(args.path)
    if not path.is_file():
        raise InvalidInput(f"no such file: {path}")
    if args.format == "export":
        return _restore(args, settings, path)
    summary: dict[str, Any]
    with build_memory(settings, create=True) as memory:
        groups = _read_groups(args, path)
        summary = {"format": args.format, "agents": 0, "sessions": 0, "turns": 0}
        with render.progress_bar(f"import {args.format}", enabled=not args.json) as update:
            for agent, sessions in groups:
                report = memory.import_sessions(agent, sessions, progress=update)
                summary["agents"] += 1
                summary["sessions"] += report.sessions
                summary["turns"] += report.turns
    if args.json:
        render.print_json(summary)
    else:
        render.out.print(render.kv_table(summary, f"imported {path.name}"))
    return 0


def _restore(args: argparse.Namespace, settings: Settings, path: Path) -> int:
    """Restore an export: read and check it whole before anything is created, and
    take away a workspace this command made if the restore then fails."""
    from kronika.app import build_memory
    from kronika.engine.backup_format import read_backup
    from kronika.stores.markdown.workspace import MarkdownWorkspace
    from kronika.workflows.portability import restore_backup

    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ImportFormatError(f"{path} is not a JSON export: {exc}") from exc
    backup = read_backup(data)
    home = Path(settings.home)
    made = not MarkdownWorkspace(home).exists()  # this command makes the workspace
    before = {p.name for p in home.iterdir()} if home.is_dir() else None
    try:
        with build_memory(settings, create=True) as memory:
            report = restore_backup(memory, backup, replace_existing=args.replace)
    except BaseException:
        if made:
            _remove_new(home, before)
        raise
    for note in report.notes:
        render.err.print(f"note: {note}")
    summary = {"format": "export", **report.as_dict()}
    if args.json:
        render.print_json(summary)
    else:
        del summary["notes"]
        summary["rules"] = ", ".join(summary["rules"]) or "none"
        render.out.print(render.kv_table(summary, f"imported {path.name}"))
    return 0


def _remove_new(home: Path, before: set[str] | None) -> None:
    """Remove what a failed restore created: the whole folder when there was none,
    else only the entries that were not there before."""
    if before is None:
        shutil.rmtree(home, ignore_errors=True)
        return
    for entry in home.iterdir():
        if entry.name not in before:
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)


def _read_groups(args: argparse.Namespace, path: Path) -> list[tuple[str, Any]]:
    if args.format == "locomo":
        from kronika.importers.locomo import read_locomo

        return [(conv.agent, conv.sessions) for conv in read_locomo(path)]
    if args.format == "longmemeval":
        from kronika.importers.longmemeval import iter_longmemeval

        roles = None if args.roles == "all" else tuple(args.roles.split(","))
        groups: list[tuple[str, Any]] = []
        for number, question in enumerate(iter_longmemeval(path, roles=roles)):
            if args.limit is not None and number >= args.limit:
                break
            groups.append((question.agent, question.sessions))
        return groups
    from kronika.importers.jsonl import read_jsonl

    agent = args.agent or "default"
    return [(agent, read_jsonl(path))]


def cmd_bench(args: argparse.Namespace, settings: Settings) -> int:
    from kronika.cli.bench import run_bench

    return run_bench(args, settings)


def register(cli: Commands) -> None:
    p = cli.add("export", cmd_export)
    p.add_argument("--format", choices=("json",), default="json")
    p.add_argument("-o", "--output", help="write to this file instead of stdout")
    p.add_argument(
        "--scope", action="append", choices=SCOPES, help="only these scopes (a view, no backup)"
    )
    p.add_argument("--markdown", metavar="DIR", help="write each agent's Markdown files into DIR")
    add_reading_context(p)

    p = cli.add("import", cmd_import)
    p.add_argument("format", choices=("locomo", "longmemeval", "jsonl", "export", "sample"))
    p.add_argument("path", nargs="?", help="the file (none for sample)")
    p.add_argument(
        "--limit", type=count_in(1, 10**9), help="longmemeval: import only the first N questions"
    )
    p.add_argument(
        "--roles", default="all", help="longmemeval: turns to keep, e.g. user (default all)"
    )
    p.add_argument(
        "--replace",
        action="store_true",
        help="export: replace agents that already hold memories with the export's",
    )

    p = cli.add("bench", cmd_bench)
    p.add_argument(
        "suite",
        choices=(
            "locomo",
            "longmemeval",
            "scale",
            "vectors",
            "crash",
            "writes",
            "team-writes",
            "session-turns",
            "hand-edits",
            "round-trips",
            "lessons",
            "serve",
            "memory",
            "folds",
        ),
    )
    p.add_argument("path", nargs="?", help="data file (locomo, longmemeval)")
    p.add_argument(
        "--mode",
        action="append",
        choices=("lexical", "vector", "hybrid"),
        help="retrieval modes to measure (repeatable; default all three)",
    )
    p.add_argument(
        "--limit",
        type=count_in(1, 10**9),
        help="only the first N conversations/questions (memory: questions of each person)",
    )
    p.add_argument(
        "--sizes",
        help="scale, vectors, writes, serve: corpus sizes (default 10000,100000; writes"
        " 1000,10000,100000; serve 10000); session-turns: session lengths (10,1000,10000);"
        " hand-edits: chats stored (10,3000)",
    )
    p.add_argument(
        "--queries",
        type=count_in(0, 10**6),
        help="scale, vectors: queries per size (default 100; vectors 50); serve: requests"
        " per level (default 100); team-writes: recalls per size, kronika's and the"
        " floor's (default 50; 0 skips them)",
    )
    p.add_argument(
        "--repeats", type=count_in(1, 1000), default=3, help="vectors: timed runs per query"
    )
    p.add_argument(
        "--workdir",
        help="scale, vectors, folds: keep the workspaces here and reuse them next time",
    )
    p.add_argument("--trials", type=int, default=100, help="crash: trials to run")
    p.add_argument(
        "--writers",
        type=int,
        default=1,
        help="crash: writer processes per trial; team-writes: writers side by side (2 when"
        " left at 1; 0 skips them)",
    )
    p.add_argument(
        "--writer-seconds",
        type=float,
        default=15.0,
        help="team-writes: how long the writers side by side write (s)",
    )
    p.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="team-writes: rounds of the writers side by side, each tree in turn",
    )
    p.add_argument(
        "--sessions",
        type=count_in(0, 10**7),
        default=0,
        help="team-writes: short conversations (4 turns each) stored beside the facts"
        " before the timed calls (default 0)",
    )
    p.add_argument(
        "--writers-only",
        action="store_true",
        help="team-writes: measure the writers side by side alone (no sizes, floors or"
        " workers in turn)",
    )
    p.add_argument(
        "--before",
        help="team-writes, session-turns, hand-edits, round-trips, writes (its"
        " remember_many): a src folder of another kronika, measured in the same run",
    )
    p.add_argument(
        "--seed", type=int, default=0, help="crash: seed of the first trial; lessons: of the run"
    )
    p.add_argument("--tasks", type=int, default=96, help="lessons: tasks the agent meets")
    p.add_argument(
        "--evaluator",
        choices=("exit-code", "scripted", "model"),
        default="exit-code",
        help="lessons: also judge by a model — scripted (a local scripted server) or model"
        " (the configured one)",
    )
    p.add_argument(
        "--batches",
        action="store_true",
        help="crash: writers also write batches (remember_many, session imports), each"
        " checked to be stored whole or not at all",
    )
    p.add_argument(
        "--agents",
        action="store_true",
        help="crash: each writer writes its own items into an agent of its own (only the"
        " shared key into the default agent), so writers of different agents run at once",
    )
    p.add_argument(
        "--max-run",
        type=float,
        default=2.0,
        help="crash: longest a writer runs before its kill (s)",
    )
    p.add_argument(
        "--calls",
        type=count_in(1, 10**6),
        help="writes, team-writes, session-turns: timed calls per size; round-trips: timed"
        " calls of each kind, near and away (default 200); hand-edits: rounds per size"
        " (default 30)",
    )
    p.add_argument(
        "--delay-ms",
        type=float,
        default=1.0,
        help="round-trips: how far away the database is made to seem (ms there and back)",
    )
    p.add_argument(
        "--budget",
        type=float,
        default=60.0,
        help="writes, serve, hand-edits: seconds at most per timed series",
    )
    p.add_argument(
        "--clients", default="1,16,64", help="serve: concurrent clients per level (1,16,64)"
    )
    p.add_argument("--workers", default="1", help="serve: server processes, e.g. 1,2 (1)")
    p.add_argument(
        "--client",
        choices=("asyncio", "threads"),
        default="asyncio",
        help="serve: how the load is sent: one event loop (asyncio), or the earlier "
        "thread per connection with http.client (threads), to compare their cost",
    )
    p.add_argument(
        "--batch",
        type=count_in(0, 10**6),
        default=1_000,
        help="writes, team-writes: facts given to one remember_many call (and to the"
        " floor's batch; team-writes: 0 skips it); writes: turns given to one save_turns"
        " call",
    )
    p.add_argument(
        "--index",
        help="locomo, longmemeval, scale: sqlite (default), postgres (a throwaway local"
        " server) or postgres=URL (a fresh database on that server, dropped after); serve:"
        " postgres also runs the server on that store of record; team-writes: postgres"
        " (default) or postgres=URL; session-turns: sqlite (the local backend only), postgres"
        " (default: local and a throwaway server) or postgres=URL; crash: team mode on"
        " PostgreSQL, a worker per writer; round-trips: postgres (default) or postgres=URL",
    )
    p.add_argument(
        "--lexical",
        choices=("bm25", "simple", "trigram"),
        default="bm25",
        help="with --index postgres: keyword scoring (bm25 as SQLite's; the others measured)",
    )
    p.add_argument(
        "--split",
        choices=("dev", "test", "all"),
        default="all",
        help="memory: the people to ask (split by person; default all, dev and test side by side)",
    )
    p.add_argument(
        "--person",
        action="append",
        help="memory: only this person (repeatable), e.g. en-alice",
    )
    p.add_argument("--locomo", help="folds: the LoCoMo file (locomo_dev.json)")
    p.add_argument("--longmemeval", help="folds: the LongMemEval file (longmemeval_s_dev.json.gz)")
    p.add_argument(
        "--folds",
        type=count_in(2, 1000),
        default=5,
        help="folds: how many folds (conversations, questions and people are split into)",
    )
    p.add_argument(
        "--no-memory",
        action="store_true",
        help="folds: leave out bench memory's people (only the data files given)",
    )
    p.add_argument("--out", default="bench-results", help="folder for the results files")
    p.add_argument("--embedder", help="override the embedder for this run")
