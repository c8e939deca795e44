"""A forget that a kill cuts short is finished, never undone.

A forget edits many files one after the other (the fact files, transcripts, summaries,
the audit trail), then the index syncs. Killed in between, the Brain may have lost its
facts while the index still holds them; the next sync would take that for a truncated
Brain and keep the "lost" facts under ``.corrupt/`` for ``kronika doctor --fix`` to put
back — the forgotten value coming back. So before its first edit a forget writes what
it forgets into ``<agent>/.forgetting.json`` (owner-only, never indexed, never pushed to
a store of record), and deletes the file once the index has synced:

* while the file is there, a sync never takes its items for lost (:func:`pending_ids`);
* opening the workspace finishes a forget the file names (``Memory.finish_forgets``):
  the same edits again (each is idempotent), the index synced, then the file removed.

A forget also takes its items and text out of the copies under ``.corrupt/``
(:func:`scrub_corrupt`): a ``*.lost.*`` copy loses the forgotten facts (and goes when
none is left); any other kept copy has the text redacted as the Markdown is.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

from kronika.core.model import MemoryItem
from kronika.core.redaction import MARKER, Phrases
from kronika.core.serialize import item_from_dict, item_to_dict
from kronika.stores.markdown.atomic import atomic_write_text
from kronika.stores.markdown.facts import brain
from kronika.stores.markdown.layout import CORRUPT_DIR

JOURNAL = ".forgetting.json"


@dataclass(frozen=True, slots=True)
class Pending:
    """A forget written down but not finished: its items, phrases and kept ids."""

    items: tuple[MemoryItem, ...]
    phrases: tuple[str, ...]
    keep: tuple[str, ...]


def begin(
    folder: Path, items: Sequence[MemoryItem], phrases: Sequence[str], keep: Sequence[str]
) -> None:
    """Write the forget down before its first edit (atomically, owner-only)."""
    data = {
        "items": [item_to_dict(it) for it in items],
        "phrases": list(phrases),
        "keep": list(keep),
    }
    atomic_write_text(folder / JOURNAL, json.dumps(data, ensure_ascii=False))
    (folder / JOURNAL).chmod(0o600)


def finish(folder: Path) -> None:
    """The forget is done and the index synced: the file goes."""
    (folder / JOURNAL).unlink(missing_ok=True)


def pending(folder: Path) -> Pending | None:
    """The forget ``folder``'s journal names, if any (``None`` for a torn one: a kill
    while it was written, before any edit)."""
    try:
        data = json.loads((folder / JOURNAL).read_text(encoding="utf-8"))
        items = tuple(item_from_dict(d) for d in data["items"])
        return Pending(items, tuple(map(str, data["phrases"])), tuple(map(str, data["keep"])))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def pending_ids(folder: Path) -> set[str]:
    """The ids of the items a forget not yet finished is removing."""
    found = pending(folder)
    return set() if found is None else {it.id for it in found.items}


def scrub_corrupt(
    folder: Path, agent: str, tenant: str, ids: set[str], pattern: Phrases | None
) -> int:
    """Take the forgotten items and text out of ``folder/.corrupt/``; returns how many
    copies changed."""
    corrupt = folder / CORRUPT_DIR
    if not corrupt.is_dir():
        return 0
    changed = 0
    for copy in sorted(p for p in corrupt.iterdir() if p.is_file()):
        try:
            text = copy.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue  # not text: no Markdown was kept there
        new = _without(copy.name, agent, tenant, text, ids)
        if new is not None and pattern is not None:
            new = pattern.sub(MARKER, new)
        if new == text:
            continue
        changed += 1
        if new is None:
            copy.unlink(missing_ok=True)
        else:
            atomic_write_text(copy, new)
    return changed


def _without(name: str, agent: str, tenant: str, text: str, ids: set[str]) -> str | None:
    """A ``<fact file>.lost.*`` copy without the facts ``ids`` names (``None``: none
    left); any other copy as it is."""
    base, sep, _ = name.partition(".lost.")
    spec = next((s for s in brain.FACT_FILES if s.path == PurePosixPath(base).name), None)
    if sep and spec is None:
        return _without_rows(text, ids)
    if not sep or spec is None:
        return text
    parsed = brain.parse_facts(text, spec=spec, agent=agent, tenant=tenant, mtime=datetime.now(UTC))
    kept = [it for it in parsed.items if it.id not in ids]
    if len(kept) == len(parsed.items):
        return text
    return brain.render_facts_document(spec, kept) if kept else None


def _without_rows(text: str, ids: set[str]) -> str | None:
    """A JSON copy of lost turns or notes (:func:`kronika.engine.lost.keep_lost`) without
    the items ``ids`` names (``None``: none left); text that is not such a copy as it is."""
    try:
        data = json.loads(text)
    except ValueError:
        return text
    rows = data.get("items") if isinstance(data, dict) else None
    if not isinstance(rows, list):
        return text
    kept = [row for row in rows if not (isinstance(row, dict) and row.get("id") in ids)]
    if len(kept) == len(rows):
        return text
    if not kept:
        return None
    return json.dumps({**data, "items": kept}, ensure_ascii=False, indent=1)


__all__ = ["JOURNAL", "Pending", "begin", "finish", "pending", "pending_ids", "scrub_corrupt"]
