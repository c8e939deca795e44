from __future__ import annotations

from pathlib import Path

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
    results = run_scale(
        (150,), queries=4, repeats=1, settings=Settings().with_overrides(embedder="hashing")
    )
    (row,) = results["sizes"]
    assert row["size"] == 150 and row["items_per_s"] > 0
    assert 0 < row["p50_ms"] <= row["p95_ms"]
    assert 0 < row["p50_ms_no_embed"] <= row["p95_ms_no_embed"]
    flat = headline(results)
    assert flat["items_per_s@150"] == row["items_per_s"]
    assert "150" in results["tables"][0]["rows"][0][0]


def test_above_the_threshold_the_graph_is_built_timed_and_checked(tmp_path: Path) -> None:
    settings = Settings().with_overrides(embedder="hashing", ann_threshold=300)
    results = run_scale((600,), queries=5, repeats=1, settings=settings, workdir=tmp_path)
    (row,) = results["sizes"]
    assert row["graph_s"] is not None and row["graph_s"] >= 0
    assert row["graph_recall_10"] >= 0.9 and row["graph_recall_100"] >= 0.9
    assert (tmp_path / "scale-600" / "index.sqlite.ann").is_file()
    assert (tmp_path / "scale-600" / "index.sqlite.vectors.json").is_file()
    again = run_scale((600,), queries=5, repeats=1, settings=settings, workdir=tmp_path)
    (reused,) = again["sizes"]
    assert reused["ingest_s"] is None and "reused" in again["tables"][0]["rows"][0]
    assert reused["open_s"] > 0 and reused["first_answers_s"] > 0
    below = run_scale((150,), queries=2, repeats=1, settings=settings)
    assert below["sizes"][0]["graph_s"] is None
    assert "graph_recall_10@150" not in headline(below)
