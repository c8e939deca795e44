"""A copy of the vector snapshot saved beside the index file, so a restart need not read SQLite.

Loading a million vectors from SQLite takes about 20 seconds (a join over 2 GB of
blobs, row by row); the saved copy is memory-mapped instead, and the snapshot then
catches up with what changed since it was saved through the same logs an open
snapshot reads (:meth:`VectorSnapshot.refresh`). Like the vector graph (:mod:`.ann`)
it is a cache: a missing, unreadable, foreign or stale copy is ignored, with a log
line, and the snapshot is read from SQLite as before.

Three files, named after the index (``index.sqlite``):

* ``index.sqlite.vectors.json``: the description (format, model, dimension, the
  index's identity, the marks covered, the row count and the names of the two data
  files). It is written last, so a description never names files not yet complete.
* ``index.sqlite.vectors-<token>.npy``: the unit vectors, float32, one row per item.
* ``index.sqlite.vectors-<token>.npz``: the filter columns of those rows.

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
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from kronika.stores.sqlite.columns import CodedColumn, ItemColumns
from kronika.stores.sqlite.vectors import Marks, VectorSnapshot

log = logging.getLogger("kronika")

FORMAT = 1
_CODED = ("agent", "tenant", "scope", "type", "status", "channel", "speaker")
_FLOATS = ("created_at", "valid_from", "valid_to")


def description_path(index_path: Path) -> Path:
    return index_path.with_name(index_path.name + ".vectors.json")


def _data_paths(index_path: Path, token: str) -> tuple[Path, Path]:
    stem = f"{index_path.name}.vectors-{token}"
    return index_path.with_name(stem + ".npy"), index_path.with_name(stem + ".npz")


def save(
    snapshot: VectorSnapshot, index_path: Path, *, model: str, dim: int, identity: str
) -> bool:
    """Write ``snapshot`` (its live rows) beside ``index_path``; False (logged) on failure."""
    live = snapshot.live if snapshot.dead else None
    cols = snapshot.cols if live is None else snapshot.cols.take(live)
    matrix = snapshot.matrix if live is None else snapshot.matrix[live]
    token = secrets.token_hex(8)
    matrix_path, columns_path = _data_paths(index_path, token)
    described = description_path(index_path)
    pending = described.with_name(f"{described.name}.{os.getpid()}.tmp")
    try:
        with matrix_path.open("wb") as out:
            np.save(out, np.ascontiguousarray(matrix, dtype=np.float32), allow_pickle=False)
        ids = [str(i).encode("utf-8") for i in cols.ids.tolist()]
        offsets = np.zeros(len(ids) + 1, dtype=np.int64)
        np.cumsum([len(i) for i in ids], out=offsets[1:])
        arrays: dict[str, Any] = {
            "rowids": cols.rowids,
            "id_offsets": offsets,
            "id_bytes": np.frombuffer(b"".join(ids), dtype=np.uint8),
        }
        values: dict[str, list[str | None]] = {}
        for name in _CODED:
            column: CodedColumn = getattr(cols, name)
            arrays[f"{name}_codes"] = column.codes
            values[name] = column.values()
        for name in _FLOATS:
            arrays[name] = getattr(cols, name)
        with columns_path.open("wb") as out:
            np.savez(out, allow_pickle=False, **arrays)
        meta = {
            "format": FORMAT,
            "model": model,
            "dim": dim,
            "identity": identity,
            "marks": list(snapshot.marks),
            "rows": len(cols),
            "matrix": matrix_path.name,
            "matrix_bytes": matrix_path.stat().st_size,
            "columns": columns_path.name,
            "columns_bytes": columns_path.stat().st_size,
            "values": values,
        }
        pending.write_text(json.dumps(meta), encoding="utf-8")
        os.replace(pending, described)
    except (OSError, ValueError) as exc:
        log.warning("could not save the vectors beside %s: %s", index_path, exc)
        for path in (matrix_path, columns_path, pending):
            path.unlink(missing_ok=True)
        return False
    _remove_undescribed(index_path, keep={matrix_path.name, columns_path.name})
    return True


def load(
    index_path: Path, *, model: str, dim: int, identity: str, newest: Marks
) -> VectorSnapshot | None:
    """The saved snapshot if it is whole, made for this index and model, and not ahead of
    ``newest`` (the index's marks now); else ``None``. The matrix is memory-mapped."""
    described = description_path(index_path)
    if not described.is_file():
        return None
    try:
        meta = json.loads(described.read_text(encoding="utf-8"))
        if (
            meta.get("format") != FORMAT
            or meta.get("model") != model
            or meta.get("dim") != dim
            or meta.get("identity") != identity
        ):
            raise ValueError("made for another index, model or format")
        marks = (int(meta["marks"][0]), int(meta["marks"][1]), int(meta["marks"][2]))
        if any(saved > now for saved, now in zip(marks, newest, strict=True)):
            raise ValueError("ahead of the index (an older index file?)")
        matrix_path = index_path.with_name(str(meta["matrix"]))
        columns_path = index_path.with_name(str(meta["columns"]))
        if (
            matrix_path.parent != index_path.parent
            or columns_path.parent != index_path.parent
            or matrix_path.stat().st_size != meta["matrix_bytes"]
            or columns_path.stat().st_size != meta["columns_bytes"]
        ):
            raise ValueError("a data file is missing or of another size")
        rows = int(meta["rows"])
        matrix = np.load(matrix_path, mmap_mode="r", allow_pickle=False)
        if matrix.dtype != np.float32 or matrix.shape != (rows, dim):
            raise ValueError("vectors of another shape")
        cols = _columns(columns_path, rows, meta["values"])
    except (
        OSError,
        ValueError,
        KeyError,
        TypeError,
        IndexError,
        EOFError,
        zipfile.BadZipFile,
    ) as exc:
        log.warning(
            "saved vectors %s cannot be used (%s); reading them from the index", described, exc
        )
        return None
    return VectorSnapshot(
        cols=cols,
        buffer=matrix,
        live=np.ones(rows, dtype=np.bool_),
        dead=0,
        marks=marks,
    )


def _columns(path: Path, rows: int, values: dict[str, list[str | None]]) -> ItemColumns:
    # the file is opened here: np.load leaks its own handle when the archive is damaged
    with path.open("rb") as raw, np.load(raw, allow_pickle=False) as data:
        offsets = data["id_offsets"]
        blob = data["id_bytes"].tobytes()
        if offsets.shape != (rows + 1,) or int(offsets[-1]) != len(blob):
            raise ValueError("item ids do not match the row count")
        bounds = offsets.tolist()
        ids = np.empty(rows, dtype=object)
        ids[:] = [blob[a:b].decode("utf-8") for a, b in zip(bounds, bounds[1:], strict=False)]
        coded: dict[str, CodedColumn] = {}
        for name in _CODED:
            codes = data[f"{name}_codes"]
            known = list(values[name])
            if codes.shape != (rows,) or (rows and (codes.min() < 0 or codes.max() >= len(known))):
                raise ValueError(f"column {name} does not match its values")
            coded[name] = CodedColumn(codes, {v: n for n, v in enumerate(known)})
        floats = {name: data[name] for name in _FLOATS}
        rowids = data["rowids"]
    if rowids.shape != (rows,) or any(f.shape != (rows,) for f in floats.values()):
        raise ValueError("columns do not match the row count")
    return ItemColumns(
        rowids=rowids,
        ids=ids,
        agent=coded["agent"],
        tenant=coded["tenant"],
        scope=coded["scope"],
        type=coded["type"],
        status=coded["status"],
        channel=coded["channel"],
        speaker=coded["speaker"],
        created_at=floats["created_at"],
        valid_from=floats["valid_from"],
        valid_to=floats["valid_to"],
    )


def _remove_undescribed(index_path: Path, keep: set[str]) -> None:
    """Data files of earlier saves (and of saves that never finished)."""
    prefix = f"{index_path.name}.vectors-"
    for path in index_path.parent.glob(prefix + "*"):
        if path.name not in keep and path.suffix in (".npy", ".npz"):
            try:
                path.unlink(missing_ok=True)
            except OSError as exc:  # still mapped by a reader on a system that forbids it
                log.debug("could not remove %s yet: %s", path, exc)
