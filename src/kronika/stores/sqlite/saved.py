"""Copies of the in-memory snapshots saved beside the index file, read on restart.

A large index takes long to load into memory: at a million items, reading every
vector out of SQLite takes about 20 seconds (a join over 2 GB of blobs, row by row)
and rebuilding the BM25 postings from FTS5 about 15. The saved copies are
memory-mapped instead, and each snapshot then catches up with what changed since it
was saved through the logs an open snapshot reads. Like the vector graph
(:mod:`.ann`) they are caches: a missing, unreadable, foreign or stale copy is
ignored, with a log line, and the snapshot is read from SQLite as before.

Each copy (``kind`` ``vectors`` or ``bm25``) is three files named after the index:

* ``index.sqlite.<kind>.json``: the description (format, what it was made for, the
  index's identity, the marks covered, sizes, and the names of the data files).
  It is written last, so a description never names files not yet complete.
* ``index.sqlite.<kind>-<token>.<name>.npy``: a large array, memory-mapped on load
  (the vectors).
* ``index.sqlite.<kind>-<token>.npz``: every other array, read into memory.

Each save writes new data files under a fresh token and then swaps the description,
so a process still reading (memory-mapping) the previous copy is never disturbed;
copies no longer described are removed. The identity is a random id stored in the
index's ``meta`` table when the file is created: a copy made for another index file
(one moved aside as corrupt and recreated, say) is never trusted, even if its marks
happen to match.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import sqlite3
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

import numpy as np
import numpy.typing as npt

from kronika.stores.private import open_private, write_private_bytes
from kronika.stores.sqlite.columns import CodedColumn, ContextColumns, ItemColumns, Mask

log = logging.getLogger("kronika")

FORMAT = 4  # 2: the item columns hold user and team; 3: the context columns hold places;
# 4: occurrences are weighted by column (lexical.COLUMN_WEIGHTS)
Arrays = dict[str, npt.NDArray[Any]]
_ITEM_CODED = ("agent", "tenant", "scope", "type", "status", "channel", "speaker", "user", "team")
_ITEM_FLOATS = ("created_at", "valid_from", "valid_to")
_CONTEXT_CODED = ("session", "speaker", "source_agent", "source_path")
T = TypeVar("T")
_BROKEN = (OSError, ValueError, KeyError, TypeError, IndexError, EOFError, zipfile.BadZipFile)


@dataclass(frozen=True, slots=True)
class Saved:
    """A copy read back: its description, the memory-mapped arrays and the others."""

    meta: dict[str, Any]
    marks: tuple[int, ...]
    mapped: Mapping[str, npt.NDArray[Any]]
    arrays: Mapping[str, npt.NDArray[Any]]


def description_path(index_path: Path, kind: str) -> Path:
    return index_path.with_name(f"{index_path.name}.{kind}.json")


def save(
    index_path: Path,
    kind: str,
    *,
    identity: str,
    marks: Sequence[int],
    mapped: Mapping[str, npt.NDArray[Any]],
    arrays: Mapping[str, npt.NDArray[Any]],
    meta: Mapping[str, Any],
) -> bool:
    """Write one copy beside ``index_path``; False (and a warning) if it cannot be.

    Each of ``mapped`` gets its own ``.npy`` (memory-mapped on load); ``arrays`` share
    one ``.npz`` (read into memory on load).
    """
    stem = f"{index_path.name}.{kind}-{secrets.token_hex(8)}"
    files = {name: index_path.with_name(f"{stem}.{name}.npy") for name in mapped}
    arrays_path = index_path.with_name(stem + ".npz")
    described = description_path(index_path, kind)
    pending = described.with_name(f"{described.name}.{os.getpid()}.tmp")
    written = [*files.values(), arrays_path, pending]
    try:
        for name, path in files.items():
            with open(open_private(path, os.O_WRONLY | os.O_TRUNC), "wb") as out:
                np.save(out, np.ascontiguousarray(mapped[name]), allow_pickle=False)
        with open(open_private(arrays_path, os.O_WRONLY | os.O_TRUNC), "wb") as out:
            np.savez(out, allow_pickle=False, **arrays)
        description = {
            **meta,
            "format": FORMAT,
            "identity": identity,
            "marks": list(marks),
            "mapped": {name: [p.name, p.stat().st_size] for name, p in files.items()},
            "arrays": [arrays_path.name, arrays_path.stat().st_size],
        }
        write_private_bytes(pending, json.dumps(description).encode("utf-8"))
        os.replace(pending, described)
    except (OSError, ValueError) as exc:
        log.warning("could not save the %s copy beside %s: %s", kind, index_path, exc)
        for path in written:
            path.unlink(missing_ok=True)
        return False
    _remove_undescribed(index_path, kind, keep={p.name for p in written})
    return True


@dataclass(frozen=True)
class Kind(Generic[T]):
    """One kind of saved copy: its ``name``, the index's ``newest`` marks for it, what
    its description must say (``expect``: the model, say) and how its snapshot is
    built (``build``); the arguments :func:`load` takes for it."""

    name: str
    newest: Callable[[sqlite3.Connection], Sequence[int]]
    expect: Mapping[str, Any]
    build: Callable[[Saved], T]


def load_kind(conn: sqlite3.Connection, index_path: Path, kind: Kind[T], identity: str) -> T | None:
    """:func:`load` of the copy of ``kind``, against the index's newest marks now."""
    return load(
        conn,
        index_path,
        kind.name,
        identity=identity,
        newest=kind.newest(conn),
        expect=kind.expect,
        build=kind.build,
    )


