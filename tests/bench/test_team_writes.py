"""``kronika bench team-writes``: a short real run on a local PostgreSQL."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest


def test_a_short_run_reports_time_rows_and_steps_per_call(postgres_server: object) -> None:
    from kronika.bench.team_writes import STEPS, run_team_writes
    from kronika.stores.postgres.embedded import LocalPostgres

    assert isinstance(postgres_server, LocalPostgres)
    results = run_team_writes(
        (30,),
        index=f"postgres={postgres_server.url()}",
        calls=3,
        budget_s=30,
        writers=0,
        queries=3,
        batch=5,
    )
    (row,) = results["sizes"]
    assert row["size"] == 30 and row["calls"] == 3 and row["per_s"] > 0
    # a new fact in a Brain past its budget: a few item rows per call, not the document
    assert 0 < row["rows_per_call"]["record_items_ins"] < 10
    assert set(row["steps_ms"]) == {label for label, _ in STEPS}
    assert row["steps_ms"]["record write"] > 0
    assert results["headline"]["remember_per_s@30_after"] == pytest.approx(row["per_s"])
    assert "record_items rows ins/upd/del per call" in results["tables"][1]["columns"]


def cell(table: dict[str, Any], row: list[str], column: str) -> str:
    return row[table["columns"].index(column)]


def test_the_psycopg_floor_runs_beside_kronika_in_the_same_run(postgres_server: object) -> None:
    from kronika.bench.team_writes import run_team_writes
    from kronika.stores.postgres.embedded import LocalPostgres

    assert isinstance(postgres_server, LocalPostgres)
    results = run_team_writes(
        (40,),
        index=f"postgres={postgres_server.url()}",
        calls=3,
        budget_s=30,
        writers=0,
        queries=4,
        batch=6,
    )
    (row,) = results["sizes"]
    (floor,) = results["floors"]
    # kronika's recall and remember_many at this size, and the floor's, on the same server
    assert row["questions"] == 4 and row["recall_p50_ms"] > 0 and 0 < row["recall_hits"] <= 10
    assert row["graph_wait_s"] >= 0  # asked once the vector graph is there (none at 40)
    assert row["batch"] == 6 and row["remember_many_per_s"] > 0 and row["save_turns_per_s"] > 0
    assert floor["size"] == 40 and floor["calls"] == 3 and floor["questions"] == 4
    assert floor["rows"] == 40 + 3 + 6  # stored, single inserts, the batch
    assert floor["per_call_per_s"] > 0 and floor["batch_items_per_s"] > 0
    # k nearest by vector, and up to k by keyword (some found)
    assert 10 < floor["recall_rows"] <= 20
    table = results["tables"][0]
    assert "psycopg floor" in table["title"]
    (line,) = table["rows"]
    assert cell(table, line, "stored") == "40" and cell(table, line, "code") == "after"
    for name, mine, theirs in (
        ("remember", row["per_s"], floor["per_call_per_s"]),
        ("recall", floor["recall_p50_ms"], row["recall_p50_ms"]),
        ("remember_many", row["remember_many_per_s"], floor["batch_items_per_s"]),
        ("save_turns", row["save_turns_per_s"], floor["batch_items_per_s"]),
    ):
        ratio = results["headline"][f"{name}_vs_floor@40_after"]
        assert ratio == pytest.approx(mine / theirs)
        assert cell(table, line, f"{name} vs floor") == f"{ratio:.3f}×"
    assert cell(table, line, "remember_many(6) items/s") == f"{row['remember_many_per_s']:,.0f}"
    assert cell(table, line, "save_turns(6) turns/s") == f"{row['save_turns_per_s']:,.0f}"


def test_two_workers_take_turns_on_one_agent_beside_the_writers(postgres_server: object) -> None:
    from kronika.bench.team_writes import run_team_writes
    from kronika.stores.postgres.embedded import LocalPostgres

    assert isinstance(postgres_server, LocalPostgres)
    results = run_team_writes(
        (50,),
        index=f"postgres={postgres_server.url()}",
        calls=4,
        budget_s=30,
        writers=2,
        writer_s=1.0,
        queries=0,
        batch=1,
        floor=False,
    )
    (turns,) = results["in_turn"]
    assert turns["tree"] == "after" and turns["size"] == 50 and turns["calls"] == 4
    for worker in ("first", "second"):
        assert turns[f"{worker}_cpu_ms"] > 0 and turns[f"{worker}_median_ms"] > 0
    table = results["tables"][-1]
    assert "in turn" in table["title"]
    (line,) = table["rows"]
    assert cell(table, line, "stored") == "50" and cell(table, line, "calls each") == "4"
    assert cell(table, line, "second CPU ms") == f"{turns['second_cpu_ms']:.1f}"


def test_the_writers_alone_in_rounds_give_each_layout_against_one_writer(
    postgres_server: object,
) -> None:
    from kronika.bench.team_writes import run_team_writes
    from kronika.stores.postgres.embedded import LocalPostgres

    assert isinstance(postgres_server, LocalPostgres)
    results = run_team_writes(
        (), index=f"postgres={postgres_server.url()}", writers=2, writer_s=1.0, rounds=2
    )
    assert results["sizes"] == [] and results["in_turn"] == [] and results["floors"] == []
    rows = results["writers"]
    assert [(r["round"], r["layout"]) for r in rows] == [
        (turn, layout)
        for turn in (0, 1)
        for layout in ("one agent each", "one agent, own keys", "one writer")
    ]
    assert all(r["writes"] > 0 for r in rows)
    (table,) = results["tables"][-1:]
    for line, row in zip(table["rows"], rows, strict=True):
        alone = next(r for r in rows if r["round"] == row["round"] and r["writers"] == 1)
        assert cell(table, line, "× one writer") == f"{row['per_s'] / alone['per_s']:.2f}"


def test_with_another_tree_each_size_runs_first_the_one_then_the_other(
    postgres_server: object,
) -> None:
    from kronika.bench.team_writes import own_src, run_team_writes
    from kronika.stores.postgres.embedded import LocalPostgres

    assert isinstance(postgres_server, LocalPostgres)
    # the same tree as "before": the order of the rows is what is looked at
    results = run_team_writes(
        (20, 20, 20),
        index=f"postgres={postgres_server.url()}",
        calls=2,
        budget_s=30,
        before=own_src(),
        writers=0,
        queries=0,
        batch=0,
    )
    rows = results["sizes"]
    assert [(row["size"], row["tree"]) for row in rows] == [
        (20, "after"),
        (20, "before"),
        (20, "before"),
        (20, "after"),
        (20, "after"),
        (20, "before"),
    ]
    # each row beside the floor measured in its own turn, not the last floor of its size
    floors = results["floors"]
    table = results["tables"][0]
    assert len(floors) == 3 and len(table["rows"]) == 6
    for n, line in enumerate(table["rows"]):
        floor = floors[n // 2]["per_call_per_s"]
        assert cell(table, line, "floor INSERT+COMMIT /s") == f"{floor:.1f}"


def test_conversations_stored_beside_the_facts_are_in_the_record_and_the_table(
    postgres_server: object,
) -> None:
    from kronika.bench.team_writes import run_team_writes
    from kronika.stores.postgres.embedded import LocalPostgres

    assert isinstance(postgres_server, LocalPostgres)
    results = run_team_writes(
        (20,),
        index=f"postgres={postgres_server.url()}",
        calls=2,
        budget_s=30,
        writers=0,
        queries=0,
        batch=0,
        floor=False,
        sessions=40,
    )
    (row,) = results["sizes"]
    assert row["sessions"] == 40 and row["per_s"] > 0
    # a session file each, beside the Brain, the archive and the history
    assert row["documents"] >= 40 + 2
    table = results["tables"][0]
    (line,) = table["rows"]
    assert cell(table, line, "stored") == "20 + 40 chats"


def test_the_command_skips_recall_and_the_batch_when_told_0(
    postgres_server: object, tmp_path: Path
) -> None:
    from kronika.stores.postgres.embedded import LocalPostgres

    assert isinstance(postgres_server, LocalPostgres)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    command = [sys.executable, "-m", "kronika", "bench"]
    done = subprocess.run(
        [*command, "team-writes", "--sizes", "30", "--calls", "2", "--writers", "0"]
        + ["--batch", "0", "--queries", "0", "--index", f"postgres={postgres_server.url()}"]
        + ["--out", str(tmp_path), "--json"],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["suite"] == "team-writes"
    results = json.loads((tmp_path / "team-writes.json").read_text(encoding="utf-8"))
    (row,) = results["sizes"]
    assert row["questions"] == 0 and row["batch"] == 0 and row["per_s"] > 0
    table = results["tables"][0]
    (line,) = table["rows"]
    for column in (
        "recall p50 ms",
        "remember_many(0) items/s",
        "remember_many vs floor",
        "save_turns(0) turns/s",
        "save_turns vs floor",
    ):
        assert cell(table, line, column) == "-"
    # elsewhere 0 queries or a batch of 0 is no measurement: a clear error, not a run
    bad = subprocess.run(
        [*command, "writes", "--sizes", "20", "--batch", "0"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert bad.returncode != 0 and "--batch" in bad.stderr and "Traceback" not in bad.stderr
