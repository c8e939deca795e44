"""What every benchmark needs: a throw-away workspace, a clock, and memory readings."""

from __future__ import annotations

import contextlib
import resource
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from kronika import SETTINGS_TABLE, Embedder, Mode, RecallResult, SessionRecord, Settings, Vector
from kronika.bench.metrics import mean, percentile

Progress = Callable[[str, int, int], None]
"""``progress(stage, done, total)``: stage is a label such as ``"conv-26"``; total 0 = unknown."""


class BenchMemory(Protocol):
    """The part of :class:`kronika.Memory` a benchmark drives."""

    def import_sessions(
        self, agent: str, sessions: Iterable[SessionRecord], *, progress: Any = None
    ) -> Any: ...

    def recall(
        self,
        query: str,
        *,
        agent: str | None = None,
        k: int | None = None,
        mode: Mode = "hybrid",
        now: datetime | None = None,
        record_access: bool = True,
        query_vector: Vector | None = None,
    ) -> RecallResult: ...

    def close(self) -> None: ...


def timed_calls(
    call: Callable[[int], object], calls: int, budget_s: float, cpu: list[float] | None = None
) -> list[float]:
    """Wall time of each call; the process's CPU time for the series is added to
    ``cpu`` (a median of wall times is what a caller waits, CPU time what the calls
    cost, which other work on a shared machine inflates less)."""
    spent: list[float] = []
    began = time.perf_counter()
    used = time.process_time()
    for n in range(calls):
        start = time.perf_counter()
        call(n)
        spent.append(time.perf_counter() - start)
        if time.perf_counter() - began > budget_s and len(spent) >= 3:
            break
    if cpu is not None:
        cpu.append(time.process_time() - used)
    return spent


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far, in MiB (Linux reports KiB, macOS bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def settings_summary(settings: Settings) -> dict[str, Any]:
    """The settings as JSON-friendly values (the workspace path is left out, an API key
    shows only whether one was set)."""
    out: dict[str, Any] = {}
    for spec in SETTINGS_TABLE:
        if spec.name == "home":
            continue
        value = getattr(settings, spec.name)
        out[spec.name] = ("***" if value else "") if spec.name.endswith("_api_key") else value
    out["storage"] = asdict(settings.storage)
    out["teams"] = {team: list(members) for team, members in settings.teams.items()}
    return out


def bench_settings(settings: Settings | None, home: Path) -> Settings:
    """``settings`` moved to the benchmark's own workspace, otherwise untouched.

    A benchmark asks for its depth of hits as ``k``; each retriever then contributes at least
    that many candidates (the recall fetches ``max(recall_candidates, k)``) while
    relevance is still normalised over the default ``recall_candidates``, so the
    top of the list is scored exactly as with default settings.
    """
    base = settings or Settings()
    return base.with_overrides(home=home)


@contextmanager
def bench_memory(
    settings: Settings | None,
    *,
    workdir: Path | None,
    memory: BenchMemory | None,
    embedder: Embedder | None = None,
    index: str | None = None,
    lexical: str = "bm25",
) -> Iterator[tuple[BenchMemory, Settings]]:
    """A memory on a fresh workspace (temporary unless ``workdir`` is given).

    A benchmark never writes into the user's own workspace. A ready ``memory`` (a
    stand-in in tests) is used as it is. ``index`` ``postgres[=URL]`` puts the search
    index in a fresh PostgreSQL database (:mod:`kronika.bench.postgres`; ``lexical``
    picks its keyword scoring) instead of SQLite.
    """
    if memory is not None:
        yield memory, settings or Settings()
        return
    from kronika import build_embedder, build_memory  # only needed for real runs
    from kronika.bench.postgres import open_index, postgres_site

    with (
        tempfile.TemporaryDirectory(prefix="kronika-bench-") as tmp,
        postgres_site(index) as site,
        contextlib.ExitStack() as stack,
    ):
        home = Path(workdir) if workdir is not None else Path(tmp) / "home"
        chosen = bench_settings(settings, home)
        pg = None
        if site is not None:
            embedder = embedder or build_embedder(
                chosen.embedder,
                threads=chosen.embedder_threads,
                without_mood=chosen.embed_without_mood,
            )
            pg = stack.enter_context(open_index(site, chosen, embedder, lexical=lexical))
        real = build_memory(chosen, create=True, embedder=embedder, index=pg)
        try:
            yield real, chosen
        finally:
            real.close()


def embedder_id(memory: BenchMemory) -> str | None:
    """The embedding model id of a real memory (None for stand-ins without one)."""
    model = getattr(memory, "embedder", None)
    return str(model.model_id) if model is not None else None


def cited_turns(result: RecallResult) -> list[tuple[str, ...]]:
    """For each hit, the conversation turns it cites (a turn cites itself)."""
    return [hit.item.provenance.turn_ids for hit in result.hits]


def hit_tokens(result: RecallResult) -> list[int]:
    return [hit.tokens for hit in result.hits]


def fmt(value: float, digits: int = 3) -> str:
    return f"{value:.{digits}f}"


def rows_of(metrics: dict[str, float], keys: Sequence[str]) -> list[str]:
    return [fmt(metrics.get(key, 0.0)) for key in keys]


def average_rows(rows: Sequence[dict[str, float]]) -> dict[str, float]:
    """The mean of each metric over ``rows`` (one row per question), and their count."""
    out = {key: mean(row[key] for row in rows) for key in (rows[0] if rows else {})}
    out["questions"] = float(len(rows))
    return out


def run_timings(ingest_s: float, turns: int, latencies: dict[str, list[float]]) -> dict[str, Any]:
    """Ingest speed, recall latency per mode (ms) and peak memory, as results record them."""
    return {
        "ingest_s": ingest_s,
        "turns": turns,
        "turns_per_s": turns / ingest_s if ingest_s else 0.0,
        "recall_ms": {
            m: {"p50": percentile(v, 50), "p95": percentile(v, 95), "mean": mean(v)}
            for m, v in latencies.items()
        },
        "peak_rss_mb": peak_rss_mb(),
    }


def primary_mode(modes: Sequence[Mode]) -> Mode:
    """The mode a headline figure comes from: hybrid when measured."""
    return "hybrid" if "hybrid" in modes else modes[0]
