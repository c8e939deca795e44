"""The plain floors of the write benchmarks, run for real at a tiny size: a real SQLite
file, a real PostgreSQL database (pgvector), their rows and indexes read back."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from kronika.bench.floors import postgres_floor, sqlite_floor

STORED = [f"fact_{n}: Ada repaired the red bicycle in Lisbon, note {n}" for n in range(40)]
NEW = [f"new fact {n}: {n * 31}" for n in range(4)]
BATCH = [f"batch fact {n}: tea kind {n}" for n in range(12)]


def test_the_sqlite_floor_writes_every_text_with_its_vector(tmp_path: Path) -> None:
    got = sqlite_floor(tmp_path, STORED, NEW, BATCH, budget_s=30)
    assert got["size"] == 40 and got["calls"] == 4 and got["batch"] == 12
    assert got["per_call_per_s"] > 0 and got["batch_items_per_s"] > 0
    assert got["per_call_cpu_ms"] > 0
    db = sqlite3.connect(tmp_path / "floor.sqlite")
    try:
        texts = [row[0] for row in db.execute("SELECT text FROM fts ORDER BY rowid")]
        vectors = db.execute("SELECT count(*), min(length(vector)) FROM vectors").fetchone()
        found = db.execute("SELECT count(*) FROM fts WHERE fts MATCH 'bicycle'").fetchone()
    finally:
        db.close()
    assert texts == STORED + NEW + BATCH
    assert vectors == (56, 512 * 4)  # one float32 vector per text
    assert found == (40,)


def test_the_postgres_floor_inserts_indexes_and_answers(postgres_url: str) -> None:
    psycopg = pytest.importorskip("psycopg")
    questions = ["warm up", "who repaired the bicycle?", "where was Ada?"]
    got = postgres_floor(postgres_url, STORED, NEW, BATCH, questions, budget_s=30, k=5)
    assert got["size"] == 40 and got["calls"] == 4 and got["batch"] == 12
    assert got["rows"] == 56
    assert got["per_call_per_s"] > 0 and got["batch_items_per_s"] > 0
    # the first question only warms up; each other finds k by keyword and k by vector
    # (the batch comes after the questions)
    assert got["questions"] == 2 and got["recall_p50_ms"] > 0
    assert 0 < got["recall_keyword_p50_ms"] <= got["recall_p50_ms"]
    assert got["recall_rows"] == 10
    with psycopg.connect(postgres_url) as conn:
        kinds = {
            row[0]: row[1]
            for row in conn.execute(
                "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'floor_items'"
            )
        }
        column = conn.execute(
            "SELECT format_type(atttypid, atttypmod), attstorage FROM pg_attribute"
            " WHERE attrelid = 'floor_items'::regclass AND attname = 'embedding'"
        ).fetchone()
    assert "USING gin (tsv)" in kinds["floor_items_tsv"]
    assert "USING hnsw (embedding vector_cosine_ops)" in kinds["floor_items_embedding"]
    # the vectors kept in the row (as kronika's), so the planner walks the HNSW index
    assert column == ("vector(512)", "m")
