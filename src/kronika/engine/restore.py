"""Putting a backup in place all at once, or not at all.

Everything an import changes — each agent's folder, ``audit.jsonl``, ``kronika.toml``
— is first written complete into a staging folder ``<home>/.kronika-import-<random>/``
(``new/`` mirrors the workspace). Then a plan naming each target is saved and the
targets are swapped in by renames, each old one moved to ``old/``. Once every rename is
done a ``done`` mark is written and the staging folder is removed.

A failure at any step undoes the renames made so far; a crash (kill -9, a power cut)
leaves the staging folder, and the next :func:`recover_imports` (run whenever a
workspace is opened) undoes an import that has no ``done`` mark or finishes clearing
one that has. Either way the workspace is as before the import or as after it.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from kronika.errors import WorkspaceError
from kronika.stores.lock import WorkspaceLock
from kronika.stores.markdown.atomic import atomic_write_text
from kronika.stores.markdown.workspace import MarkdownWorkspace
from kronika.stores.private import make_private_dir, write_private_bytes

STAGING_PREFIX = ".kronika-import-"
LOCK_FILE = ".kronika.lock"
_PLAN = "plan.json"
_DONE = "done"


@dataclass(frozen=True, slots=True)
class StagedFile:
    """A file to write into the staging folder: ``path`` relative to the workspace home,
    its text and (when known) its modification time in nanoseconds."""

    path: str
    text: str
    mtime_ns: int | None = None


class Staging:
    """One import's staging folder under ``home``."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.folder = home / f"{STAGING_PREFIX}{secrets.token_hex(6)}"
        self.new = self.folder / "new"
        make_private_dir(self.new)

    def agent(self, name: str, files: Iterable[StagedFile]) -> None:
        """Stage ``agents/<name>``: the folders every agent has, then ``files``
        (paths relative to the agent folder)."""
        workspace = MarkdownWorkspace(self.new)
        workspace.create_agent(name)
        folder = workspace.agent_dir(name)
        for made in (p for p in folder.rglob("*") if p.is_file()):
            made.unlink()  # identity and Brain templates: the backup says what is there
        for staged in files:
            _write(folder / staged.path, staged)

    def file(self, staged: StagedFile) -> None:
        _write(self.new / staged.path, staged)

    def probe_agent(self) -> dict[str, bytes]:
        """The files a new agent starts with, as ``create_agent`` makes them today."""
        workspace = MarkdownWorkspace(self.folder / "probe")
        workspace.create_agent("probe")
        return _files(workspace.agent_dir("probe"))

    def commit(self, targets: list[str]) -> None:
        """Swap every staged target (workspace-relative path) into place, or none."""
        _flush(self.new)
        plan = self.plan(targets)
        try:
            for step in plan:
                self.swap(step)
        except BaseException:
            _undo(self.home, self.folder)
            raise
        atomic_write_text(self.folder / _DONE, "")
        self.discard()

    def plan(self, targets: list[str]) -> list[tuple[str, bool]]:
        """Save what will be swapped, and whether each target exists now, before the
        first swap: what a recovery after a crash needs to undo the import."""
        plan = [(target, os.path.lexists(self.home / target)) for target in targets]
        steps = [{"target": target, "existed": existed} for target, existed in plan]
        atomic_write_text(self.folder / _PLAN, json.dumps(steps))
        return plan

    def swap(self, step: tuple[str, bool]) -> None:
        """Move one target aside (when it exists) and its staged copy into place."""
        target, existed = step
        if existed:
            _move(self.home / target, self.folder / "old" / target)
        _move(self.new / target, self.home / target)

    def discard(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def has_content(folder: Path, fresh: dict[str, bytes]) -> bool:
    """True when an agent folder holds more than a new agent's files, or other text."""
    return _files(folder) != fresh


def recover_interrupted_imports(home: Path) -> list[str]:
    """:func:`recover_imports` under the workspace lock, when a staging folder is there
    (opening a workspace calls this; an import in progress holds the lock throughout)."""
    if not home.is_dir() or not any(home.glob(f"{STAGING_PREFIX}*")):
        return []
    with WorkspaceLock(home / LOCK_FILE):
        return recover_imports(home)


def recover_imports(home: Path) -> list[str]:
    """Undo (or finish clearing) imports a crash interrupted; what was done, for a log.
    The caller holds the workspace lock."""
    done: list[str] = []
    if not home.is_dir():
        return done
    for folder in sorted(home.glob(f"{STAGING_PREFIX}*")):
        if not folder.is_dir():
            continue
        if (folder / _DONE).exists():
            done.append(f"finished clearing a completed import ({folder.name})")
        else:
            _undo(home, folder)
            done.append(f"undid an interrupted import ({folder.name})")
        shutil.rmtree(folder, ignore_errors=True)
    return done


def _undo(home: Path, folder: Path) -> None:
    """Put every target of ``folder``'s plan back as it was before the import."""
    try:
        plan = json.loads((folder / _PLAN).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return  # no plan saved: nothing was swapped yet
    for step in reversed(plan):
        target = str(step["target"])
        here, old, new = home / target, folder / "old" / target, folder / "new" / target
        if os.path.lexists(old):  # the original was moved aside: bring it back
            if os.path.lexists(here):
                _move(here, new)
            _move(old, here)
        elif not step["existed"] and os.path.lexists(here) and not os.path.lexists(new):
            _move(here, new)  # it came from the staging folder: send it back


def _write(path: Path, staged: StagedFile) -> None:
    # No temporary file and no fsync per file: a staged file is never read before the
    # whole folder is flushed (Staging.flush), and a crash before that discards it.
    try:
        make_private_dir(path.parent)
        write_private_bytes(path, staged.text.encode("utf-8"))
        if staged.mtime_ns is not None:
            os.utime(path, ns=(staged.mtime_ns, staged.mtime_ns))
    except OSError as exc:
        raise WorkspaceError(f"cannot write {path}: {exc}") from exc


def _flush(folder: Path) -> None:
    """Make everything written under ``folder`` durable before the first swap: one
    ``sync()`` where the system has it (thousands of fsyncs took 30 s for 3,000 files)."""
    if hasattr(os, "sync"):
        os.sync()
        return
    for path in folder.rglob("*"):  # pragma: no cover - systems without sync()
        if path.is_file():
            with open(path, "rb+") as handle:
                os.fsync(handle.fileno())


def _move(source: Path, target: Path) -> None:
    try:
        make_private_dir(target.parent)
        os.rename(source, target)
    except OSError as exc:
        raise WorkspaceError(f"cannot move {source} to {target}: {exc}") from exc
    with contextlib.suppress(OSError):
        fd = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }
