from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("qdrant_client", reason="the [qdrant] extra (qdrant-client) is not installed")

from kronika.bench import headline, run_vectors  # noqa: E402
from kronika.settings import Settings  # noqa: E402


def test_qdrant_and_the_built_in_vectors_answer_the_same_queries(tmp_path: Path) -> None:
    settings = Settings().with_overrides(embedder="hashing")
    results = run_vectors((250,), queries=4, repeats=1, settings=settings, workdir=tmp_path)
    (row,) = results["sizes"]
    assert row["qdrant_points"] == 250
    for engine in ("builtin", "qdrant"):
        assert row[engine]["recall_at_10"] == 1.0  # both exact at this size
        assert 0 < row[engine]["search_p50_ms"] <= row[engine]["search_p95_ms"]
    assert headline(results)["qdrant_recall_at_10@250"] == 1.0
    assert [r[1] for r in results["tables"][0]["rows"]] == ["built-in", "Qdrant local"]
    again = run_vectors((250,), queries=4, repeats=1, settings=settings, workdir=tmp_path)
    assert again["sizes"][0]["ingest_s"] is None and again["sizes"][0]["qdrant_points"] == 250