def load(
    conn: sqlite3.Connection,
    index_path: Path,
    kind: str,
    *,
    identity: str,
    newest: Sequence[int],
    expect: Mapping[str, Any],
    build: Callable[[Saved], T],
) -> T | None:
    """What ``build`` makes of the copy of ``kind`` (a snapshot), if the copy is whole,
    made for this index and for ``expect`` (the model, say), not ahead of ``newest``
    (the index's marks now), of a state the index can follow (:func:`_still_there`),
    and its parts fit together (``build`` raises ``ValueError``, ``KeyError``,
    ``TypeError`` or ``IndexError`` if not); else ``None``, with a log line.

    ``conn`` is the index's connection, inside a read transaction that sees ``newest``.
    """
    described = description_path(index_path, kind)
    if not described.is_file():
        return None
    try:
        meta = json.loads(described.read_text(encoding="utf-8"))
        if meta.get("format") != FORMAT or any(meta.get(k) != v for k, v in expect.items()):
            raise ValueError("made for another model or format")
        if meta.get("identity") != identity:
            raise ValueError("made for another index")
        marks = tuple(int(m) for m in meta["marks"])
        if len(marks) != len(newest) or any(s > n for s, n in zip(marks, newest, strict=True)):
            raise ValueError("ahead of the index (an older index file?)")
        if not _still_there(conn, meta.get("last_item"), marks[-1]):
            raise ValueError("its newest item is not in the index (an older index file put back?)")
        mapped = {
            name: np.load(_data_file(index_path, entry), mmap_mode="r", allow_pickle=False)
            for name, entry in dict(meta["mapped"]).items()
        }
        arrays_path = _data_file(index_path, meta["arrays"])
        # opened here: np.load leaks its own handle when the archive is damaged
        with arrays_path.open("rb") as raw, np.load(raw, allow_pickle=False) as data:
            arrays = {name: data[name] for name in data.files}
        return build(Saved(meta=meta, marks=marks, mapped=mapped, arrays=arrays))
    except _BROKEN as exc:
        _broken(kind, index_path, exc)
        return None


