"""CLI commands that move data in and out: export, import, bench."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kronika.app import AUDIT_FILE, INDEX_FILE, MODEL_MARKER, build_memory
from kronika.cli import render
from kronika.engine.portability import export_memory, import_export
from kronika.errors import ImportFormatError, InvalidInput
from kronika.settings import CONFIG_FILE, Settings


def cmd_export(args: argparse.Namespace, settings: Settings) -> int:
    if args.output:
        _refuse_memory_file(Path(args.output), settings.home)
    with build_memory(settings) as memory:
        agents = [args.agent] if args.agent else None
        data = export_memory(memory, agents)
    text = json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        render.err.print(f"exported {len(data['agents'])} agents to {args.output}")
    else:
        sys.stdout.write(text)
    return 0


def _refuse_memory_file(output: Path, home: Path) -> None:
    """An export written over the workspace's own files would destroy what it saves."""
    target, root = output.resolve(), Path(home).resolve()
    own = {root / name for name in (INDEX_FILE, AUDIT_FILE, MODEL_MARKER, CONFIG_FILE)}
    beside_index = target.parent == root and target.name.startswith(INDEX_FILE)
    if target.is_relative_to(root / "agents") or target in own or beside_index:
        raise InvalidInput(
            f"refusing to write the export to {output}: it is one of the workspace's memory "
            f"files (in {home}); choose a path outside {root / 'agents'}"
        )


def cmd_import(args: argparse.Namespace, settings: Settings) -> int:
    path = Path(args.path)
    if not path.is_file():
        raise ImportFormatError(f"no such file: {path}")
    summary: dict[str, Any]
    with build_memory(settings, create=True) as memory:
        if args.format == "export":
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise ImportFormatError(f"{path} is not a JSON export: {exc}") from exc
            counts = import_export(memory, data, replace_existing=args.replace)
            summary = {"format": "export", **counts}
        else:
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


def register_data_commands(add: Callable[..., Any]) -> None:
    p = add("export", cmd_export, "export everything kept (files, items, audit) as JSON")
    p.add_argument("--format", choices=("json",), default="json")
    p.add_argument("-o", "--output", help="write to this file instead of stdout")

    p = add("import", cmd_import, "import conversations (locomo, longmemeval, jsonl) or an export")
    p.add_argument("format", choices=("locomo", "longmemeval", "jsonl", "export"))
    p.add_argument("path")
    p.add_argument("--limit", type=int, help="longmemeval: import only the first N questions")
    p.add_argument(
        "--roles", default="all", help="longmemeval: turns to keep, e.g. user (default all)"
    )
    p.add_argument("--replace", action="store_true", help="export: overwrite existing agents")

    p = add(
        "bench", cmd_bench, "run a benchmark and write Markdown + JSON results", with_agent=False
    )
    p.add_argument("suite", choices=("locomo", "longmemeval", "scale", "crash"))
    p.add_argument("path", nargs="?", help="data file (locomo, longmemeval)")
    p.add_argument(
        "--mode",
        action="append",
        choices=("lexical", "vector", "hybrid"),
        help="retrieval modes to measure (repeatable; default all three)",
    )
    p.add_argument("--limit", type=int, help="only the first N conversations/questions")
    p.add_argument("--sizes", default="10000,100000", help="scale: corpus sizes")
    p.add_argument("--queries", type=int, default=100, help="scale: queries per size")
    p.add_argument(
        "--workdir", help="scale: keep the workspaces here and reuse them on the next run"
    )
    p.add_argument("--trials", type=int, default=100, help="crash: trials to run")
    p.add_argument("--writers", type=int, default=1, help="crash: writer processes per trial")
    p.add_argument("--seed", type=int, default=0, help="crash: seed of the first trial")
    p.add_argument(
        "--max-run",
        type=float,
        default=2.0,
        help="crash: longest a writer runs before its kill (s)",
    )
    p.add_argument("--out", default="bench-results", help="folder for the results files")
    p.add_argument("--embedder", help="override the embedder for this run")
