"""Reading files that may be damaged, keeping copies of them, and writing safely.

A file is damaged when its bytes are not valid UTF-8, or hold NUL bytes or other
control characters (kronika strips them from every text it is given, and
:func:`write_text` from every file it writes — a model's reply, a command's output —
so it never writes one; a tab and line ends are text). It is still read — invalid bytes and
control characters become U+FFFD, NUL bytes are dropped — so every
salvageable line counts, and its original bytes are copied once to
``<agent>/.corrupt/<path with / as __>.<UTC time>`` (a later read of the same bytes
reuses that copy instead of making another).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from kronika.errors import InvalidInput, WorkspaceError
from kronika.stores.markdown.atomic import atomic_write_bytes
from kronika.stores.markdown.layout import CORRUPT_DIR
from kronika.stores.private import make_private_dir, write_private_bytes

CONTROL = re.compile(r"[\x01-\x08\x0b\x0c\x0e-\x1f\x7f]")
"""Control characters no text kronika writes holds (NUL is dropped apart)."""

_CONTROL_BYTES = bytes([*range(0x01, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F])


def holds_control(raw: bytes) -> bool:
    """Whether the text of ``raw`` holds a character of :data:`CONTROL`: UTF-8 writes
    each as its one byte, which no other character's bytes hold, so the bytes are looked
    at in one pass at C speed (a seventh of searching the decoded text of 4 MB)."""
    return len(raw.translate(None, _CONTROL_BYTES)) != len(raw)


def decode(raw: bytes) -> tuple[str, str | None]:
    """``raw`` as text, and what damage it shows (``None``: none); see the module
    docstring for what is replaced or dropped."""
    problem = None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        problem = f"invalid UTF-8 at byte {exc.start}"
        text = raw.decode("utf-8", errors="replace")
    if "\x00" in text:
        problem = problem or "NUL bytes"
        text = text.replace("\x00", "")
    if holds_control(raw):
        problem = problem or "control characters"
        text = CONTROL.sub("\ufffd", text)
    return text, problem


@dataclass(frozen=True, slots=True)
class SourceText:
    """A file's decoded text, original bytes, modification time (whole seconds, UTC)
    and warnings about damage found while decoding."""

    text: str
    raw: bytes
    mtime: datetime
    warnings: tuple[str, ...]


def read_source(folder: Path, path: str) -> SourceText | None:
    """Read ``folder/path`` (``None`` if it does not exist), never failing on content."""
    file = folder / path
    try:
        raw = file.read_bytes()
        mtime_ns = file.stat().st_mtime_ns
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise WorkspaceError(f"cannot read {file}: {exc}") from exc
    mtime = datetime.fromtimestamp(mtime_ns // 1_000_000_000, UTC)
    text, problem = decode(raw)
    if problem is None:
        return SourceText(text, raw, mtime, ())
    backup = folder / keep_copy(folder, path, raw)
    warning = (
        f"{path} is damaged ({problem}); a copy of the original was kept at {backup}; "
        "unreadable bytes were replaced and the rest of the file was used"
    )
    return SourceText(text, raw, mtime, (warning,))


def keep_copy(folder: Path, path: str, raw: bytes) -> str:
    """Copy ``raw`` into ``folder/.corrupt/`` once; returns the copy's relative path."""
    corrupt = folder / CORRUPT_DIR
    prefix = path.replace("/", "__") + "."
    if corrupt.is_dir():
        for old in sorted(corrupt.glob(f"{prefix}*")):
            if old.read_bytes() == raw:
                return f"{CORRUPT_DIR}/{old.name}"
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    target = corrupt / f"{prefix}{stamp}"
    try:
        make_private_dir(corrupt)
        write_private_bytes(target, raw)
    except OSError as exc:
        raise WorkspaceError(f"cannot keep a copy of damaged {path}: {exc}") from exc
    return f"{CORRUPT_DIR}/{target.name}"


def write_text(file: Path, text: str, *, durable: bool = True) -> int | None:
    """Atomically replace ``file`` with ``text``; ``OSError`` becomes ``WorkspaceError``,
    text UTF-8 cannot hold (a lone surrogate from undecoded bytes) ``InvalidInput``.
    Control characters are left out (see the module docstring). Returns kronika's
    stamp of the new file (:func:`~.atomic.stamp_own_write`); ``durable``: see
    :func:`~.atomic.atomic_write_text`."""
    return write_bytes(file, encoded(file, CONTROL.sub("", text)), durable=durable)


def encoded(file: Path, text: str) -> bytes:
    """``text`` as the UTF-8 bytes of ``file``; ``InvalidInput`` when UTF-8 cannot hold
    it. Control characters are left in: :func:`write_text` takes them out first, and a
    caller of :func:`write_bytes` knows the text holds none."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = exc.object[exc.start : exc.end]
        raise InvalidInput(
            f"cannot write {file.name}: the text holds {bad!r}, which is not a Unicode"
            " character (bytes that were not UTF-8?); nothing was written"
        ) from exc


def write_bytes(file: Path, raw: bytes, *, durable: bool = True) -> int | None:
    """:func:`write_text` of a text the caller has made :func:`encoded`, and knows holds
    no control characters (a fact file kronika rewrote, only its new lines looked at)."""
    try:
        return atomic_write_bytes(file, raw, durable=durable)
    except OSError as exc:
        raise WorkspaceError(f"cannot write {file}: {exc}") from exc
