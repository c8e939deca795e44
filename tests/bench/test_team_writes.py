"""``kronika bench team-writes``: a short real run on a local PostgreSQL."""

from __future__ import annotations

import pytest


def test_a_short_run_reports_time_rows_and_steps_per_call(postgres_server: object) -> None:
    from kronika.bench.team_writes import STEPS, run_team_writes
    from kronika.stores.postgres.embedded import LocalPostgres

    assert isinstance(postgres_server, LocalPostgres)
    results = run_team_writes(
        (30,), index=f"postgres={postgres_server.url()}", calls=3, budget_s=30, writers=0
    )
    (row,) = results["sizes"]
    assert row["size"] == 30 and row["calls"] == 3 and row["per_s"] > 0
    # a new fact in a Brain past its budget: a few item rows per call, not the document
    assert 0 < row["rows_per_call"]["record_items_ins"] < 10
    assert set(row["steps_ms"]) == {label for label, _ in STEPS}
    assert row["steps_ms"]["record write"] > 0
    assert results["headline"]["remember_per_s@30_after"] == pytest.approx(row["per_s"])
    assert "record_items rows ins/upd/del per call" in results["tables"][0]["columns"]
