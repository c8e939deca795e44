"""Items with their cached vectors, read for a vector index kept outside SQLite."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

import numpy as np

from kronika.ports import VectorPoint
from kronika.stores.sqlite import rows as R

_CHUNK = 500
_SELECT = R.SELECT_ITEM_SQL.replace(" FROM items AS i", ", i.text_hash FROM items AS i", 1)


def vector_points(
    conn: sqlite3.Connection, text_hashes: Iterable[str], model: str, dim: int
) -> list[VectorPoint]:
    """Every item whose embedded text is one of ``text_hashes`` and has a cached vector
    of ``model``, with that vector; items without one are left out."""
    wanted = sorted(set(text_hashes))
    vectors: dict[str, np.ndarray] = {}
    points: list[VectorPoint] = []
    for start in range(0, len(wanted), _CHUNK):
        chunk = wanted[start : start + _CHUNK]
        marks = ", ".join("?" * len(chunk))
        for text_hash, blob in conn.execute(
            f"SELECT text_hash, vec FROM embeddings WHERE model = ? AND length(vec) = ?"
            f" AND text_hash IN ({marks})",
            [model, dim * 4, *chunk],
        ):
            vectors[text_hash] = np.frombuffer(blob, dtype="<f4").astype(np.float32)
    found = sorted(vectors)
    for start in range(0, len(found), _CHUNK):
        chunk = found[start : start + _CHUNK]
        marks = ", ".join("?" * len(chunk))
        for row in conn.execute(f"{_SELECT} WHERE i.text_hash IN ({marks})", chunk):
            text_hash = row[-1]
            points.append(VectorPoint(R.item_from_row(row[:-1]), text_hash, vectors[text_hash]))
    return points


def every_text_hash(conn: sqlite3.Connection) -> list[str]:
    """The distinct text hashes of every indexed item (to fill a vector index anew)."""
    return [h for (h,) in conn.execute("SELECT DISTINCT text_hash FROM items")]
