"""Prepared copies of model files: what a model makes of its files, kept ready to read.

The default embedder parses a 128k-piece SentencePiece vocabulary in pure Python and
inflates 65 MB of weights from a compressed archive; the token counter decodes 100k
base64 vocabulary lines from a gzip file. Every new process did that again (about a
second in all), though the result never changes while the package's files do not. A
prepared copy holds that result in a form Python reads back at disk speed
(:mod:`marshal` and raw array bytes): see :mod:`kronika.providers.prepared_models`.

A copy lives in the folder of the ``model_cache`` setting (by default the user's cache
folder, ``$XDG_CACHE_HOME/kronika`` or ``~/.cache/kronika``) as ``<name>-<key>.bin``,
where ``key`` is the sha256 of the format version, the library's version and the
sha256 of every package file it is made from (the size and time of a file too large
to hash quickly): a new package (or a changed file) gets a new key, and the copies of
older keys are removed when it is written. The file is ``MAGIC``, a header (the
payload's length, how much of it is checked whole and the CRC-32 of that part and of
a sample of the rest), then the payload, which is mapped into memory rather than read:
of 65 MB of embedding rows a query touches a few pages. A copy that is missing, cut
short or fails a checksum is rebuilt from the package's
own files (never fetched from anywhere) and written atomically, so processes racing
to write it each rename a whole file into place; so is a sound copy that does not
restore the model the library itself would load (told as a warning). When the folder
cannot be written the model still loads, from its files, as before.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import mmap
import os
import struct
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

log = logging.getLogger("kronika")

MAGIC = b"KRONIKA-PREPARED-1\n"
# payload length, bytes checked whole, their CRC-32, CRC-32 of the sampled rest
_HEAD = struct.Struct("<QQII")
HASHED_UP_TO = 8 << 20
SAMPLE_SIZE = 4096
SAMPLE_STRIDE = 16 * SAMPLE_SIZE
FORMAT = "1"
OFF = "off"
USER = "user"
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class PreparedCopies:
    """Where prepared copies are kept; ``folder=None`` keeps none (every load parses)."""

    folder: Path | None

    @classmethod
    def from_setting(cls, value: str, environ: dict[str, str] | None = None) -> PreparedCopies:
        """``user``: ``$XDG_CACHE_HOME/kronika`` or ``~/.cache/kronika``; ``off``: none;
        anything else is a folder (``~`` expanded)."""
        if value == OFF:
            return cls(None)
        if value == USER:
            env = os.environ if environ is None else environ
            base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
            return cls(Path(base) / "kronika")
        return cls(Path(os.path.expanduser(value)))

    def load(
        self,
        name: str,
        sources: Sequence[Path],
        version: str,
        build: Callable[[], tuple[T, bytes, int]],
        restore: Callable[[memoryview], T],
    ) -> tuple[T, str]:
        """The model ``name`` and how it was had.

        ``build`` loads it the library's way and gives it with the payload to keep and
        how many of its first bytes to check whole (the rest, a large array read only
        in part, is checked by a sample of one page in 16);
        ``restore`` makes it from a kept payload, raising when the result would differ
        from the library's own. The second value says which happened: ``reused`` (a
        sound copy restored), ``built`` (there was no copy), ``rebuilt`` (the copy was
        damaged or did not restore), ``off`` (no folder) or ``unsaved`` (built, and
        the folder refused the copy)."""
        if self.folder is None:
            return build()[0], "off"
        path = self.folder / f"{name}-{_key(sources, version)}.bin"
        how = "built"
        if path.is_file():
            kept = _read(path)
            if kept is not None:
                try:
                    return restore(kept), "reused"
                except Exception as exc:  # a restore over a library's internals
                    log.warning("the prepared model copy %s does not fit: %s", path, exc)
            else:
                log.warning("the prepared model copy %s was damaged", path)
            how = "rebuilt"
        value, payload, checked = build()
        try:
            _write(path, payload, checked)
        except OSError as exc:
            log.info("cannot keep a prepared model copy in %s: %s", self.folder, exc)
            return value, "unsaved"
        for old in self.folder.glob(f"{name}-*.bin"):
            if old != path:
                with contextlib.suppress(OSError):
                    old.unlink()
        return value, how


def _key(sources: Sequence[Path], version: str) -> str:
    """Hash of the format, the library's version and each source: its bytes' sha256, or
    for a file over :data:`HASHED_UP_TO` (hashing 30 MB would cost what the copy saves)
    its size and modification time, which any install or replacement changes."""
    digest = hashlib.sha256(f"{FORMAT}\0{version}".encode())
    for source in sources:
        stat = source.stat()
        if stat.st_size <= HASHED_UP_TO:
            digest.update(hashlib.sha256(source.read_bytes()).digest())
        else:
            digest.update(f"{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:32]


def _sampled_crc(data: memoryview, start: int) -> int:
    crc = 0
    for offset in range(start, len(data), SAMPLE_STRIDE):
        crc = zlib.crc32(data[offset : offset + SAMPLE_SIZE], crc)
    return crc


def _read(path: Path) -> memoryview | None:
    """The payload of a sound copy, mapped read-only; ``None`` when it is cut short or
    fails a checksum."""
    try:
        with path.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size < len(MAGIC) + _HEAD.size:
                return None
            mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None
    view = memoryview(mapped)
    if view[: len(MAGIC)] != MAGIC:
        return None
    length, checked, crc, sampled = _HEAD.unpack_from(view, len(MAGIC))
    payload = view[len(MAGIC) + _HEAD.size :]
    if length != len(payload) or checked > length:
        return None
    if zlib.crc32(payload[:checked]) != crc or _sampled_crc(payload, checked) != sampled:
        return None
    return payload


def _write(path: Path, payload: bytes, checked: int) -> None:
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            view = memoryview(payload)
            crc, sampled = zlib.crc32(view[:checked]), _sampled_crc(view, checked)
            handle.write(MAGIC + _HEAD.pack(len(payload), checked, crc, sampled))
            handle.write(payload)
            handle.flush()
            # on disk before the name points at it: a crash never leaves a named copy
            # whose blocks are still unwritten (zeros)
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
