"""A workspace folder that is a working copy of a store of record (team mode).

The engine reads and writes a Markdown workspace; in team mode that folder is a copy
of the tenant's documents in a :class:`~kronika.ports.StoreOfRecord` (PostgreSQL).
:class:`WorkingCopy` is the write lock :class:`kronika.memory.Memory` holds around
every write and every sync:

- taking it takes this folder's file lock (processes sharing the folder), then the
  record's lock (every worker of the tenant), then brings the folder up to date: each
  document written since the change number this copy last saw is written into the
  folder (with the record's modification time) or removed from it. A session another
  worker only appended turns to since comes as those turns' bytes, added to the file
  in place when the file is, byte for byte, the record's previous version (else the
  document is fetched whole), so pulling a turn costs the same whatever the
  session's length;
- releasing it writes every Markdown file that differs from what the record holds
  (kronika's own writes, hand edits, files removed) back into the record in one
  transaction, with the items the workspace parses from them, then lets go. Which
  files changed since the last release the folder watch tells, where the system can
  (:mod:`~kronika.stores.folder_watch`); else every file of the held agents is
  looked at. A session
  file that only grew by this process's appended turns since the record took it is
  sent as its added bytes and turns alone (:class:`~kronika.ports.RecordAppend`), so
  saving a turn costs the same whatever the session's length; should the record hold
  another body after all, the file is sent whole.

So every read-modify-write happens on the newest documents and lands whole or not at
all: no update is lost, no history chain broken. The folder's files are written
without waiting for the disk (:func:`~kronika.stores.durable.copy_of_record`: a write
is acknowledged once the record has it), where the machine's boot can be told: the
manifest names the boot it was written in, and a copy whose manifest names another
(the machine crashed, taking what was not on disk) gives every file that is not, byte
for byte, the record's version as last seen that version again before it sends any.
A forget's edits, sent after they are made, are synced, and everything before them.
What this copy last saw of each file is kept in ``<home>/record.json``; the folder
can be thrown away at any time and is filled again from the record. A file edited
here by hand while another worker wrote the same document is kept aside under
``<agent>/.corrupt/`` (``.conflict``) and said in the notes; the record's version wins.
A file that looks damaged (not UTF-8, emptied, cut short inside a line, found by the
index to have lost items, or a fact or session file gone without kronika removing it)
is never pushed: the record's version is put back, the damaged file kept under
``.corrupt/`` (``.damaged``) and said.

A write the record refuses (the server gone, a lock it waited for too long) raises, and
leaves the folder as the record is: the files its push carried get the record's
versions back (the refused file kept under ``.corrupt/`` as ``.unsent``, and said),
at once, or when the record cannot be read then, before the next pull (a read's or a
write's). Else the next push would send the refused write after all, or a pull keep it
aside, and this worker's reads would show meanwhile what no other worker sees.

:class:`WorkingCopy` holds the lock, the push and the manifest; its named parts do the
rest over one :class:`~kronika.stores.copy_state.CopyState` (what the copy saw of the
record): :class:`~kronika.stores.copy_listing.Listing` (which files a push looks at),
:class:`~kronika.stores.copy_pull.Puller` (the pull) and
:class:`~kronika.stores.copy_repair.Repairs` (a damaged file put back).
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from kronika.core.model import MemoryItem
from kronika.errors import StaleAppend, StoreError
from kronika.ports import RecordDocument, StoreOfRecord, UndoneBatch
from kronika.stores.copy_listing import Listing
from kronika.stores.copy_pull import Puller
from kronika.stores.copy_repair import Repairs, looks_damaged, vanished
from kronika.stores.copy_state import Copy, CopyState, agent_folder, digest, file_state
from kronika.stores.durable import boot_id, copy_of_record, sync_tree
from kronika.stores.lock import Reentrant, WorkspaceLock
from kronika.stores.manifest import Documents, Manifest, Saved
from kronika.stores.markdown.files import keep_copy
from kronika.stores.markdown.layout import classify
from kronika.stores.markdown.workspace import MarkdownWorkspace
from kronika.stores.record_appends import grown_facts, grown_session, spliced_facts

MANIFEST = "record.json"
WRITING = "record.writing"
"""Made when a hold has pulled and removed when it ends: found by the next one, a hold
died between its edits and its push (:meth:`WorkingCopy._discard_torn`)."""
log = logging.getLogger(__name__)
_REFUSED = "the store of record refused a write of it, which is undone here too"
_RESTARTED = (
    "the machine restarted since this copy wrote it, and it is not the record's version;"
    " the record's is used"
)
_UNREADABLE = (
    "record.json could not be read, so no file of this copy is trusted, and this one is"
    " not the record's version; the record's is used"
)


class WorkingCopy(Reentrant):
    """The re-entrant write lock of a workspace that mirrors ``record``."""

    def __init__(self, home: Path, workspace: MarkdownWorkspace, record: StoreOfRecord) -> None:
        super().__init__()
        self.home = Path(home)
        self.workspace = workspace
        self.record = record
        self._file_lock = WorkspaceLock(self.home / ".kronika.lock")
        self._state = CopyState()  # what this copy saw of the record
        self._manifest = Manifest(self.home / MANIFEST)
        self._manifest_mark: tuple[object, object] | None = None
        self._scope: frozenset[str] | None = None  # the agents a hold is for (all: None)
        self._after: list[Callable[[], None]] = []  # to run once the record is let go
        self._unsent: set[tuple[str, str]] = set()  # files of a push the record refused
        self._fold: set[str] = set()  # agents a forget edited: their push folds the parts
        self._boot = boot_id()  # files written as a copy are trusted within this boot alone
        self._restarted = False  # the manifest was written in another boot: check the files
        self._written_in: str | None = None  # the boot the manifest read was written in
        self._fold_on_disk = False  # the manifest on disk names agents of _fold
        self._check_all = False  # a manifest lost to a crash: a forget's agents checked too
        self._copying = contextlib.ExitStack()  # a hold's files written as a copy
        # its parts: what a push looks at, the pull, damaged files put back
        self._listing = Listing(self.home / "agents", workspace, self._state)
        self._puller = Puller(self.home, workspace, record, self._state, self._save_manifest)
        self._repairs = Repairs(self.home, workspace, record, self._state)
        self._load_manifest()

    # -- the lock -------------------------------------------------------------------

    def _take(self) -> None:
        self._file_lock.__enter__()
        try:
            self._load_manifest()
            self._discard_torn()
            self._copying.enter_context(copy_of_record(self._as_copy()))
            self._boot_on_disk()
            # the changes since this copy's last are read with the lock: one round trip
            ahead = self.record.hold(self._scope, since=self._state.change)
            try:
                if self._unsent:  # a refused push the record could not be read after
                    self._put_back_unsent(raising=True)
                self._puller.pull(ahead=ahead)
                (self.home / WRITING).touch(mode=0o600)  # the hold's edits begin
            except BaseException:
                self.record.release()
                raise
        except BaseException:
            self._copying.close()
            self._file_lock.__exit__(None, None, None)
            raise

    def _give_back(self) -> None:
        after, self._after = self._after, []
        pushed = False
        try:
            self.push()
            pushed = True
        except BaseException:
            self._put_back_unsent(raising=False)  # the write did not happen here either
            raise
        finally:
            try:
                # what runs after a hold needs what it wrote in the record: not after a
                # failed push (a later sync brings the index up to date)
                self.record.release(_run_all(after) if after and pushed else None)
            finally:
                with contextlib.suppress(OSError):
                    (self.home / WRITING).unlink()
                self._copying.close()
                self._file_lock.__exit__(None, None, None)

    def after_release(self, run: Callable[[], None]) -> None:
        """Run ``run`` once this hold of one agent has pushed and let go of the record
        (still holding the folder's lock); at once outside a hold, inside a hold of all
        agents, or inside a hold this one is nested in (what the outer hold reads next
        must find it indexed) (:meth:`kronika.ports.WriteLock.after_release`)."""
        if self._depth != 1 or self._scope is None:
            run()
        else:
            self._after.append(run)

    def fold_with_push(self, agent: str) -> None:
        """Under the lock, before a forget edits ``agent``'s files: the push that sends
        its edits (this hold's, or the next hold of that agent's after a kill) folds
        the record's parts in the same transaction
        (:meth:`~kronika.ports.StoreOfRecord.write`'s ``fold``), so no text the forget
        removed stays under a part. Kept in the manifest until such a push succeeds.

        Those edits reach the record after they are made, so they, and every file of
        the agent's folder before them, are synced to disk: the files written as a copy
        of the record (:meth:`_as_copy`) first, then the forget's as they are written
        (after a crash of the machine, the files of an agent named here are kept)."""
        if agent not in self._fold:
            if self._boot is not None:  # what copies wrote: this process, or another
                sync_tree(self.workspace.agent_dir(agent))
            if self._depth > 0:  # the rest of this hold waits for the disk
                self._copying.enter_context(copy_of_record(False))
            self._fold.add(agent)
            self._save_manifest()

    def from_record(self, agent: str, path: str) -> bool:
        """Whether the folder's file is the record's version as last pulled or pushed
        (same size and time: what a push compares too). A file gone is not: the writes
        indexed after the lock remove none, so a file the index holds and the folder
        does not was removed otherwise, and is looked at as before."""
        known = self._state.copies.get((agent, path))
        if known is None:
            return False
        try:
            stat = os.stat(self.workspace.agent_dir(agent) / path)
        except OSError:
            return False
        return (stat.st_mtime_ns, stat.st_size) == (known.mtime_ns, known.size)

    @contextmanager
    def for_agent(self, agent: str) -> Iterator[None]:
        """Hold the lock for writes to ``agent``'s documents alone: the record's lock of
        that agent (writers of other agents of the tenant go on), the pull of the whole
        tenant, and a push of that agent's files alone. Entered inside a hold of all
        agents or of ``agent``, it is that hold; inside another agent's, an error."""
        with self._thread_lock:
            if self._depth == 0:
                self._scope = frozenset({agent})
            elif self._scope is not None and agent not in self._scope:
                held = ", ".join(sorted(self._scope))
                raise StoreError(f"a write to agent {agent!r} inside the hold of {held}")
            try:
                with self:
                    yield
            finally:
                if self._depth == 0:
                    self._scope = None

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Hold the lock for a batch that lands whole or not at all: in the folder by
        its journal (:mod:`kronika.stores.batch`: a batch a kill cut short is put back
        when the folder's lock is next taken, before the pull), in the record by the
        one transaction of the push."""
        with self, self._file_lock.batch():
            yield

    def on_undone(self, report: Callable[[UndoneBatch], None]) -> None:
        """Call ``report`` for every batch put back in the folder (never pushed)."""
        self._file_lock.on_undone(report)

    def refresh(self) -> bool:
        """Bring the folder up to date without the record's lock (a read: what was
        committed is whole); whether anything changed. Inside the lock: nothing to do."""
        with self._thread_lock:
            if self._depth > 0:
                return False
            with self._file_lock:
                self._load_manifest()
                self._discard_torn()
                with copy_of_record(self._as_copy()):
                    self._boot_on_disk()
                    if self._unsent:  # a refused push the record could not be read after
                        self._put_back_unsent(raising=True)
                    return self._puller.pull() > 0

    def close(self) -> None:
        self._listing.close()
        self.record.close()

    # -- pulling and pushing ----------------------------------------------------------

    def push(self) -> int:
        """Write every file that differs from the record into it, in one transaction;
        returns how many documents were written."""
        try:
            return self._push()
        except BaseException:
            self._listing.forget()  # what it looked at may not have been sent: list all
            raise

    def _push(self) -> int:
        agents = set(self.workspace.agents())
        found, whole, looked = self._listing.changed(agents, self._holds)
        documents: list[RecordDocument] = []
        items: dict[tuple[str, str], list[MemoryItem]] = {}
        states: dict[tuple[str, str], Copy] = {}
        damaged = self._repairs.put_back_damaged()
        for (agent, path), (where, state) in found.items():
            known = self._state.copies.get((agent, path))
            if (agent, path) in damaged or (
                known is not None and state == (known.mtime_ns, known.size)
            ):
                continue
            file = Path(where)
            grown = self._grown(agent, path, file, known)
            if grown is not None:
                documents.append(grown[0])
                items[(agent, path)], states[(agent, path)] = grown[1], grown[2]
                continue
            full = file_state(file)
            if full is None or full == known:
                continue
            raw = file.read_bytes()
            own = (agent, path) in self.workspace.removed  # a forget's own rewrite
            if known is not None and classify(path) and not own and looks_damaged(raw, known):
                if not self._repairs.restore(agent, path):
                    damaged.add((agent, path))
                    continue
                full, raw = file_state(file), file.read_bytes()  # the record's, with facts since
                if full is None:
                    continue
            text = raw.decode("utf-8", errors="replace").replace("\x00", "")
            documents.append(RecordDocument(agent, path, text, full.mtime_ns))
            states[(agent, path)] = full
            if classify(path) is not None:
                items[(agent, path)] = list(self.workspace.parse_source(agent, path).items)
        listed = (whole, looked)
        for key in self._listing.gone(found, agents, listed, damaged, self._holds, self._scope):
            if vanished(key, agents, self.workspace.removed):
                self._repairs.restore(*key)  # a Brain or a session gone by itself: damage
                continue  # (nothing was written to a file that was gone)
            documents.append(RecordDocument(key[0], key[1], None, 0))
        self.workspace.removed.difference_update(
            [key for key in self.workspace.removed if self._holds(key[0])]
        )
        folded = {agent for agent in self._fold if self._holds(agent)}
        if not documents:
            if folded:
                self.record.fold_parts()
                self._fold -= folded
                self._save_manifest()
            return 0
        self._unsent.update((doc.agent, doc.path) for doc in documents)
        fold = bool(folded)
        try:
            written = self.record.write(documents, items, fold=fold)
        except StaleAppend:  # the record holds another body: each sent whole
            documents = [self._whole(doc, items, states) for doc in documents]
            written = self.record.write(documents, items, fold=fold)
        self._fold -= folded
        self._unsent.difference_update((doc.agent, doc.path) for doc in documents)
        for doc in documents:
            key = (doc.agent, doc.path)
            if doc.text is None:
                self._state.copies.pop(key, None)
            else:
                self._state.copies[key] = states[key]
        if written.preceding > self._state.change:  # writers of other agents wrote meanwhile
            self._puller.pull(before=written.first)
        # nobody else wrote between the pull and this write: this copy is at its last
        self._state.change = max(self._state.change, written.last)
        self._save_manifest()
        return len(documents)

    def _holds(self, agent: str) -> bool:
        """Whether the hold is for ``agent``'s documents (a hold of all agents is)."""
        return self._scope is None or agent in self._scope

    def _grown(
        self, agent: str, path: str, file: Path, known: Copy | None
    ) -> tuple[RecordDocument, list[MemoryItem], Copy] | None:
        """The document of a session file's turns, or a fact file's facts, appended since
        the record took it as ``known``, or of the archive's lines kronika replaced
        since, their items and the file's state (:func:`grown_session`,
        :func:`grown_facts`, :func:`spliced_facts`)."""
        if known is None or (agent, path) in self.workspace.removed:
            return None
        grown = (
            grown_session(self.workspace, agent, path, file, known.size, known.sha256)
            or grown_facts(self.workspace, agent, path, file, known.size, known.sha256)
            or spliced_facts(self.workspace, agent, path, file, known.sha256)
        )
        if grown is None:
            return None
        doc, items, (mtime_ns, size, sha256) = grown
        return doc, items, Copy(mtime_ns, size, sha256)

    def _whole(
        self,
        doc: RecordDocument,
        items: dict[tuple[str, str], list[MemoryItem]],
        states: dict[tuple[str, str], Copy],
    ) -> RecordDocument:
        """``doc`` as the whole file, when it was to be sent as an append (its items
        and state in ``items`` and ``states`` made anew); other documents unchanged."""
        key = (doc.agent, doc.path)
        file = self.workspace.agent_dir(doc.agent) / doc.path
        full = file_state(file)
        if doc.appends is None or full is None:
            return doc
        text = file.read_bytes().decode("utf-8", errors="replace").replace("\x00", "")
        items[key] = list(self.workspace.parse_source(doc.agent, doc.path).items)
        states[key] = full
        return RecordDocument(doc.agent, doc.path, text, full.mtime_ns)

    def _as_copy(self) -> bool:
        """Whether this hold's files may be written without waiting for the disk
        (:func:`~kronika.stores.durable.copy_of_record`): the record has all of them
        once the hold's push is done, and a crash of the machine, the only thing that
        loses what was not synced, is seen at the next take (the manifest's boot,
        :meth:`_discard_torn`). Not where the boot cannot be told, nor while a forget's
        edits wait to be sent (:meth:`fold_with_push`)."""
        return self._boot is not None and not self._fold

    def _discard_torn(self) -> None:
        """Holding the folder's lock, before a pull: when a hold died between its first
        edit and its push (its :data:`WRITING` mark is still there), its edits were
        never acknowledged, and one write may have changed some of its documents and
        not the rest (an archived fact given a new value: the Brain, the archive, the
        history). A pull would replace those the record changed since and keep the
        others, and the next push send them as hand edits: part of a write. So every
        file that differs from the record's version as this copy last saw it is given
        that version again (kept under ``.corrupt/`` first, and said), as a refused
        push is undone. Not an agent a forget edited (:meth:`fold_with_push`): its
        edits are whole, and go with its next push, folded.

        The same when the manifest was written in another boot of the machine
        (:attr:`_restarted`): files written as a copy (:meth:`_as_copy`) may have
        lost their last versions in the crash, with their sizes and times or not, so
        every file is compared byte for byte, once."""
        marker = self.home / WRITING
        restarted = self._restarted
        if not restarted and not marker.exists():
            return
        scope, self._scope = self._scope, None  # every agent's files
        torn: set[tuple[str, str]] = set()
        try:
            found = {key: stat for key, _, stat in self._listing.files(self._holds)}
            torn = {
                key
                for key, stat in found.items()
                if restarted
                or (known := self._state.copies.get(key)) is None
                or stat != (known.mtime_ns, known.size)
            }
            torn |= set(self._state.copies) - set(found)
            # a forget's edits, synced, are kept (sent folded), but where the manifest
            # that named its agents was lost: then its journal makes them again
            kept = set() if self._check_all else self._fold
            torn = {key for key in torn if key[0] not in kept and self._differs(key)}
            self._unsent.update(torn)
            why = _UNREADABLE if self._check_all else _RESTARTED
            self._put_back_unsent(raising=True, why=why if restarted else _REFUSED)
        finally:
            self._scope = scope
        if torn and restarted:
            log.warning(
                "%s: files the machine's restart left behind the record were undone", self.home
            )
        elif torn:
            log.warning("%s: a write cut short before it was sent was undone", self.home)
        marker.unlink(missing_ok=True)
        if restarted:
            self._restarted = self._check_all = False
            self._save_manifest(durable=True)  # its files are checked: trusted in this boot

    def _differs(self, key: tuple[str, str]) -> bool:
        """Whether the folder's file is not, byte for byte, the record's version this
        copy last saw (a file gone, or one the copy never saw, differs)."""
        known = self._state.copies.get(key)
        here = file_state(self.workspace.agent_dir(key[0]) / key[1])
        if known is None or here is None:
            return known is not None or here is not None
        return here.sha256 != known.sha256

    def _put_back_unsent(self, *, raising: bool, why: str = "") -> None:
        """Give the files of a push the record refused the record's versions again (a
        file the record does not hold is removed), each kept under ``.corrupt/`` first.
        A record that cannot be read leaves them for the next take (``raising``: its
        error is raised, else it is noted in the log). ``why``: what the note of a file
        kept says of it (by default, that the record refused it)."""
        changed = False
        try:
            for agent, path in sorted(self._unsent):
                if not self._holds(agent):
                    continue  # another agent's: put back by a hold of it
                latest = self.record.document(agent, path)
                folder = self.home / "agents" / agent  # not made again when removed
                file = folder / path
                here = file_state(file)
                if here is not None and here.sha256 != digest(latest.text if latest else None):
                    kept = keep_copy(folder, f"{path}.unsent", file.read_bytes())
                    self.workspace.notes.append(
                        f"{agent}/{path}: {why or _REFUSED}; the file as written was kept at"
                        f" {folder / kept}"
                    )
                if latest is not None and latest.text is not None:
                    agent_folder(self.home, agent)  # made again when the record holds it
                self._puller.place(latest or RecordDocument(agent, path, None, 0), file)
                self._unsent.discard((agent, path))
                changed = True
        except Exception as err:
            if raising:
                raise
            log.warning("a write the record refused is undone by the next call: %s", err)
        finally:
            if changed:
                self._save_manifest()

    # -- what this copy saw -------------------------------------------------------------

    def _load_manifest(self) -> None:
        """Read what this copy saw, unless this process wrote that itself (another
        process sharing the folder may have pulled or pushed since)."""
        path = self.home / MANIFEST
        mark = self._manifest.marks()
        if mark[0] is not None and mark == self._manifest_mark:
            return
        self._manifest_mark = mark
        try:
            saved = self._manifest.read()
            if saved is None:
                return
            # written in another boot: its files may be older than it says (_discard_torn)
            self._written_in = saved.boot
            self._restarted = self._boot is not None and self._written_in not in (None, self._boot)
            self._state.change = saved.change
            self._fold = set(saved.fold)
            self._fold_on_disk = bool(self._fold)
            files = saved.files  # as read: the manifest knows them all
            self._state.copies = files if isinstance(files, Documents) else Documents(files)
        except FileNotFoundError:
            return
        except (OSError, ValueError, KeyError, TypeError) as err:
            # Start again from nothing: every document is written here anew.
            self.workspace.notes.append(f"{path} was unreadable ({err}); the copy was refreshed")
            self._state.change, self._state.copies = 0, Documents()
            # what a forget left unsent (if any) is folded when sent
            self._fold = set(self.workspace.agents())
            # what a crash of the machine may leave: every file is checked, of every
            # agent (a forget cut short is made again from its journal, when opened)
            self._restarted = self._check_all = self._boot is not None

    def _boot_on_disk(self) -> None:
        """Before the first file written as a copy in this boot: the manifest on disk
        names this boot, synced, so a crash of the machine leaves one that names it or
        an earlier boot, and the files are checked after it (:meth:`_discard_torn`);
        one of a kronika that named no boot would have them trusted."""
        if self._as_copy() and self._written_in != self._boot:
            self._save_manifest(durable=True)

    def _save_manifest(self, *, durable: bool = False) -> None:
        """Write what the copy holds (``record.json``: the documents a push or pull
        changed, as a line of its log, :mod:`~kronika.stores.manifest`), and the boot of
        the machine its files are trusted in; without waiting for the disk unless
        ``durable`` or a forget's edits wait to be sent. After a power cut it may be
        older than the files, and an older manifest costs pulls, never a write (the
        documents it had not seen are pulled again; one whose file is already the
        record's is written again as it was, and one a copy cannot place is kept aside
        before the record's is written); it then names an earlier boot, so the files,
        which may be older than it too where they were written as a copy, are compared
        with the record's versions before any is sent (:meth:`_discard_torn`). A kill
        leaves it whole: the rename of the whole, and a line of the log cut short is not
        read."""
        # the boot its files are trusted in: until they are checked, the one before
        boot = self._written_in if self._restarted else self._boot
        try:
            with copy_of_record(False):  # whether it waits is said here alone
                self._manifest.write(
                    Saved(self._state.change, self._state.copies, boot, frozenset(self._fold)),
                    # one naming a forget's agents, or no longer naming them, is synced:
                    # files written as a copy after it are checked after a crash
                    durable=durable or bool(self._fold) or self._fold_on_disk,
                )
        except OSError as err:
            raise StoreError(f"cannot write {self.home / MANIFEST}: {err}") from err
        self._manifest_mark = self._manifest.marks()
        self._written_in = boot
        self._fold_on_disk = bool(self._fold)


def _run_all(runs: list[Callable[[], None]]) -> Callable[[], None]:
    def run() -> None:
        for each in runs:
            each()

    return run
