"""``kronika doctor --fix``: repair what :func:`kronika.engine.doctor.examine` found.

The index is mended last, so it reads the repaired files. A damaged file is always
copied aside before it is changed (``.corrupt/`` for Markdown, ``audit.jsonl.damaged-…``
for the audit trail); a copy of lost facts that was put back is renamed ``….restored``
so it is never put back twice. A key with two current values needs a person to choose:
it is left, and said.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from kronika.engine.doctor import Examined, audit_lines
from kronika.engine.doctor_held import check_held, mend_held
from kronika.engine.lost import put_back, write_back
from kronika.engine.write_back import LOST_WITH_LESSONS
from kronika.stores import held
from kronika.stores.markdown.facts import brain
from kronika.stores.markdown.files import read_source, write_text
from kronika.stores.markdown.layout import SourceKind, classify
from kronika.stores.markdown.meta import decode_meta, split_meta, split_torn
from kronika.stores.markdown.workspace import MarkdownWorkspace
from kronika.stores.private import tighten_modes, write_private_bytes
from kronika.stores.sqlite.recovery import move_aside


def set_aside_torn_audit_lines(path: Path, now: datetime | None = None) -> Path | None:
    """Keep the audit trail as it was in ``audit.jsonl.damaged-<UTC stamp>`` and rewrite
    it with its readable lines only, ended; returns the copy (``None``: nothing to do)."""
    if not path.is_file():
        return None
    raw = path.read_bytes()
    kept = [line for _n, line, readable in audit_lines(path) if readable]
    fixed = b"".join(line + b"\n" for line in kept)
    if fixed == raw:
        return None
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%S%fZ")
    copy = path.with_name(f"{path.name}.damaged-{stamp}")
    write_private_bytes(copy, raw)
    pending = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    write_private_bytes(pending, fixed)
    os.replace(pending, path)
    held.write_held(path.parent, path.name, held.Held(size=len(fixed)))
    return copy


def restamp_torn_metadata(workspace: MarkdownWorkspace, agent: str, path: str) -> int:
    """Write the metadata comments of a Brain or archive file's torn lines whole again;
    returns how many. Each such fact is rewritten from what was read of it (its text,
    and the whole tokens of its comment); what was lost takes the values a fact without
    metadata gets. ``history.md`` is left alone: its times are the record itself."""
    if path not in (brain.BRAIN.path, brain.ARCHIVE.path):
        return 0
    read = read_source(workspace.agent_dir(agent), path)
    if read is None:
        return 0
    lines = read.text.splitlines()
    parsed = workspace.parse_source(agent, path)
    torn = [
        item
        for item in parsed.items
        if item.provenance.line and _torn_line(lines[item.provenance.line - 1])
    ]
    for item in torn:
        workspace.update_fact(agent, item)
    return len(torn)


def _torn_line(line: str) -> bool:
    _visible, body = split_meta(line)
    if body is None:
        return split_torn(line) is not None
    try:
        decode_meta(body)
    except ValueError:
        return True
    return False


def _put_back_lost(workspace: MarkdownWorkspace, examined: Examined) -> list[str]:
    """Write back what files lost at once: from the index, or from the copies kept
    aside (each copy is marked used up, never put back a second time)."""
    done: list[str] = []
    for (agent, path), items in sorted(examined.lost.items()):
        back = write_back(workspace, agent, path, items)
        if back:
            done.append(f"{agent}/{path}: put back {back} lost item(s) from the index")
        if back < len(items):
            done.append(
                f"{agent}/{path}: {len(items) - back} lost item(s) could not be written back"
                " (their text is kept under .corrupt/: copy it back by hand)"
            )
        if classify(path) is SourceKind.LESSONS and back:
            done.append(f"{agent}/{path}: {LOST_WITH_LESSONS}")
    for kept in examined.kept:
        back = put_back(workspace, kept)
        if back:
            done.append(f"{kept.agent}/{kept.path}: put back {back} lost item(s) from {kept.copy}")
        if kept.copy.exists():  # not all of it could be placed: it stays, and is said
            done.append(
                f"{kept.agent}/{kept.path}: {len(kept.items) - back} lost item(s) could not be"
                f" written back; their text is in {kept.copy}: copy it back by hand, then"
                " delete the copy"
            )
    return done


def repair(
    workspace: MarkdownWorkspace,
    examined: Examined,
    *,
    audit_path: Path,
    home: Path,
    rebuild_index: Callable[[], str],
    sync_index: Callable[[], None],
    finish_forgets: Callable[[], object] | None = None,
) -> list[str]:
    """Do what can be done about ``examined``'s findings; returns what was done, in
    plain words. The index is mended last, so it reads the repaired files."""
    done: list[str] = []
    checks = {f.check for f in examined.findings}
    damaged = {f.where for f in examined.findings if f.check == "files"}
    for where in sorted(damaged):
        agent, _, path = where.partition("/")
        folder = workspace.agent_dir(agent)
        read = read_source(folder, path)  # keeps a copy of damaged bytes first
        if read is not None and read.warnings:
            write_text(folder / path, read.text)
            done.append(f"{where}: wrote the readable text back (the original is kept)")
        restamped = restamp_torn_metadata(workspace, agent, path)
        if restamped:
            done.append(f"{where}: wrote {restamped} torn metadata comment(s) whole again")
    done += _put_back_lost(workspace, examined)
    markdown_changed = bool(done)
    if "audit" in checks:
        copy = set_aside_torn_audit_lines(audit_path)
        if copy is not None:
            done.append(f"{audit_path.name}: unreadable lines set aside; the original is {copy}")
    for finding in examined.findings:
        if finding.check == "copies":
            (home / finding.where).unlink(missing_ok=True)
            done.append(f"{finding.where}: deleted the broken saved copy")
    for finding in examined.findings:
        if finding.check == "server":
            aside = move_aside(home / finding.where)
            done.append(f"{finding.where}: moved aside to {aside}; a new one is made when needed")
    # after the damaged server files were moved aside: what they held is checked anew
    for where in sorted({f.where for f in check_held(home, workspace.agents())}):
        done.append(mend_held(home, where))
    if any(f.check == "permissions" and f.repair for f in examined.findings):
        changed = tighten_modes(home)
        done.append(f"permissions: {len(changed)} file(s) and folder(s) now yours alone")
    if any(f.where == "index.sqlite" for f in examined.findings):
        done.append(rebuild_index())
    elif markdown_changed or "index" in checks:
        sync_index()
        done.append("index: read the changed files again")
    rewrites = [f for f in examined.findings if f.check == "forget" and f.repair]
    if rewrites and finish_forgets is not None:  # after the index is mended
        finish_forgets()
        done.append(f"forget: ran the rewrite after {len(rewrites)} forget(s)")
    return done
