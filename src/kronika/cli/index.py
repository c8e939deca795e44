"""``kronika index sync``, ``index rebuild``, ``index stats`` and ``index graph``: the
search index beside the Markdown (which alone holds the memory)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from kronika.cli import notes, render
from kronika.cli.commands import Commands
from kronika.cli.opening import open_memory

if TYPE_CHECKING:
    from kronika.settings import Settings


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


def cmd_rebuild(args: argparse.Namespace, settings: Settings) -> int:
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


def cmd_graph(args: argparse.Namespace, settings: Settings) -> int:
    import time

    from rich.text import Text

    with open_memory(settings) as memory:
        memory.sync()
        began = time.perf_counter()
        if args.json:
            ready = memory.build_vector_graph()
        else:
            with render.err.status("building the vector graph (searches stay exact meanwhile)"):
                ready = memory.build_vector_graph()
        seconds = round(time.perf_counter() - began, 1)
    if args.json:
        render.print_json({"vector_graph": ready, "seconds": seconds})
    elif ready:
        render.out.print(f"the vector graph is ready and saved ({seconds} s)")
    else:
        render.out.print(
            Text(
                "no vector graph: the index is below the size from which searches use one"
                " (ann_threshold, or postgres_ann_threshold); every search is exact"
            )
        )
    return 0


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


def register(index: Commands) -> None:
    index.add("sync", cmd_sync)
    index.add("rebuild", cmd_rebuild)
    index.add("stats", cmd_stats)
    index.add("graph", cmd_graph)
