"""``kronika bench serve`` runs end to end: local and PostgreSQL, two workers each."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi", reason="the [server] extra (fastapi, uvicorn) is not installed")

from kronika.bench.serve import run_serve  # noqa: E402
from kronika.settings import Settings  # noqa: E402


def test_bench_serve_on_both_backends_with_two_workers(postgres_url: str) -> None:
    results = run_serve(
        40,
        requests=4,
        clients=(1, 2),
        budget_s=30,
        settings=Settings().with_overrides(embedder="hashing"),
        workers=(2,),
        index=f"postgres={postgres_url}",
    )
    rows = results["tables"][0]["rows"]
    served = [r for r in rows if r[2] == "server"]
    # 2 calls x 2 backends x 2 levels of clients
    assert len(served) == 8
    assert {(r[1], r[3]) for r in served} == {("local", "2"), ("postgres", "2")}
    assert results["headline"]["errors"] == 0
    assert all(float(r[7]) > 0 for r in served)
    assert results["headline"]["postgres_recall_best_per_second"] > 0


def test_each_level_says_the_load_of_the_machine_it_ran_on() -> None:
    """On a shared machine the figures mean little without what else was running."""
    results = run_serve(
        30,
        requests=3,
        clients=(1,),
        budget_s=30,
        settings=Settings().with_overrides(embedder="hashing"),
    )
    table = results["tables"][0]
    assert table["columns"][-1] == "load average"
    for row in table["rows"]:
        assert float(row[-1]) >= 0


@pytest.mark.parametrize("client", ["asyncio", "threads"])
def test_each_level_says_what_the_client_itself_took(client: str) -> None:
    """The load generator runs on the server's cores: its own CPU time per request is
    reported beside the server's, and every answer of the real server was checked."""
    results = run_serve(
        30,
        requests=6,
        clients=(1, 3),
        budget_s=30,
        settings=Settings().with_overrides(embedder="hashing"),
        client=client,
    )
    table = results["tables"][0]
    assert results["client"] == client
    at = table["columns"].index("client CPU ms/request")
    served = [r for r in table["rows"] if r[2] == "server"]
    assert len(served) == 4
    assert all(float(r[at]) > 0 and r[8] == "0" for r in served)
    for level in results["runs"][0]["servers"][0]["recall"]:
        assert (level["requests"], level["errors"], level["client"]) == (6, 0, client)
