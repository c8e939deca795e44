"""Fixed inputs of the write benchmarks: vectors made from a text's hash, and long
synthetic sessions (``kronika bench writes``, :mod:`kronika.bench.turns`)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import UTC, datetime

import numpy as np

from kronika import SessionRecord, TurnRecord, Vector
from kronika.bench.scale import synthetic_sessions

DIM = 512


class FixedVectors:
    """An embedder whose vector for a text is fixed by the text's hash: no model, the
    same vectors for kronika and the naive floor, a few microseconds per text.

    The vector is the text's SHAKE-128 digest read as ``DIM`` signed bytes and
    normalised: distinct for distinct texts, and cheap, so that a batch of writes is
    not timed making vectors (a seeded random generator per text cost about 21 µs,
    nearly half of what the naive floor spends on a bulk-loaded row)."""

    model_id = f"fixed-vectors-{DIM}"
    dim = DIM

    def embed_documents(self, texts: Sequence[str]) -> Vector:
        digests = b"".join(hashlib.shake_128(text.encode()).digest(DIM) for text in texts)
        matrix = np.frombuffer(digests, dtype=np.int8).astype(np.float32)
        matrix = matrix.reshape(len(texts), DIM)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        unit: Vector = (matrix / np.maximum(norms, np.float32(1e-6))).astype(np.float32)
        return unit

    def embed_query(self, text: str) -> Vector:
        vector: Vector = self.embed_documents([text])[0]
        return vector


def long_session(session_id: str, length: int, seed: int) -> SessionRecord:
    """One session of ``length`` synthetic turns (save_turn's cost may grow with it)."""
    turns = [t for s in synthetic_sessions(length, seed=seed) for t in s.turns][:length]
    return SessionRecord(
        session_id=session_id,
        started_at=datetime(2024, 1, 1, tzinfo=UTC),
        turns=tuple(
            TurnRecord(f"{session_id}_{n}", t.speaker, t.content, t.at)
            for n, t in enumerate(turns, 1)
        ),
    )