def _data_file(index_path: Path, entry: Any) -> Path:
    """A data file named by a description: beside the index, of the size recorded."""
    name, size = str(entry[0]), int(entry[1])
    path = index_path.with_name(name)
    if path.parent != index_path.parent or "/" in name or "\\" in name:
        raise ValueError(f"data file {name!r} is not beside the index")
    if path.stat().st_size != size:
        raise ValueError(f"data file {name} is of another size")
    return path


def _broken(kind: str, index_path: Path, exc: Exception) -> None:
    """Log that a copy cannot be used (the caller then reads the index)."""
    reason = f"{exc.args[0]!r} is missing" if isinstance(exc, KeyError) and exc.args else exc
    log.warning(
        "saved %s copy %s cannot be used (%s); reading the index",
        kind,
        description_path(index_path, kind),
        reason,
    )


# -- is it this index's state? ----------------------------------------------------------


def last_item(cols: ItemColumns, live: Mask | None = None) -> int | None:
    """The rowid of the newest live row, whose item fingerprints the state a copy holds."""
    rowids = cols.rowids if live is None else np.where(live, cols.rowids, -1)
    if rowids.size == 0 or int(rowids.max()) < 0:
        return None
    return int(rowids.max())


def fingerprint(conn: sqlite3.Connection, rowid: int | None) -> list[Any] | None:
    """``[rowid, id, text hash]`` of that row as the index holds it now (None if gone)."""
    if rowid is None:
        return None
    found = conn.execute("SELECT id, text_hash FROM items WHERE rowid = ?", (rowid,)).fetchone()
    return None if found is None else [rowid, str(found[0]), str(found[1])]


def _still_there(conn: sqlite3.Connection, last: Any, deletions_mark: int) -> bool:
    """Whether the index holds the newest item a copy held (or deleted it since, or its
    deletion log no longer reaches back to the copy).

    Catches an older ``index.sqlite`` put back beside newer copies and written past
    their marks: the rowids match, the items do not. ``conn`` is in a read transaction.
    """
    if last is None:
        return True
    rowid = int(last[0])
    now = fingerprint(conn, rowid)
    if now is not None:
        return bool(now == [rowid, str(last[1]), str(last[2])])
    gone = conn.execute(
        "SELECT 1 FROM item_deletions WHERE item_rowid = ? AND seq > ?", (rowid, deletions_mark)
    ).fetchone()
    if gone is not None:
        return True
    # A log pruned past the copy (a rebuild empties it) cannot say; the snapshot's own
    # refresh sees the same gap and reads everything again, so the copy does no harm.
    oldest, newest = conn.execute(
        "SELECT min(seq), (SELECT coalesce(max(seq), 0) FROM sqlite_sequence"
        " WHERE name = 'item_deletions') FROM item_deletions"
    ).fetchone()
    return bool(newest > deletions_mark and (oldest is None or oldest > deletions_mark + 1))


# -- columns as arrays ------------------------------------------------------------------


def offsets(sizes: Sequence[int]) -> npt.NDArray[np.int64]:
    """Where each of parts of these ``sizes`` starts in their concatenation, and the end."""
    bounds = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=bounds[1:])
    return bounds


def strings_to_arrays(prefix: str, values: Sequence[str]) -> Arrays:
    """Strings as one UTF-8 byte array and the offsets between them."""
    encoded = [v.encode("utf-8") for v in values]
    return {
        f"{prefix}_offsets": offsets([len(e) for e in encoded]),
        f"{prefix}_bytes": np.frombuffer(b"".join(encoded), dtype=np.uint8),
    }


def strings_from_arrays(prefix: str, arrays: Mapping[str, npt.NDArray[Any]], n: int) -> list[str]:
    offsets, blob = arrays[f"{prefix}_offsets"], arrays[f"{prefix}_bytes"].tobytes()
    if offsets.shape != (n + 1,) or int(offsets[0]) != 0 or int(offsets[-1]) != len(blob):
        raise ValueError(f"{prefix} do not match the row count")
    bounds = offsets.tolist()
    return [blob[a:b].decode("utf-8") for a, b in zip(bounds, bounds[1:], strict=False)]


