"""How the CLI shows things: rich tables for people, JSON for scripts, progress bars."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any

from kronika.cli import notes

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from kronika.core.model import MemoryItem, RecallHit, RecallResult

    out: Console
    err: Console


def __getattr__(name: str) -> Any:
    # the consoles (and rich) load when a command first prints, not with the parser:
    # `kronika --help` never needs them
    if name not in ("out", "err"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if name in globals():  # asked for from inside this module, once they exist
        return globals()[name]
    from rich.console import Console

    # piped output keeps long lines (tables are for reading, --json is for scripts)
    made = {
        "out": Console(highlight=False, width=None if sys.stdout.isatty() else 160),
        "err": Console(stderr=True, highlight=False, soft_wrap=True),
    }
    globals().update(made)
    return made[name]


def print_json(data: Any) -> None:
    """One JSON document; a document that is an object carries the damage notes of the
    memories the command opened (:mod:`kronika.cli.notes`) in ``notes``."""
    found = notes.take()
    if isinstance(data, dict) and found:
        data = {**data, "notes": list(dict.fromkeys([*data.get("notes", []), *found]))}
    elif found:
        notes.keep(found)  # not an object: main prints them on stderr
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n")


def print_notes(found: list[str], *, as_json: bool) -> None:
    """Damage notes on stderr: one JSON line ``{"notes": [...]}`` with ``--json``."""
    if not found:
        return
    if as_json:
        print(json.dumps({"notes": found}, ensure_ascii=False), file=sys.stderr)
        return
    for note in found:
        from rich.text import Text

        __getattr__("err").print(Text.assemble(("note: ", "yellow"), note))


def print_write_notes(found: Sequence[str]) -> None:
    """What did not finish after a change was stored (stderr: the change itself stands)."""
    from rich.markup import escape

    for note in found:
        __getattr__("err").print(f"[yellow]note:[/yellow] {escape(note)}")


def _short(text: str, width: int = 90) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def recall_table(result: RecallResult, *, explain: bool = False) -> Table:
    from rich.table import Table
    from rich.text import Text

    from kronika.core.model import Status

    table = Table(title=f"recall: {result.query!r}", title_justify="left", expand=False)
    table.add_column("#", justify="right")
    table.add_column("score", justify="right")
    reranked = explain and any(hit.score.rerank_score is not None for hit in result.hits)
    past = explain and any(hit.score.history for hit in result.hits)
    if explain:
        for name in ("rel", "imp", "rec", "bm25#", "cos", *(("rerank",) if reranked else ())):
            table.add_column(name, justify="right")
        if past:
            table.add_column("from history", overflow="fold")
    table.add_column("kind")
    table.add_column("when")
    table.add_column("content", overflow="fold")
    table.add_column("source")
    for rank, hit in enumerate(result.hits, 1):
        item = hit.item
        extra: list[str] = []
        if explain:
            s = hit.score
            extra = [
                f"{s.relevance:.3f}",
                f"{s.importance:.2f}",
                f"{s.recency:.3f}",
                str(s.lexical_rank or "-"),
                f"{s.vector_similarity:.3f}" if s.vector_similarity is not None else "-",
            ]
            if reranked:
                extra.append(f"{s.rerank_score:.3f}" if s.rerank_score is not None else "-")
            if past:
                extra.append(s.history or "")
        who = f"{item.speaker}: " if item.speaker else ""
        table.add_row(
            str(rank),
            f"{hit.score.total:.3f}",
            *extra,
            item.type.value + ("" if item.status is Status.CURRENT else f", {item.status.value}"),
            item.created_at.strftime("%Y-%m-%d %H:%M"),
            Text(_short(who + item.content)),
            Text(hit.citation),
        )
    return table


def recall_json(result: RecallResult) -> dict[str, Any]:
    """The recall as the REST API sends it (:func:`kronika.wire.recall`, each hit with
    its ``explain``), each hit also with the flat keys ``--json`` printed before
    (:func:`kept_hit_keys`)."""
    from kronika import wire

    document = wire.recall(result, explain=True)
    document["hits"] = [
        {**sent, **kept_hit_keys(hit)}
        for sent, hit in zip(document["hits"], result.hits, strict=True)
    ]
    return document


def kept_hit_keys(hit: RecallHit) -> dict[str, Any]:
    """A hit's item and score parts as ``kronika recall --json`` printed them before its
    hits were :mod:`kronika.wire`'s (kept for scripts for one more release)."""
    item, score = hit.item, hit.score
    return {
        "id": item.id,
        "kind": item.type.value,
        "timestamp": item.created_at.isoformat(),
        "entities": list(item.entities),
        "speaker": item.speaker,
        "key": item.key,
        "content": item.content,
        "retain": item.kind.value if item.kind else None,
        "confidence": item.confidence,
        "turn_ids": list(item.provenance.turn_ids),
        "relevance": score.relevance,
        "importance": score.importance,
        "recency": score.recency,
        "rerank_score": score.rerank_score,
        "status": item.status.value,
        "valid_from": _iso(item.valid_from),
        "valid_to": _iso(item.valid_to),
        "history": score.history,
    }


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment else None


def items_table(items: Sequence[MemoryItem], title: str) -> Table:
    from rich.table import Table
    from rich.text import Text

    table = Table(title=title, title_justify="left")
    table.add_column("id")
    table.add_column("kind")
    table.add_column("status")
    table.add_column("updated")
    table.add_column("content", overflow="fold")
    table.add_column("source")
    for item in items:
        table.add_row(
            item.id,
            item.type.value,
            item.status.value,
            item.updated_at.strftime("%Y-%m-%d %H:%M"),
            Text(_short(item.content)),
            Text(item.provenance.citation()),
        )
    return table


def kv_table(rows: dict[str, Any], title: str) -> Table:
    from rich.table import Table

    table = Table(title=title, title_justify="left", show_header=False)
    table.add_column("what")
    table.add_column("value", overflow="fold")
    for key, value in rows.items():
        table.add_row(
            str(key),
            json.dumps(value, default=str) if isinstance(value, dict | list) else str(value),
        )
    return table


@contextmanager
def progress_bar(description: str, *, enabled: bool = True) -> Iterator[Any]:
    """Yields ``update(done, total)``; draws a bar on stderr when it is a terminal."""
    if not enabled:
        yield lambda done, total: None
        return
    # rich's live display is imported by the commands that draw a bar, not by every one
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    bar = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=__getattr__("err"),
        transient=False,
    )
    task = bar.add_task(description, total=None)

    def update(done: int, total: int) -> None:
        bar.update(task, completed=done, total=total)

    with bar:
        yield update


@contextmanager
def labelled_progress_bar(enabled: bool = True) -> Iterator[Any]:
    """Yields ``update(label, done, total)``: one bar whose label names the step (a
    benchmark's phases, a job's agents); nothing is drawn when ``enabled`` is false."""
    if not enabled:
        yield lambda label, done, total: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=__getattr__("err"),
    )
    task = bar.add_task("", total=None)

    def update(label: str, done: int, total: int) -> None:
        bar.update(task, description=label, completed=done, total=total)

    with bar:
        yield update


@contextmanager
def progress_bar_once_needed(description: str) -> Iterator[Any]:
    """Like :func:`progress_bar`, but nothing is drawn until the first update: for work
    that is seldom needed (an index rebuilt while a command opens the memory)."""
    with ExitStack() as stack:
        drawn: list[Any] = []

        def update(done: int, total: int) -> None:
            if not drawn:
                drawn.append(stack.enter_context(progress_bar(description)))
            drawn[0](done, total)

        yield update
