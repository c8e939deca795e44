"""``kronika doctor``: check a workspace and its index, explain each finding, repair.

Each check reads what is on disk and returns :class:`Finding` values in plain words,
each with the fix. The checks:

* ``files``: every Markdown file reads as UTF-8 without NUL bytes and parses; a
  metadata comment is whole (not cut off by a torn write) and readable.
* ``history``: a single-valued key has exactly one current value, and its values'
  validity intervals neither overlap nor run backwards (history and Brain together).
* ``audit``: every line of ``audit.jsonl`` is a whole entry, the last one ended.
* ``index``: the index holds exactly the items the Markdown holds (ids per file), no
  file lost items at once, or holds them cut short or garbled, since it was indexed
  (:mod:`kronika.engine.lost`), and SQLite's own ``PRAGMA integrity_check`` passes.
* ``files`` again: no copy of lost items kept under ``.corrupt/`` holds an item that is
  in no file (found on every run until it is put back or the copy deleted).
* ``server``: the server's ``keys.sqlite`` and ``server-jobs.sqlite`` are whole
  (:mod:`kronika.engine.doctor_server`).
* ``held``: ``kronika.toml``, the keys, the job records, the audit trail and each
  agent's ``proposals.md`` still hold what kronika recorded they held — a file gone or
  emptied reads as one never made (:mod:`kronika.engine.doctor_held`).
* ``forget``: no rewrite after a forget is still due (PostgreSQL keeps a forget's
  deleted rows in its table files and WAL until the rewrite runs: a worker still
  forgetting, or a rewrite that met a table locked; docs/postgres-forget.md).
* ``copies``: the copies of the index's snapshots saved beside it are whole.
* ``permissions``: every file is readable and writable by its owner, and no one else.

:func:`kronika.engine.repair.repair` (``--fix``) mends what it can. Nothing here
changes a file, but reading a damaged one keeps a copy of it (``.corrupt/``).
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kronika.core.model import MemoryItem
from kronika.engine.doctor_held import check_held
from kronika.engine.doctor_server import check_server_files
from kronika.engine.findings import PROBLEM, WARNING, Finding
from kronika.engine.lost import (
    KeptCopy,
    cut_inside_a_line,
    garbled,
    kept_copies,
    lost_at_once,
    worse,
)
from kronika.ports import IndexSources, IndexUpkeep, ItemIndex
from kronika.stores.audit import parse_line
from kronika.stores.markdown.files import decode
from kronika.stores.markdown.layout import IDENTITY, PROPOSALS, SourceKind, classify
from kronika.stores.markdown.workspace import MarkdownWorkspace
from kronika.stores.private import loose_modes

__all__ = ["PROBLEM", "WARNING", "Examined", "Finding", "audit_lines", "examine"]


@dataclass(frozen=True, slots=True)
class Examined:
    """What :func:`examine` looked at and found; ``lost`` maps (agent, path) to the
    items a file lost (or holds damaged) that the index still holds, ``kept`` the
    copies of lost items under ``.corrupt/`` still in no file."""

    findings: tuple[Finding, ...]
    counts: dict[str, int]
    lost: dict[tuple[str, str], tuple[MemoryItem, ...]] = field(default_factory=dict)
    kept: tuple[KeptCopy, ...] = ()

    @property
    def healthy(self) -> bool:
        return not any(f.severity == PROBLEM and not f.fixed for f in self.findings)


def examine(
    workspace: MarkdownWorkspace, index: ItemIndex, *, audit_path: Path, home: Path
) -> Examined:
    """Every check, read-only; see the module docstring."""
    findings: list[Finding] = []
    counts: dict[str, int] = defaultdict(int)
    lost: dict[tuple[str, str], tuple[MemoryItem, ...]] = {}
    kept: list[KeptCopy] = []
    for agent in workspace.agents():
        files = workspace.list_sources(agent)
        counts["agents"] += 1
        counts["files"] += len(files)
        markdown: dict[str, dict[str, str]] = {}
        for source in files:
            findings += _check_bytes(workspace, agent, source.path)
            parsed = workspace.parse_source(agent, source.path)
            markdown[source.path] = {item.id: item.content for item in parsed.items}
            counts["items"] += len(parsed.items)
            findings += [_torn(agent, source.path, text) for text in parsed.damage]
        for other in (IDENTITY, PROPOSALS):  # read whole, never indexed
            if (workspace.agent_dir(agent) / other).is_file():
                findings += _check_bytes(workspace, agent, other)
        findings += _check_history(workspace, agent)
        findings += _check_index(index, agent, markdown, lost, workspace.agent_dir(agent))
        findings += _check_kept_copies(workspace, agent, lost, kept)
    findings += _check_sqlite(index)
    findings += _check_rewrites(index)
    findings += check_server_files(home)
    findings += check_held(home, workspace.agents())
    findings += _check_audit(audit_path, counts)
    findings += _check_copies(home)
    findings += _check_permissions(home)
    return Examined(tuple(findings), dict(counts), lost, tuple(kept))


# ----------------------------------------------------------------------- checks
def _check_bytes(workspace: MarkdownWorkspace, agent: str, path: str) -> list[Finding]:
    folder = workspace.agent_dir(agent)
    _text, problem = decode((folder / path).read_bytes())
    if problem is None:
        return []
    return [
        Finding(
            "files",
            PROBLEM,
            f"{agent}/{path}",
            f"the file is damaged ({problem}); kronika reads the rest of it and replaces "
            "the unreadable bytes",
            "a copy of the original is kept under .corrupt/; compare it with the file and "
            "edit back what was lost",
            "write the readable text back, so the file is valid again (the copy stays)",
        )
    ]


def _torn(agent: str, path: str, text: str) -> Finding:
    if classify(path) is not SourceKind.FACTS:  # a broken header of a session or summary
        return Finding(
            "files",
            PROBLEM,
            f"{agent}/{path}",
            text,
            "mend the header by hand from the copy kept in .corrupt/ (named above); until "
            "then the rest of the file is used",
        )
    return Finding(
        "files",
        PROBLEM,
        f"{agent}/{path}",
        text,
        "the fact itself was read; its metadata (id, times, importance) is partly lost",
        "write the metadata comment whole again (what was lost gets today's defaults)",
    )


def _check_history(workspace: MarkdownWorkspace, agent: str) -> list[Finding]:
    findings: list[Finding] = []
    current = [f for f in workspace.brain_facts(agent) if f.key]
    current_ids = {f.id for f in current}
    versions: dict[str, list[MemoryItem]] = defaultdict(list)
    for item in [*current, *workspace.fact_history(agent)]:
        if item.key and not item.multi:
            versions[item.key.casefold()].append(item)
    for key, items in sorted(versions.items()):
        now = [i for i in items if i.id in current_ids]
        if len(now) > 1:
            values = "; ".join(f"{i.value} [{i.id}]" for i in now)
            findings.append(
                Finding(
                    "history",
                    PROBLEM,
                    f"{agent}/brain.md",
                    f"the single-valued key {key!r} has {len(now)} current values: {values}",
                    "keep the right one: `kronika forget ID` the others, or `kronika remember "
                    f"--key {key} VALUE` again",
                )
            )
        findings += _check_validity(agent, key, items)
    return findings


def _check_validity(agent: str, key: str, items: Sequence[MemoryItem]) -> list[Finding]:
    dated = sorted((i for i in items if i.valid_from), key=lambda i: (i.valid_from, i.id))
    wrong: list[str] = []
    for item in dated:
        if item.valid_to is not None and item.valid_from and item.valid_to < item.valid_from:
            wrong.append(f"{item.id} ends before it starts")
    for a, b in zip(dated, dated[1:], strict=False):
        end = a.valid_to
        if end is None or (b.valid_from is not None and end > b.valid_from):
            wrong.append(f"{a.id} is still valid when {b.id} begins")
    if not wrong:
        return []
    return [
        Finding(
            "history",
            PROBLEM,
            f"{agent}/history.md",
            f"the history of key {key!r} does not add up: " + "; ".join(wrong),
            "`kronika history KEY` shows the values; correct the from=/to= times of "
            "history.md by hand, or forget the wrong value",
        )
    ]


def _check_index(
    index: IndexSources,
    agent: str,
    markdown: dict[str, dict[str, str]],
    lost: dict[tuple[str, str], tuple[MemoryItem, ...]],
    folder: Path,
) -> list[Finding]:
    findings: list[Finding] = []
    indexed = set(index.source_states(agent))
    differ = sorted(p for p in markdown if p not in indexed)
    for path in sorted(indexed):
        held = index.source_items(agent, path)
        now = markdown.get(path, {})
        if {item.id for item in held} != set(now) and path not in differ:
            differ.append(path)
        cut = cut_inside_a_line(folder / path)
        damaged = cut or garbled((i.content for i in held), now.values())
        missing = [item for item in held if item.id not in now]
        torn = [i for i in held if i.id in now and worse(now[i.id], i.content, cut=cut)]
        if torn or lost_at_once(classify(path), len(held), len(missing), len(now), damaged=damaged):
            gone = (*missing, *torn)
            lost[(agent, path)] = gone
            findings.append(_lost_since_indexed(agent, path, len(gone), len(held)))
    if differ:
        shown = ", ".join(differ[:5]) + (" …" if len(differ) > 5 else "")
        findings.append(
            Finding(
                "index",
                WARNING,
                f"{agent}/",
                f"the index is behind the Markdown for {len(differ)} file(s): {shown} "
                "(edited by hand? the next command catches up)",
                "`kronika index sync` (or any command) reads them again",
                "read the changed files into the index",
            )
        )
    return findings


def _lost_since_indexed(agent: str, path: str, gone: int, held: int) -> Finding:
    return Finding(
        "index",
        PROBLEM,
        f"{agent}/{path}",
        f"the file lost {gone} of its {held} items since kronika last read it (truncated, "
        "emptied or deleted?); the index still holds them",
        "if you did not delete them yourself, `kronika doctor --fix` puts back what it can "
        "from the index",
        "put the lost items back into the file from the index's copy",
    )


def _check_kept_copies(
    workspace: MarkdownWorkspace,
    agent: str,
    lost: dict[tuple[str, str], tuple[MemoryItem, ...]],
    kept: list[KeptCopy],
) -> list[Finding]:
    """Items kept aside when a file lost them at once, still in no file: found on every
    run until they are put back (or the copy is deleted)."""
    findings = []
    for copy in kept_copies(workspace, agent):
        if (agent, copy.path) in lost:  # the index still holds them: said above
            continue
        kept.append(copy)
        what = (
            f"{len(copy.items)} item(s) that {copy.path} lost at once or holds damaged "
            f"(truncated, emptied, deleted or overwritten) are kept in {copy.copy} and are "
            "in no file whole"
        )
        fix = (
            "if you did not delete them yourself, `kronika doctor --fix` puts them back (what "
            "it cannot place stays in the copy: copy it back by hand, then delete the copy)"
        )
        repair = "put the kept items back into their file"
        findings.append(Finding("files", PROBLEM, f"{agent}/{copy.path}", what, fix, repair))
    return findings


def _check_sqlite(index: IndexUpkeep) -> list[Finding]:
    problems = index.integrity_problems(full=True)
    if not problems:
        return []
    shown = "; ".join(problems[:3]) + (" …" if len(problems) > 3 else "")
    return [
        Finding(
            "index",
            PROBLEM,
            "index.sqlite",
            f"SQLite finds the index file damaged: {shown}",
            "`kronika index rebuild` moves it aside and rebuilds it from the Markdown (nothing "
            "is lost: the index is derived)",
            "move the damaged index aside and rebuild it from the Markdown",
        )
    ]


def _check_rewrites(index: ItemIndex) -> list[Finding]:
    """The rewrites after a forget noted as due and not done (an index that keeps a
    forget's deleted rows until its files are rewritten says which, and whose)."""
    pending: Callable[[], list[tuple[str, str, str]]] | None = getattr(
        getattr(index, "inner", index), "rewrites_pending", None
    )
    found = []
    for token, noted, whose in pending() if pending is not None else []:
        if whose == "a running worker":
            what, fix, repair = (
                "a forget by a running worker, begun at {}, is not yet followed by the"
                " rewrite of the database's files",
                "none needed: the rewrite runs when that forget ends, or when the memory"
                " is next opened if that worker stops first",
                None,
            )
        else:
            what, fix, repair = (
                "the rewrite after a forget noted at {} has not run whole (a table was"
                " locked, or its worker stopped)",
                "`kronika doctor --fix` runs it; so does the next forget",
                "run the rewrite after the forget",
            )
        found.append(
            Finding(
                "forget",
                WARNING,
                token,
                what.format(noted) + ": the forgotten text stays in PostgreSQL's table"
                " files and WAL until it runs",
                fix,
                repair,
            )
        )
    return found


def audit_lines(path: Path) -> Iterator[tuple[int, bytes, bool]]:
    """``(line number, bytes, readable)`` for every non-blank line of the audit trail."""
    if not path.is_file():
        return
    for number, raw in enumerate(path.read_bytes().split(b"\n"), 1):
        if raw.strip():
            yield number, raw, parse_line(raw.decode("utf-8", errors="replace")) is not None


def _check_audit(path: Path, counts: dict[str, int]) -> list[Finding]:
    torn = []
    for number, _raw, readable in audit_lines(path):
        counts["audit_entries"] += 1
        if not readable:
            torn.append(number)
    unended = path.is_file() and path.stat().st_size > 0 and not _ends_line(path)
    if not torn and not unended:
        return []
    lines = ", ".join(map(str, torn[:5])) + (" …" if len(torn) > 5 else "")
    what = (
        f"{len(torn)} line(s) of the audit trail cannot be read (line {lines}): torn "
        "writes or hand edits; they are skipped"
        if torn
        else "the audit trail's last line is not ended"
    )
    return [
        Finding(
            "audit",
            PROBLEM,
            path.name,
            what,
            "the readable entries are all used; the torn bytes hold no whole entry",
            "set the unreadable lines aside in a copy and end the file with a whole line",
        )
    ]


def _ends_line(path: Path) -> bool:
    with path.open("rb") as handle:
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) == b"\n"