def _coded_to(prefix: str, column: CodedColumn, arrays: Arrays, values: dict[str, Any]) -> None:
    arrays[f"{prefix}_codes"] = column.codes
    values[prefix] = column.values()


def _coded_from(
    prefix: str, arrays: Mapping[str, npt.NDArray[Any]], values: Mapping[str, Any], n: int
) -> CodedColumn:
    codes, known = arrays[f"{prefix}_codes"], list(values[prefix])
    if codes.shape != (n,) or (n and (int(codes.min()) < 0 or int(codes.max()) >= len(known))):
        raise ValueError(f"column {prefix} does not match its values")
    return CodedColumn(codes, {v: code for code, v in enumerate(known)})


def _column(name: str, arrays: Mapping[str, npt.NDArray[Any]], n: int) -> npt.NDArray[Any]:
    column = arrays[name]
    if column.shape != (n,):
        raise ValueError(f"column {name} does not match the row count")
    return column


def item_columns_to_arrays(cols: ItemColumns) -> tuple[Arrays, dict[str, Any]]:
    """The arrays and the (JSON) code values of ``cols``."""
    arrays: Arrays = {"rowids": cols.rowids, **strings_to_arrays("ids", cols.ids.tolist())}
    values: dict[str, Any] = {}
    for name in _ITEM_CODED:
        _coded_to(f"item_{name}", getattr(cols, name), arrays, values)
    for name in _ITEM_FLOATS:
        arrays[name] = getattr(cols, name)
    return arrays, values


def item_columns_from_arrays(
    arrays: Mapping[str, npt.NDArray[Any]], values: Mapping[str, Any], n: int
) -> ItemColumns:
    ids = np.empty(n, dtype=object)
    ids[:] = strings_from_arrays("ids", arrays, n)
    coded = {name: _coded_from(f"item_{name}", arrays, values, n) for name in _ITEM_CODED}
    return ItemColumns(
        rowids=_column("rowids", arrays, n),
        ids=ids,
        agent=coded["agent"],
        tenant=coded["tenant"],
        scope=coded["scope"],
        type=coded["type"],
        status=coded["status"],
        channel=coded["channel"],
        speaker=coded["speaker"],
        created_at=_column("created_at", arrays, n),
        valid_from=_column("valid_from", arrays, n),
        valid_to=_column("valid_to", arrays, n),
        user=coded["user"],
        team=coded["team"],
    )


def context_columns_to_arrays(cols: ContextColumns) -> tuple[Arrays, dict[str, Any]]:
    arrays: Arrays = {"importance": cols.importance, "pos": cols.pos}
    values: dict[str, Any] = {}
    for name in _CONTEXT_CODED:
        _coded_to(f"context_{name}", getattr(cols, name), arrays, values)
    return arrays, values


def context_columns_from_arrays(
    arrays: Mapping[str, npt.NDArray[Any]], values: Mapping[str, Any], n: int
) -> ContextColumns:
    coded = {name: _coded_from(f"context_{name}", arrays, values, n) for name in _CONTEXT_CODED}
    return ContextColumns(
        importance=_column("importance", arrays, n),
        session=coded["session"],
        speaker=coded["speaker"],
        source_agent=coded["source_agent"],
        source_path=coded["source_path"],
        pos=_column("pos", arrays, n),
    )


def _remove_undescribed(index_path: Path, kind: str, keep: set[str]) -> None:
    """Data files of earlier saves (and of saves that never finished)."""
    for path in index_path.parent.glob(f"{index_path.name}.{kind}-*"):
        if path.name not in keep and path.suffix in (".npy", ".npz"):
            try:
                path.unlink(missing_ok=True)
            except OSError as exc:  # still mapped by a reader on a system that forbids it
                log.debug("could not remove %s yet: %s", path, exc)
