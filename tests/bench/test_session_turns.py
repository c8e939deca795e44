"""``kronika bench session-turns``: a short real run on both backends."""

from __future__ import annotations


def test_a_short_run_times_both_backends_at_each_length_with_steps(
    postgres_server: object,
) -> None:
    from kronika.bench.session_turns import STEPS, run_session_turns
    from kronika.stores.postgres.embedded import LocalPostgres

    assert isinstance(postgres_server, LocalPostgres)
    results = run_session_turns(
        (5, 40), index=f"postgres={postgres_server.url()}", calls=3, budget_s=30
    )
    rows = {(r["backend"], r["turns"]): r for r in results["rows"]}
    assert set(rows) == {("local", 5), ("local", 40), ("postgres", 5), ("postgres", 40)}
    for (backend, turns), row in rows.items():
        assert row["calls"] == 3 and row["median_ms"] > 0
        # the imported turns, then the warm-up, timed and profiled ones, all there
        assert row["turns_after"] == turns + 3 + 3 + 10  # the other session aside
        assert set(row["steps_ms"]) == {label for label, _ in STEPS}
        assert row["steps_ms"]["file append"] > 0
        assert (row["steps_ms"]["record write"] > 0) == (backend == "postgres")
        assert (row["wal_kb"] > 0) == (backend == "postgres")
    assert "median vs the shortest" in results["tables"][0]["columns"]
    # two workers taking turns: the pulling worker's calls, its copy the other's
    pulls = {r["turns"]: r for r in results["pulls"]}
    assert set(pulls) == {5, 40}
    for turns, row in pulls.items():
        assert row["calls"] == 3 and row["cpu_ms"] > 0 and row["same_file"]
        # imported, then each worker's warm-up, timed and profiled turns
        assert row["turns_after"] == turns + 2 * (3 + 3 + 10)
        assert row["steps_ms"]["pull"] > 0
        assert row["steps_ms"]["file extended"] > 0  # the other's turn added in place
        assert row["steps_ms"]["file read + hashed"] == 0  # the copy is not read whole
    assert "copies byte-identical" in results["tables"][2]["columns"]