def _check_copies(home: Path) -> list[Finding]:
    findings = []
    described_files = (home / f"index.sqlite.{kind}.json" for kind in ("vectors", "bm25"))
    for described in (d for d in described_files if d.is_file()):
        try:
            meta = json.loads(described.read_text(encoding="utf-8"))
            entries = [*dict(meta["mapped"]).values(), meta["arrays"]]
            for name, size in entries:
                if (home / str(name)).stat().st_size != int(size):
                    raise ValueError(f"{name} is of another size")
        except (OSError, ValueError, KeyError, TypeError) as exc:
            findings.append(
                Finding(
                    "copies",
                    WARNING,
                    described.name,
                    f"a saved copy of the index's snapshot is broken ({exc}); it is ignored "
                    "and the index is read instead (slower to start)",
                    "delete it; the next large recall saves a new one",
                    "delete the broken copy",
                )
            )
    return findings


def _check_permissions(home: Path) -> list[Finding]:
    unusable: list[str] = []
    for path in [home, *home.rglob("*")]:
        if path.is_symlink():
            continue
        wanted = os.R_OK | os.W_OK | (os.X_OK if path.is_dir() else 0)
        if not os.access(path, wanted):
            unusable.append(str(path.relative_to(home)) or ".")
    shared = [str(path.relative_to(home)) or "." for path, _mode in loose_modes(home)]
    findings = []
    if unusable:
        findings.append(
            Finding(
                "permissions",
                PROBLEM,
                ", ".join(unusable[:5]),
                f"{len(unusable)} file(s) or folder(s) cannot be read or written by you",
                "give yourself access (`chmod u+rw`, folders `u+rwx`)",
            )
        )
    if shared:
        findings.append(
            Finding(
                "permissions",
                WARNING,
                ", ".join(shared[:5]) + (" …" if len(shared) > 5 else ""),
                f"{len(shared)} file(s) or folder(s) can be used by other users of this "
                "computer; memory may hold private things",
                "`chmod -R go-rwx` the workspace",
                "take the group's and others' access away",
            )
        )
    return findings
