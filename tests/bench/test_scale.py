from __future__ import annotations

from kronika.bench import headline, run_scale
from kronika.bench.scale import synthetic_queries, synthetic_sessions
from kronika.settings import Settings


def test_synthetic_corpus_is_deterministic_and_varied() -> None:
    first = list(synthetic_sessions(250))
    again = list(synthetic_sessions(250))
    assert first == again
    assert [len(s.turns) for s in first] == [100, 100, 50]
    texts = [t.content for s in first for t in s.turns]
    assert len(set(texts)) == len(texts)
    assert synthetic_queries(5) == synthetic_queries(5)


def test_run_scale_reports_speed_per_size() -> None:
    results = run_scale((150,), queries=4, repeats=1, settings=Settings(embedder="hashing"))
    (row,) = results["sizes"]
    assert row["size"] == 150 and row["items_per_s"] > 0
    assert 0 < row["p50_ms"] <= row["p95_ms"]
    assert 0 < row["p50_ms_no_embed"] <= row["p95_ms_no_embed"]
    flat = headline(results)
    assert flat["items_per_s@150"] == row["items_per_s"]
    assert "150" in results["tables"][0]["rows"][0][0]
