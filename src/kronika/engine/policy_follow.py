"""Following the storage policies of ``kronika.toml`` while a server runs.

Every worker of ``kronika serve`` builds its own memory; an edit of the policies made
through one of them (:mod:`kronika.workflows.policy_edit`) or by hand must reach the
others before their next write. A :class:`PolicyFollower` is asked
once per request (:meth:`PolicyFollower.poll`): it looks at the file's stamp, and reads
the file again only when the stamp changed.

The stamp is the file's inode, size, modification and change times (nanoseconds): an
edit through the server renames a new file over the old one, so its inode changes
with every edit. Two versions could still share a stamp when both are written within
one tick of the file system's clock and the freed inode comes back (or a file is
rewritten in place to the same size), so a stamp is trusted only once the version it
belongs to is older than :data:`SETTLED_NS`: until then the file is read and its
content hash compared on every poll (what git does with "racily clean" files).

A file that does not read (bad TOML, a bad rule) or is gone keeps the policies in
force: one warning names the problem, once per version of the file, and the worker
goes on.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from pathlib import Path

from kronika.core.policies import StoragePolicies
from kronika.core.policy_file import file_policies
from kronika.errors import ConfigError

log = logging.getLogger("kronika.policies")

SETTLED_NS = 2_000_000_000
"""How old a version of the file must be before its stamp alone tells it apart from
the next: beyond the coarsest file-system clock (2 s on FAT) and a tick of any other."""

Stamp = tuple[int, int, int, int]
_GONE: Stamp = (-1, -1, -1, -1)


class PolicyFollower:
    """The storage policies of one ``kronika.toml``, read again when it changes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = threading.Lock()
        """Held by whoever applies what :meth:`poll` found, so that no request sees an
        unchanged stamp while the new policies are still on their way."""
        self._stamp: Stamp | None = None
        self._settled = False
        self._digest: bytes | None = None

    def unchanged(self) -> bool:
        """Whether :meth:`poll` would find nothing new (a stat; nothing is read)."""
        return self._settled and _stamp(self.path) == self._stamp

    def poll(self) -> StoragePolicies | None:
        """The policies the file sets, when it changed since the last poll (the first
        poll reads it whatever it holds); ``None`` when it did not, or when the new
        version cannot be read (then a warning says why, and the policies stay)."""
        now = time.time_ns()
        stamp = _stamp(self.path)
        if stamp == self._stamp and self._settled:
            return None
        self._stamp = stamp
        self._settled = now - max(stamp[2], stamp[3]) > SETTLED_NS
        if stamp == _GONE:
            if self._digest is not None:
                log.warning(
                    "%s is gone or cannot be read: the storage policies in force stay",
                    self.path,
                )
            self._digest = None
            return None
        try:
            data = self.path.read_bytes()
        except OSError as exc:  # replaced or removed between the stat and the read
            self._settled = False
            log.warning("cannot read %s (%s): the storage policies in force stay", self.path, exc)
            return None
        digest = hashlib.sha256(data).digest()
        if digest == self._digest:
            return None
        self._digest = digest
        try:
            return file_policies(data.decode("utf-8"), str(self.path))
        except UnicodeDecodeError as exc:
            problem = f"{self.path} is not UTF-8 text: {exc}"
        except ConfigError as exc:
            problem = str(exc)
        log.warning("%s; the storage policies in force stay until it is fixed", problem)
        return None


def _stamp(path: Path) -> Stamp:
    try:
        st = os.stat(path)
    except OSError:  # gone, or no longer ours to read: either way nothing to apply
        return _GONE
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
