"""``kronika bench round-trips``: a short real run on a local PostgreSQL, through the
counting proxy."""

from __future__ import annotations

import pytest


def test_a_short_run_counts_and_times_each_call(postgres_server: object) -> None:
    from kronika.bench.round_trips import BATCH, CALLS, run_round_trips
    from kronika.stores.postgres.embedded import LocalPostgres

    assert isinstance(postgres_server, LocalPostgres)
    results = run_round_trips(
        index=f"postgres={postgres_server.url()}", turns=60, calls=2, counted=2, delay_ms=2.0
    )
    (row,) = results["rows"]
    assert row["tree"] == "after"
    for kind in CALLS:
        assert len(row["waits_all"][kind]) == 2
        # every call waits for the server at least for its commit, and far fewer times
        # than it sends statements
        assert 1 <= row["waits"][kind] <= (40 if kind == "remember_many" else 20), row
        assert row["ms_near"][kind] > 0 and row["ms_away"][kind] > 0
    assert results["headline"]["waits_remember_after"] == row["waits"]["remember"]
    (table,) = results["tables"]
    assert [r[0] for r in table["rows"]] == [
        *CALLS[:3],
        "recall, words no item holds",
        f"remember_many({BATCH})",
    ]
    assert "2 ms away" in " ".join(table["columns"])


def test_it_measures_team_mode_only() -> None:
    from kronika import KronikaError
    from kronika.bench.round_trips import run_round_trips

    with pytest.raises(KronikaError, match="team mode"):
        run_round_trips(index="sqlite")
