"""A working copy brought up to date with the record (a part of
:class:`~kronika.stores.working_copy.WorkingCopy`): each document written since the
change number the copy last saw is written into the folder with the record's
modification time, or removed from it. A document that only had text added comes as
that text, put in place in a file that is, byte for byte, the record's previous
version; a file edited here meanwhile is kept aside under ``.corrupt/`` first."""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Callable
from pathlib import Path

from kronika.errors import InvalidAgentName
from kronika.ports import RecordDocument, StoreOfRecord
from kronika.stores.copy_state import Copy, CopyState, agent_folder, digest, file_state
from kronika.stores.manifest import quick_state
from kronika.stores.markdown.appending import extend_in_place
from kronika.stores.markdown.atomic import atomic_write_text
from kronika.stores.markdown.files import keep_copy
from kronika.stores.markdown.workspace import MarkdownWorkspace


class Puller:
    """Writes the record's changes into the folder (see the module docstring);
    ``saved`` is called once files changed, to save what the copy now holds."""

    def __init__(
        self,
        home: Path,
        workspace: MarkdownWorkspace,
        record: StoreOfRecord,
        state: CopyState,
        saved: Callable[[], None],
    ) -> None:
        self.home = home
        self.workspace = workspace
        self.record = record
        self.state = state
        self._saved = saved

    def pull(self, before: int | None = None, *, ahead: list[RecordDocument] | None = None) -> int:
        """Bring the folder up to date with the record (call it holding the lock), or
        with its changes before change ``before``; returns how many files changed here.
        ``ahead``: the record's changes since this copy's last, read already (with the
        lock, :meth:`~kronika.ports.StoreOfRecord.hold`).

        A document that only had text added since this copy last saw it comes as
        that text (``grown``): text appended is added to the file when the file is,
        byte for byte, the record's previous version (:func:`extend_in_place`), and
        text that went over a span of an archive is put in its place the same way
        (:meth:`~kronika.stores.markdown.facts.write.FactWriter.splice_pulled`); any
        other document, and one whose file is not that, is written whole."""
        since = self.state.change
        changed: set[tuple[str, str]] = set()
        whole: set[tuple[str, str]] = set()
        found = (
            ahead
            if ahead is not None and before is None
            else self.record.changes(since, grown=since > 0, before=before)
        )
        for doc in found:
            self.state.change = max(self.state.change, doc.change)
            key = (doc.agent, doc.path)
            try:
                folder = agent_folder(self.home, doc.agent)
            except InvalidAgentName:
                continue  # a name this system cannot hold as a folder: never written here
            if key in whole:
                continue  # a later part of a file to be written whole
            if doc.appends is None:
                self._write_pulled(doc, folder)
            elif not self._grow_pulled(doc, folder):
                whole.add(key)
                continue
            changed.add(key)
        if whole:  # the files not as the record was before its new text: written whole
            latest = {(d.agent, d.path): d for d in self.record.changes(since, before=before)}
            for key in sorted(whole):
                if key in latest:
                    self._write_pulled(latest[key], agent_folder(self.home, key[0]))
                    changed.add(key)
        if changed:
            self._saved()
        return len(changed)

    def place(self, doc: RecordDocument, file: Path) -> None:
        """Write the record's ``doc`` as ``file``, with the record's time (``text``
        ``None``: remove it)."""
        if doc.text is None:
            with contextlib.suppress(FileNotFoundError):
                file.unlink()
            self.state.copies.pop((doc.agent, doc.path), None)
            return
        atomic_write_text(file, doc.text)
        os.utime(file, ns=(doc.modified_ns, doc.modified_ns))
        state = file_state(file)
        if state is not None:
            self.state.copies[(doc.agent, doc.path)] = state

    def _write_pulled(self, doc: RecordDocument, folder: Path) -> None:
        """Write the record's whole ``doc`` into the folder (or remove it); a file edited
        here meanwhile is kept aside first."""
        file = folder / doc.path
        known = self.state.copies.get((doc.agent, doc.path))
        here = file_state(file)
        if (
            here is not None
            and here.sha256 != (known.sha256 if known else None)
            and here.sha256 != digest(doc.text)
            and not _pull_cut_short(file, known, doc.text)
        ):
            self._keep_conflict(doc.agent, folder, doc.path, file)
        self.place(doc, file)

    def _grow_pulled(self, doc: RecordDocument, folder: Path) -> bool:
        """Put the text ``doc`` added in the record in its file (:meth:`_extend_pulled`,
        :meth:`_splice_pulled`); whether it could."""
        assert doc.appends is not None
        if doc.appends.at is None:
            return self._extend_pulled(doc, folder)
        return self._splice_pulled(doc, folder)

    def _splice_pulled(self, doc: RecordDocument, folder: Path) -> bool:
        """Put the text that went over a span of ``doc`` in the record in its place in
        the file, if this copy holds the record's previous version and the file is still
        that (its time and size as this copy left them, its kept parse hashing so);
        whether it was. The file is written whole (atomically) with the record's time,
        and its kept parse is spliced, not made again."""
        splice = doc.appends
        assert splice is not None and splice.at is not None and doc.text is not None
        known = self.state.copies.get((doc.agent, doc.path))
        file = folder / doc.path
        if (
            known is None
            or known.sha256 != splice.base_sha256
            or quick_state(file) != (known.mtime_ns, known.size)
        ):
            return False
        stat = self.workspace.fact_writer.splice_pulled(
            doc.agent,
            doc.path,
            (splice.base_sha256, splice.sha256),
            (splice.at, splice.cut, doc.text),
            doc.modified_ns,
        )
        if stat is None:
            return False
        self.state.copies[(doc.agent, doc.path)] = Copy(
            stat.st_mtime_ns, stat.st_size, splice.sha256
        )
        return True

    def _extend_pulled(self, doc: RecordDocument, folder: Path) -> bool:
        """Add the text appended to ``doc`` in the record to its file, if this copy
        holds the record's previous version and the file is still that (its time and
        size as this copy left them, its bytes hashing so); whether it was."""
        assert doc.appends is not None and doc.text is not None
        known = self.state.copies.get((doc.agent, doc.path))
        file = folder / doc.path
        if (
            known is None
            or known.sha256 != doc.appends.base_sha256
            or quick_state(file) != (known.mtime_ns, known.size)
        ):
            return False
        # an archive or history: its kept parse knows its bytes, and is extended too
        entry = self.workspace.fact_writer.kept_before_pull(
            doc.agent, doc.path, doc.appends.base_sha256
        )
        kept = None if entry is None else (entry.digest, len(entry.lines))
        extended = extend_in_place(
            file, doc.text, doc.appends.base_sha256, doc.appends.sha256, doc.modified_ns, kept
        )
        if extended is None:
            return False
        stat = extended.stat
        if entry is not None:
            self.workspace.fact_writer.facts_pulled(
                doc.agent, doc.path, entry, doc.text, stat, own=extended.own
            )
        self.state.copies[(doc.agent, doc.path)] = Copy(
            stat.st_mtime_ns, stat.st_size, doc.appends.sha256
        )
        return True

    def _keep_conflict(self, agent: str, folder: Path, path: str, file: Path) -> None:
        kept = keep_copy(folder, f"{path}.conflict", file.read_bytes())
        self.workspace.notes.append(
            f"{agent}/{path} was edited here while another worker changed it; the"
            f" record's version is used and the edited copy was kept at {folder / kept}"
        )


def _pull_cut_short(file: Path, known: Copy | None, text: str | None) -> bool:
    """Whether ``file`` is this copy's last version of its document (``known``) and the
    beginning of the text the record added to it since (``text``, the whole new
    version): a pull that was extending it in place and was stopped part way. Such a
    file holds nothing the record lacks, and no edit to keep aside."""
    if known is None or text is None:
        return False
    try:
        raw = file.read_bytes()
    except FileNotFoundError:
        return False
    return (
        len(raw) > known.size
        and hashlib.sha256(raw[: known.size]).hexdigest() == known.sha256
        and text.encode("utf-8").startswith(raw)
    )
