"""The parse of each fact file, kept between calls while the file is unchanged.

``brain_archive.md`` grows with every fact the Brain lets go of; parsing it again for
each write would make a write cost more with every fact stored. The workspace keeps the
last parse of each fact file (its lines, its items, the sha256 of its bytes) and uses it
again while the file is the one it was parsed from. Whether it is, is decided from the
file's status, like ``git`` decides whether a checked-out file changed:

* the inode, size, modification time and change time (all in nanoseconds) must be
  those seen when the file was read. Any write changes the change time, and so does
  setting the modification time back (``touch -d``), which a user cannot fake. When
  the change time alone moved (a hard link to the file made or removed, as a batch's
  journal does, or its mode changed), the file's bytes are hashed and compared: the
  same bytes keep the parse (and what it knows of the facts appended since), others
  are read again;
* a write within one clock tick of that read may leave all four unchanged (file
  systems stamp times from a clock that moves in ticks of a few milliseconds). A parse
  whose change time is within :data:`RACY_NS` of the moment the file was read is
  therefore *racy*: its bytes are read and hashed again before it is used. A racy parse
  of a large file (over :data:`SMALL_FILE` bytes) is used without that check until the
  tick is over, then checked once: a hand edit made within milliseconds of kronika's own
  write to a large archive is seen one tick later rather than at once;
* otherwise the parse is used as it is, without reading the file.

A file kronika has just written itself needs none of that waiting. Right after its
write, kronika sets the file's modification time one nanosecond back from the time the
write gave it (:func:`~kronika.stores.markdown.atomic.stamp_own_write`): a time no
later write can leave, since any write stamps the time it happens at, which is not
earlier than the one kronika's write got. While the file's status still shows that
stamp, nobody has written to it since, however soon after kronika's write and whatever
its size, so its parse is used without reading the file (:attr:`FactParse.own`). A
writer that sets the time back to kronika's stamp on purpose, within the same clock
tick, is the one edit this does not see; a file system that cannot hold the stamp
(times of whole seconds) keeps the check above.

A parse found out of date is kept aside (:meth:`FactCache.outdated`): the file's new
parse is spliced from it, so reading a Brain another worker rewrote, or an archive it
appended to, parses only the lines that changed
(:mod:`~kronika.stores.markdown.facts.splice`).

When kronika appends facts itself it extends the parse with what it appended (the
parse of the new lines only, and the running hash of the bytes), and remembers which
file contents each append extended, so the index can add those rows alone
(:meth:`FactCache.appended_since`).

Within one write (:meth:`FactCache.steady`) a parse checked against its file once is
used again without another look at the file: a write reads the Brain and the archive
a dozen times, and a hand edit made while it runs is seen by the next command, as one
made just before it would be.

The lookups :func:`place_fact` needs (archived facts by key, by the concept of their
key, by the form of their text) are built from a parse the first time they are asked
for and kept with it.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

from kronika.core.model import MemoryItem
from kronika.stores.markdown.lines import ParsedItems

RACY_NS = 20_000_000
"""How close (ns) a file's change time may be to the moment it was read for the parse
to be racy: above the 1–10 ms tick of the clocks file systems stamp times from."""

WHOLE_SECOND_RACY_NS = 2_000_000_000
"""The same for a file whose times are whole seconds (FAT, some network shares)."""

SMALL_FILE = 256 * 1024
"""A racy parse of a file up to this size is checked at every use (reading it is cheap)."""

KEPT_APPENDS = 1024
"""How many of its last appends a parse remembers for :meth:`FactCache.appended_since`."""

KEPT_VERSIONS = 1024
"""How many earlier contents of a rewritten file a parse remembers the items of
(:meth:`FactCache.rewritten_since`)."""

KEPT_VERSION_ITEMS = 1_000_000
"""How many items (references to them) those earlier contents may hold in all: a
rewritten archive of 100,000 facts keeps its last 10 versions, a Brain of 100 facts
its last 1,024. The index catches up after each write, so it needs the last one or
the last few (a batch's)."""

Stat = tuple[int, int, int, int]  # inode, size, mtime_ns, ctime_ns


class FactDelta(NamedTuple):
    """What one rewrite of a fact file changed, when no line moved
    (:attr:`FactParse.delta`): the sha256 of the content before and after, the items
    of the lines it replaced and of its new lines, and where: lines ``start`` to
    ``stop`` of the text after replaced ``cut`` characters of the text before, from the
    start of its line ``start`` (every other line is the same in both)."""

    before: str
    after: str
    gone: tuple[MemoryItem, ...]
    added: tuple[MemoryItem, ...]
    cut: int
    start: int
    stop: int


def file_stat(st: os.stat_result) -> Stat:
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def racy_window(stat: Stat) -> int:
    """:data:`RACY_NS`, or :data:`WHOLE_SECOND_RACY_NS` when the times are whole seconds."""
    whole = stat[2] % 1_000_000_000 == 0 and stat[3] % 1_000_000_000 == 0
    return WHOLE_SECOND_RACY_NS if whole else RACY_NS


@dataclass(slots=True)
class FactParse:
    """One fact file as last read: lines, raw parse, hash, and what was appended since."""

    stat: Stat
    checked_ns: int
    """A moment (``time.time_ns``) at which the file's bytes were known to be these."""
    lines: list[str]
    parsed: ParsedItems
    digest: Any  # the running sha256 of the file's bytes (hashlib object)
    mtime: datetime
    read_warnings: tuple[str, ...]
    appends: list[tuple[str, tuple[MemoryItem, ...]]] = field(default_factory=list)
    """``(hash of the file before, items appended)`` for the last appends, oldest first."""
    derived: dict[str, Any] = field(default_factory=dict)
    versions: dict[str, tuple[MemoryItem, ...]] = field(default_factory=dict)
    """The items of the file's earlier contents, by their hash, when kronika rewrote it
    from them (oldest first)."""
    own: bool = False
    """:attr:`stat` holds kronika's own stamp
    (:func:`~kronika.stores.markdown.atomic.stamp_own_write`): nobody has written to the
    file since, while its status is still :attr:`stat`."""
    delta: FactDelta | None = None
    """When kronika's rewrite of the content hashing to the first made the content
    hashing to the second, and no line moved: the items of the lines it replaced then,
    and of its new lines now (every other item is the same object in both;
    :meth:`FactCache.rewritten_since`). It holds while the parse is of the second: an
    append to it since is not in the items."""
    clean: bool = False
    """:attr:`lines` are known to hold no control characters (read without warnings,
    or written by kronika), so a rewrite looks for them in its new lines alone."""
    pending: str | None = None
    """The text kronika will write over the file when a batch ends
    (:meth:`~kronika.stores.markdown.facts.write.FactWriter.holding_brain`): the parse is
    of it, not of the file, until then."""

    @property
    def content_hash(self) -> str:
        return str(self.digest.hexdigest())

    @property
    def whole_lines(self) -> bool:
        """The parse is of the file (no text waiting in memory), read without warnings
        or damage, and its last line is whole: text put in or added to it by whole
        lines gives the parse of the text so made."""
        return (
            self.pending is None
            and not self.read_warnings
            and not self.parsed.damage
            and bool(self.lines)
            and self.lines[-1].endswith("\n")
        )

    def trusted(self, stat: Stat, now_ns: int) -> bool | None:
        """``True``: use it as it is; ``False``: re-read the file; ``None``: racy,
        compare the file's bytes with :attr:`content_hash` first (as when only its
        ``ctime`` moved: a link to it added or removed, as a batch's journal does, or
        its mode changed)."""
        if stat != self.stat:
            return None if stat[:3] == self.stat[:3] else False
        if self.own:
            return True
        window = racy_window(stat)
        if stat[3] + window <= self.checked_ns:
            return True
        if stat[1] > SMALL_FILE and now_ns < stat[3] + window:
            return True  # checked once the tick is over (see the module docstring)
        return None

    def derive(self, name: str, build: Callable[[], Any]) -> Any:
        """A lookup built from this parse once (``build()``), kept while it is valid."""
        if name not in self.derived:
            self.derived[name] = build()
        return self.derived[name]


class FactCache:
    """The :class:`FactParse` of each ``(agent folder, path)``."""

    def __init__(self) -> None:
        self._entries: dict[tuple[str, str], FactParse] = {}
        self._outdated: dict[tuple[str, str], FactParse] = {}  # see outdated()
        self._checked: set[tuple[str, str]] | None = None  # inside steady(): checked once

    @contextmanager
    def steady(self) -> Iterator[None]:
        """Within the block (one write, under the workspace lock), a parse found to match
        its file, or kept of what kronika wrote, is not checked against the file again."""
        if self._checked is not None:
            yield
            return
        self._checked = set()
        try:
            yield
        finally:
            self._checked = None

    def get(self, folder: str, path: str) -> FactParse | None:
        """The parse of ``folder/path`` if the file is still the one it was read from."""
        entry = self._entries.get((folder, path))
        if entry is None or entry.pending is not None:
            return entry
        checked = self._checked
        if checked is not None and (folder, path) in checked:
            return entry
        now = time.time_ns()
        try:
            stat = file_stat(os.stat(os.path.join(folder, path)))
        except OSError:
            self._entries.pop((folder, path), None)
            return None
        verdict = entry.trusted(stat, now)
        if verdict is None:
            try:
                with open(os.path.join(folder, path), "rb") as handle:
                    raw = handle.read()
                again = file_stat(os.stat(os.path.join(folder, path)))
            except OSError:
                verdict = False
            else:
                same = again == stat and hashlib.sha256(raw).hexdigest() == entry.content_hash
                if same:
                    entry.checked_ns = now
                    entry.stat = stat  # the same bytes: a new ctime alone
                verdict = same
        if not verdict:
            # kept aside: the file's new parse may be spliced from it (FactReads.kept)
            self._outdated[(folder, path)] = self._entries.pop((folder, path))
            return None
        if checked is not None:
            checked.add((folder, path))
        return entry

    def outdated(self, folder: str, path: str) -> FactParse | None:
        """The parse of ``folder/path`` last found out of date (the file changed since it
        was read or written), taken out of the cache: what a new parse of the file may
        be spliced from."""
        return self._outdated.pop((folder, path), None)

    def put(self, folder: str, path: str, entry: FactParse) -> None:
        """Keep ``entry``, the parse of the file as just read."""
        self._entries[(folder, path)] = entry
        self._outdated.pop((folder, path), None)
        if self._checked is not None:
            self._checked.add((folder, path))

    def rewrite(self, folder: str, path: str, before: FactParse | None, entry: FactParse) -> None:
        """Keep ``entry``, the parse of what kronika wrote over ``before`` (the kept parse
        of the file's previous content, if any): it remembers ``before``'s items."""
        if before is not None:
            # taken over, not copied (``before`` leaves the cache): a batch rewrites
            # the Brain once per fact, and the versions grow to KEPT_VERSIONS
            versions, before.versions = before.versions, {}
            versions.update(entry.versions)
            versions[before.content_hash] = before.parsed.items
            # a long archive's versions are long too: fewer of them are kept
            kept = max(
                2, min(KEPT_VERSIONS, KEPT_VERSION_ITEMS // max(1, len(before.parsed.items)))
            )
            while len(versions) > kept:
                del versions[next(iter(versions))]
            entry.versions = versions
        self._entries[(folder, path)] = entry
        self._outdated.pop((folder, path), None)
        if self._checked is not None:
            self._checked.add((folder, path))  # what kronika wrote

    def rewritten_since(
        self, folder: str, path: str, content_hash: str
    ) -> tuple[tuple[MemoryItem, ...], tuple[MemoryItem, ...]] | None:
        """``(items then, items now)`` of ``folder/path`` when kronika's rewrites alone
        changed it since its bytes hashed to ``content_hash`` (else ``None``). Items
        both hold alike, as the same objects, may be left out of both: after one rewrite
        that moved no line, only the items of the lines it replaced are given
        (:attr:`FactParse.delta`), whatever the file's length."""
        entry = self.get(folder, path)
        if entry is None or entry.read_warnings or entry.parsed.damage:
            return None
        delta = entry.delta
        if delta is not None and (delta.before, delta.after) == (content_hash, entry.content_hash):
            return delta.gone, delta.added
        then = entry.versions.get(content_hash)
        return None if then is None else (then, entry.parsed.items)

    def drop(self, folder: str, path: str) -> None:
        self._entries.pop((folder, path), None)
        self._outdated.pop((folder, path), None)
        if self._checked is not None:
            self._checked.discard((folder, path))

    def appended_since(self, folder: str, path: str, content_hash: str) -> list[MemoryItem] | None:
        """The items appended to ``folder/path`` since its bytes hashed to
        ``content_hash``, if appends alone changed it since then (else ``None``)."""
        entry = self.get(folder, path)
        if entry is None:
            return None
        if entry.content_hash == content_hash:
            return []
        for n, (before, _items) in enumerate(entry.appends):
            if before == content_hash:
                return [item for _, items in entry.appends[n:] for item in items]
        return None
