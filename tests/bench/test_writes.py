"""kronika bench writes: real writes into real workspaces, the floor beside them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kronika.bench.fixed import FixedVectors
from kronika.bench.writes import run_writes


def test_fixed_vectors_are_unit_length_and_the_same_for_the_same_text() -> None:
    vectors = FixedVectors()
    a, b = vectors.embed_documents(["tea", "tea"])
    assert np.array_equal(a, b) and abs(float(np.linalg.norm(a)) - 1.0) < 1e-5
    assert not np.array_equal(vectors.embed_query("tea"), vectors.embed_query("mate"))
    assert vectors.embed_documents([]).shape == (0, vectors.dim)


def test_each_size_reports_per_call_and_batch_rates_beside_the_floor() -> None:
    results = run_writes(
        (20, 60), calls=3, budget_s=30.0, batch=25, cli_repeats=1, turn_writers=(1, 3)
    )
    rows = results["sizes"]
    assert [r["size"] for r in rows] == [20, 60]
    for row, floor in zip(rows, results["floor"], strict=True):
        assert row["remember_calls"] == 3 and row["save_turn_calls"] == 3
        assert row["remember_per_s"] > 0 and row["save_turn_per_s"] > 0
        assert row["import_items_per_s"] > 0 and floor["per_call_per_s"] > 0
        assert row["remember_many_per_s"] > 0 and row["remember_many_batch"] == 25
        assert row["save_turns_per_s"] > 0 and row["save_turns_batch"] == 25
        assert row["save_turn_loop_per_s"] > 0 and row["save_turns_cpu_per_s"] > 0
        assert row["session_turns"] == row["size"]
        assert row["turn_forget_calls"] == 3 and row["turn_forget_per_s"] > 0
        assert row["turn_forget_cpu_ms"] > 0
        # a key's earlier values forgotten beside a history of as many values as the size
        assert row["history_values"] == row["size"]
        assert row["key_forget_calls"] == min(3, row["size"] // 20)
        assert row["key_forget_per_s"] > 0 and row["key_forget_cpu_ms"] > 0
    assert {r["command"] for r in results["cli"]} >= {
        "remember --key",
        "recall what did Ada repair?",
    }
    assert {
        "remember_per_s@60",
        "remember_many_per_s@60",
        "save_turns_per_s@60",
        "turn_forget_per_s@60",
    } <= set(results["headline"])
    assert all(r["remember_cpu_ms"] > 0 and r["import_cpu_items_per_s"] > 0 for r in rows)
    assert all(r["first_remember_s"] > 0 and r["remember_mean_ms"] > 0 for r in rows)
    (title, cpu, e2e, together, cold) = (t["title"] for t in results["tables"])
    assert "CPU" in cpu
    assert "End to end" in e2e and results["end_to_end"]["embedder"] in e2e
    ends = results["end_to_end"]
    assert ends["remember_calls"] == 3 and ends["batch"] == 25
    assert ends["remember_per_s"] > 0 and ends["embed_batch_per_s"] > 0
    assert results["headline"]["e2e_remember_many_per_s"] > 0
    assert {"remember_many(25) /s", "save_turns(25) turns/s", "turn forgotten /s"} <= set(
        results["tables"][0]["columns"]
    )
    assert "turn forgotten CPU ms" in results["tables"][1]["columns"]
    assert {"history values", "key forgotten /s"} <= set(results["tables"][0]["columns"])
    assert "key forgotten CPU ms" in results["tables"][1]["columns"]
    # the floor in the same run: single writes as many as remember()'s, one batch as large
    # as remember_many's, and kronika/floor for each
    first = results["tables"][0]
    for row, floor, line in zip(rows, results["floor"], first["rows"], strict=True):
        assert floor["size"] == row["size"] and floor["calls"] == 3 and floor["batch"] == 25
        assert floor["batch_items_per_s"] > 0 and floor["batch_cpu_items_per_s"] > 0
        ratio = results["headline"][f"remember_many_vs_floor@{row['size']}"]
        assert ratio == pytest.approx(row["remember_many_per_s"] / floor["batch_items_per_s"])
        assert line[first["columns"].index("remember_many vs floor batch")] == f"{ratio:.3f}×"
        ratio = results["headline"][f"save_turns_vs_floor@{row['size']}"]
        assert ratio == pytest.approx(row["save_turns_per_s"] / floor["batch_items_per_s"])
        assert line[first["columns"].index("save_turns vs floor batch")] == f"{ratio:.3f}×"
        ratio = results["headline"][f"remember_vs_floor@{row['size']}"]
        assert line[first["columns"].index("remember vs floor")] == f"{ratio:.3f}×"
    assert "floor batch(25) items/s" in first["columns"]
    assert "embedding excluded" in title and "Cold" in cold
    assert "several writers" in together and "fsync" in together
    rows = results["turn_writers"]["rows"]
    assert {(r["kind"], r["sessions"], r["writers"]) for r in rows} == {
        (kind, sessions, count)
        for kind in ("threads", "processes")
        for sessions, count in (("shared", 1), ("shared", 3), ("own", 3))
    }
    assert all(r["per_s"] > 0 for r in rows)


def test_the_command_writes_its_report(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "kronika", "bench", "writes", "--sizes", "20", "--calls", "2"]
        + ["--batch", "10", "--out", str(tmp_path), "--json"],
        capture_output=True,
        text=True,
        timeout=600,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["suite"] == "writes"
    assert "| 20 |" in (tmp_path / "writes.md").read_text(encoding="utf-8")
    bad = subprocess.run(
        [sys.executable, "-m", "kronika", "bench", "writes", "--sizes", "0"],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert bad.returncode != 0 and "--sizes" in bad.stderr


def test_remember_many_of_another_tree_is_measured_beside_this_one_and_the_floor(
    tmp_path: Path,
) -> None:
    import kronika
    from kronika.bench.writes_batch import add_side_by_side, side_by_side

    src = str(Path(kronika.__file__).resolve().parents[1])
    results: dict[str, object] = {"tables": []}
    made = side_by_side((30,), src, calls=2, budget_s=30.0, batch=12, rounds=2)
    add_side_by_side(results, made, 12)
    rows = results["remember_many_before"]
    assert isinstance(rows, list) and [(r["round"], r["size"]) for r in rows] == [(1, 30), (2, 30)]
    for row in rows:
        assert row["before_per_s"] > 0 and row["after_per_s"] > 0 and row["floor_per_s"] > 0
        assert row["before_cpu_per_s"] > 0 and row["after_cpu_per_s"] > 0
    (shown,) = results["tables"]  # type: ignore[misc]
    assert "remember_many(12)" in shown["title"] and len(shown["rows"]) == 2
    line = shown["rows"][0]
    ratio = rows[0]["after_per_s"] / rows[0]["floor_per_s"]
    assert line[shown["columns"].index("after vs floor")] == f"{ratio:.3f}×"
    bad = subprocess.run(
        [sys.executable, "-m", "kronika", "bench", "writes", "--sizes", "20"]
        + ["--before", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": src},
    )
    assert bad.returncode != 0 and "--before needs a src folder" in bad.stderr
