"""LoCoMo retrieval benchmark (the paper's protocol, BENCHMARKS.md).

Each conversation is imported into its own agent; every question with evidence is
asked of that agent with ``now`` = the day after the last session and
``record_access=False`` (a benchmark must not perturb the scores it measures).

recall@k = |evidence ∩ turns cited by the top-k hits| / |evidence|, averaged over
questions. The headline row averages categories 1-4 (1 multi-hop, 2 temporal,
3 open-domain, 4 single-hop); category 5 (adversarial) is reported on its own, and
an "all" row (1-5) is given for comparison with figures computed that way.
recall within a token budget B counts only the leading hits whose text fits in B.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from kronika import Mode, Settings
from kronika.bench._runtime import (
    BenchMemory,
    Progress,
    average_rows,
    bench_memory,
    cited_turns,
    embedder_id,
    hit_tokens,
    primary_mode,
    rows_of,
    run_timings,
    settings_summary,
)
from kronika.bench.metrics import LOCOMO_KS, budget_prefix, evidence_recall
from kronika.bench.report import table
from kronika.testing import read_locomo

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
HEADLINE_CATEGORIES = (1, 2, 3, 4)


def _question_scores(
    evidence: Sequence[str],
    cited: list[tuple[str, ...]],
    tokens: list[int],
    ks: Sequence[int],
    budgets: Sequence[int],
) -> dict[str, float]:
    scores = {f"recall@{k}": evidence_recall(evidence, cited, k) for k in ks}
    for budget in budgets:
        fit = budget_prefix(tokens, budget)
        scores[f"recall@{budget}tok"] = evidence_recall(evidence, cited, fit)
    return scores


def run_locomo(
    path: str | Path,
    *,
    modes: Sequence[Mode] = ("lexical", "vector", "hybrid"),
    ks: Sequence[int] = LOCOMO_KS,
    budgets: Sequence[int] = (1000, 2000, 4000),
    depth: int = 200,
    settings: Settings | None = None,
    workdir: Path | None = None,
    limit: int | None = None,
    memory: BenchMemory | None = None,
    progress: Progress | None = None,
    index: str | None = None,
    lexical: str = "bm25",
) -> dict[str, Any]:
    """Run the LoCoMo protocol; returns a JSON-ready results dict (see ``docs/benchmarking.md``).

    ``depth`` hits are retrieved per question (at least ``max(ks)``) so token-budget
    recall has enough text to fill; ``limit`` keeps only the first conversations.
    """
    conversations = read_locomo(path)[:limit]
    depth = max(depth, *ks)
    per_mode: dict[str, dict[int, list[dict[str, float]]]] = {m: defaultdict(list) for m in modes}
    latencies: dict[str, list[float]] = {m: [] for m in modes}
    ingest_s, turns, skipped = 0.0, 0, 0
    with bench_memory(settings, workdir=workdir, memory=memory, index=index, lexical=lexical) as (
        mem,
        used,
    ):
        for n, conv in enumerate(conversations):
            if progress:
                progress(conv.sample_id, n, len(conversations))
            start = time.perf_counter()
            mem.import_sessions(conv.agent, conv.sessions)
            ingest_s += time.perf_counter() - start
            turns += sum(len(s.turns) for s in conv.sessions)
            now = max(s.started_at for s in conv.sessions) + timedelta(days=1)
            for qa in conv.qa:
                if not qa.evidence:
                    skipped += 1
                    continue
                for mode in modes:
                    began = time.perf_counter()
                    result = mem.recall(
                        qa.question,
                        agent=conv.agent,
                        k=depth,
                        mode=mode,
                        now=now,
                        record_access=False,
                    )
                    ms = (time.perf_counter() - began) * 1000.0
                    latencies[mode].append(ms)
                    one = _question_scores(
                        qa.evidence, cited_turns(result), hit_tokens(result), ks, budgets
                    )
                    per_mode[mode][qa.category].append(one)
        if progress:
            progress("done", len(conversations), len(conversations))
        model = embedder_id(mem)
    scores: dict[str, Any] = {}
    for mode in modes:
        cats = per_mode[mode]
        scores[mode] = {
            "overall": average_rows([r for c in HEADLINE_CATEGORIES for r in cats.get(c, [])]),
            "all": average_rows([r for rows in cats.values() for r in rows]),
            "by_category": {str(c): average_rows(cats.get(c, [])) for c in CATEGORIES},
        }
    results: dict[str, Any] = {
        "benchmark": "locomo",
        "dataset": str(path),
        "modes": list(modes),
        "ks": list(ks),
        "budgets": list(budgets),
        "depth": depth,
        "conversations": len(conversations),
        "questions_skipped_no_evidence": skipped,
        "embedder": model,
        "settings": settings_summary(used),
        "index": index or "sqlite",
        "lexical": lexical if index and index != "sqlite" else None,
        "scores": scores,
        "timings": run_timings(ingest_s, turns, latencies),
    }
    results["headline"] = _headline(scores, primary_mode(modes), ks)
    results["tables"] = _tables(results)
    return results


def _headline(scores: dict[str, Any], primary: str, ks: Sequence[int]) -> dict[str, float]:
    flat: dict[str, float] = {}
    for mode, block in scores.items():
        for k in ks:
            flat[f"{mode}.recall@{k}"] = block["overall"].get(f"recall@{k}", 0.0)
    for k in ks:
        flat[f"recall@{k}"] = flat[f"{primary}.recall@{k}"]
    return flat


def _tables(results: dict[str, Any]) -> list[dict[str, Any]]:
    ks, budgets = results["ks"], results["budgets"]
    keys = [f"recall@{k}" for k in ks] + [f"recall@{b}tok" for b in budgets]
    columns = ["mode", "rows", "questions", *keys]
    rows: list[list[str]] = []
    for mode, block in results["scores"].items():
        labelled = [("1-4 (headline)", block["overall"]), ("1-5 (all)", block["all"])]
        labelled += [(f"{c} {CATEGORIES[int(c)]}", row) for c, row in block["by_category"].items()]
        for label, row in labelled:
            rows.append([mode, label, str(int(row.get("questions", 0))), *rows_of(row, keys)])
    timing = results["timings"]
    speed = [
        [m, f"{t['p50']:.1f}", f"{t['p95']:.1f}", f"{t['mean']:.1f}"]
        for m, t in timing["recall_ms"].items()
    ]
    return [
        table("LoCoMo evidence recall by category", columns, rows),
        table(
            "LoCoMo recall latency (ms, query embedding included)",
            ["mode", "p50", "p95", "mean"],
            speed,
        ),
        table(
            "LoCoMo ingest",
            ["conversations", "turns", "seconds", "turns/s", "peak RSS MiB"],
            [
                [
                    str(results["conversations"]),
                    str(timing["turns"]),
                    f"{timing['ingest_s']:.1f}",
                    f"{timing['turns_per_s']:.0f}",
                    f"{timing['peak_rss_mb']:.0f}",
                ]
            ],
        ),
    ]
