"""A file's appended turns or facts as a write of the store of record, read alone.

A working copy (:class:`~kronika.stores.working_copy.WorkingCopy`) pushes each file
that differs from what the record holds. A session file that only grew by turns this
process appended (:func:`~kronika.stores.markdown.appending.grown_since`) is sent as
its added bytes and the items of the added turns alone
(:class:`~kronika.ports.RecordAppend`): the bytes are read from where the record's
copy ends, the header from the file's first bytes, and nothing in between, so the push
costs the same whatever the session's length. The archive and the history of facts
grow the same way (:func:`grown_facts`): facts kronika appended to them since the
record's copy are sent as their bytes and items, however many facts the file holds,
and an archived fact kronika gave a new value as the lines it replaced
(:func:`spliced_facts`).
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from kronika.core.model import MemoryItem
from kronika.ports import RecordAppend, RecordDocument
from kronika.stores.markdown.appending import grown_since
from kronika.stores.markdown.facts.brain import ARCHIVE, BRAIN
from kronika.stores.markdown.layout import SourceKind, classify
from kronika.stores.markdown.session_appends import appended_turns, read_head
from kronika.stores.markdown.workspace import MarkdownWorkspace

HEAD_BYTES = 4096
"""Bytes read from a session file's start for its header (a longer one: sent whole)."""

State = tuple[int, int, str]
"""A file's modification time (ns), size and SHA-256."""


def grown_session(
    workspace: MarkdownWorkspace, agent: str, path: str, file: Path, size: int, sha256: str
) -> tuple[RecordDocument, list[MemoryItem], State] | None:
    """The document of the turns appended to session file ``file`` since it was
    ``size`` bytes hashing to ``sha256`` (the record's copy), the items of those turns
    and the file's state now; ``None`` when the file is no session file, changed in any
    other way, or the added bytes are not whole turns (send it whole)."""
    opened = _open_grown(file, size) if classify(path) is SourceKind.SESSION else None
    if opened is None:
        return None
    fd, stat = opened
    try:
        grown = grown_since(stat, size, sha256)
        if grown is None:
            return None
        text = _read_at(fd, size, stat.st_size - size).decode("utf-8")
        first = os.pread(fd, HEAD_BYTES, 0).decode("utf-8", errors="replace")
    except (OSError, UnicodeDecodeError):
        return None
    finally:
        os.close(fd)
    head = read_head(first, path=path, fallback_id=PurePosixPath(path).stem)
    if head is None:
        return None
    turns = appended_turns(
        text,
        grown.first_line,
        head,
        path=path,
        agent=agent,
        tenant=workspace.tenant_of(agent),
        importance=workspace.message_importance,
    )
    if turns is None:
        return None
    appends = RecordAppend(sha256, grown.digest)
    doc = RecordDocument(agent, path, text, stat.st_mtime_ns, appends=appends)
    return doc, turns, (stat.st_mtime_ns, stat.st_size, grown.digest)


def grown_facts(
    workspace: MarkdownWorkspace, agent: str, path: str, file: Path, size: int, sha256: str
) -> tuple[RecordDocument, list[MemoryItem], State] | None:
    """The document of the facts kronika appended to fact file ``file`` since it was
    ``size`` bytes hashing to ``sha256`` (the record's copy), those facts and the
    file's state now; ``None`` when the file is no fact file that grows at its end
    (the Brain is rewritten), or changed in any other way (send it whole).

    The facts are those of the file's kept parse
    (:meth:`~kronika.stores.markdown.workspace.MarkdownWorkspace.appended_facts`),
    checked against the file as it is before and after its added bytes are read."""
    grows = classify(path) is SourceKind.FACTS and path != BRAIN.path
    opened = _open_grown(file, size) if grows else None
    if opened is None:
        return None
    fd, stat = opened
    try:
        items = workspace.appended_facts(agent, path, sha256)
        digest = workspace.fact_file_hash(agent, path)
        if not items or digest is None:
            return None
        text = _read_at(fd, size, stat.st_size - size).decode("utf-8")
        if not _same(stat, os.stat(file)):
            return None
    except (OSError, UnicodeDecodeError):
        return None
    finally:
        os.close(fd)
    if workspace.fact_file_hash(agent, path) != digest:
        return None
    appends = RecordAppend(sha256, digest)
    doc = RecordDocument(agent, path, text, stat.st_mtime_ns, appends=appends)
    return doc, list(items), (stat.st_mtime_ns, stat.st_size, digest)


def spliced_facts(
    workspace: MarkdownWorkspace, agent: str, path: str, file: Path, sha256: str
) -> tuple[RecordDocument, list[MemoryItem], State] | None:
    """The document of the one place kronika's last rewrite changed the archive
    ``file`` since it hashed to ``sha256`` (the record's copy): an archived fact given
    a new value leaves a mark on its lines, and only those lines are sent, with the
    items they held and hold now and the file's state; ``None`` when the archive
    changed in any other way (send it whole). The text is the kept parse's
    (:meth:`~kronika.stores.markdown.workspace.MarkdownWorkspace.spliced_facts`), which
    is the file's while its status is the one the parse was made at."""
    if path != ARCHIVE.path:
        return None
    try:
        stat = os.stat(file)
    except OSError:
        return None
    found = workspace.spliced_facts(agent, path, sha256)
    if found is None or (found.mtime_ns, found.size) != (stat.st_mtime_ns, stat.st_size):
        return None
    appends = RecordAppend(sha256, found.sha256, found.at, found.cut, found.gone)
    doc = RecordDocument(agent, path, found.text, found.mtime_ns, appends=appends)
    return doc, list(found.added), (found.mtime_ns, found.size, found.sha256)


def _open_grown(file: Path, size: int) -> tuple[int, os.stat_result] | None:
    """``file`` open for reading and its status, when it is longer than ``size`` bytes
    (the caller closes it); else ``None``."""
    try:
        fd = os.open(file, os.O_RDONLY)
    except OSError:
        return None
    try:
        stat = os.fstat(fd)
    except OSError:
        os.close(fd)
        return None
    if stat.st_size <= size:
        os.close(fd)
        return None
    return fd, stat


def _same(one: os.stat_result, other: os.stat_result) -> bool:
    """The same file, unchanged between the two looks."""
    return (one.st_ino, one.st_size, one.st_mtime_ns, one.st_ctime_ns) == (
        other.st_ino,
        other.st_size,
        other.st_mtime_ns,
        other.st_ctime_ns,
    )


def _read_at(fd: int, offset: int, size: int) -> bytes:
    chunks: list[bytes] = []
    while size > 0:
        chunk = os.pread(fd, size, offset)
        if not chunk:
            raise OSError(f"the file ended {size} bytes early")
        chunks.append(chunk)
        offset += len(chunk)
        size -= len(chunk)
    return b"".join(chunks)
