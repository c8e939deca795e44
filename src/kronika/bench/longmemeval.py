"""LongMemEval retrieval benchmark (the official retrieval protocol, BENCHMARKS.md).

Only user turns are indexed (turn ``<session_id>_<i+1>``, ``i`` counting all turns).
Abstention questions (``_abs``) and questions without user-side evidence are
skipped. Each question's haystack goes into its own agent; the question is asked
with ``now`` = its ``question_date`` and ``record_access=False``.

Turn ranking = the turns cited by the hits, in hit order, each once. Session ranking =
sessions in order of their first appearance among those turns; ``depth`` hits are
retrieved (300 by default) so that 50 sessions can be ranked. Metrics at
k ∈ {1, 3, 5, 10, 30, 50}: recall_all, recall_any, ndcg_any (see ``metrics``).
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kronika import Mode, RecallResult, Settings
from kronika.bench._runtime import (
    BenchMemory,
    Progress,
    average_rows,
    bench_memory,
    embedder_id,
    primary_mode,
    rows_of,
    run_timings,
    settings_summary,
)
from kronika.bench.metrics import (
    LONGMEMEVAL_KS,
    dedupe,
    ndcg_any,
    recall_all,
    recall_any,
)
from kronika.bench.report import table
from kronika.testing import LongMemEvalQuestion, iter_longmemeval

METRICS = ("recall_all", "recall_any", "ndcg_any")


def rankings(result: RecallResult, question: LongMemEvalQuestion) -> tuple[list[str], list[str]]:
    """``(ranked sessions, ranked turns)`` from the hits of one recall."""
    return ranked(result, session_map(question))


def session_map(question: LongMemEvalQuestion) -> dict[str, str]:
    """The session of each turn of ``question``'s haystack."""
    return {t.turn_id: s.session_id for s in question.sessions for t in s.turns}


def ranked(result: RecallResult, session_of: dict[str, str]) -> tuple[list[str], list[str]]:
    """``(ranked sessions, ranked turns)`` from the hits of one recall, with the turn
    → session map of its haystack (:func:`session_map`)."""
    turns: list[str] = []
    sessions: list[str] = []
    for hit in result.hits:
        cited = hit.item.provenance.turn_ids
        turns.extend(cited)
        found = [session_of[t] for t in cited if t in session_of]
        sessions.extend(found or ([hit.item.provenance.session_id or ""]))
    return [s for s in dedupe(sessions) if s], dedupe(turns)


def score_rankings(
    gold: frozenset[str], ranked: Sequence[str], ks: Sequence[int]
) -> dict[str, float]:
    """recall_all@k, recall_any@k and ndcg_any@k of one ranking, for every k."""
    out: dict[str, float] = {}
    for k in ks:
        out[f"recall_all@{k}"] = recall_all(gold, ranked, k)
        out[f"recall_any@{k}"] = recall_any(gold, ranked, k)
        out[f"ndcg_any@{k}"] = ndcg_any(gold, ranked, k)
    return out


def run_longmemeval(
    path: str | Path,
    *,
    modes: Sequence[Mode] = ("hybrid",),
    ks: Sequence[int] = LONGMEMEVAL_KS,
    depth: int = 300,
    limit: int | None = None,
    settings: Settings | None = None,
    workdir: Path | None = None,
    memory: BenchMemory | None = None,
    progress: Progress | None = None,
    index: str | None = None,
    lexical: str = "bm25",
) -> dict[str, Any]:
    """Run the official LongMemEval retrieval protocol; returns a JSON-ready results dict.

    ``limit`` stops after that many scored questions (a quick run); the file is read
    one question at a time, so memory stays flat whatever its size.
    """
    session_rows: dict[str, dict[str, list[dict[str, float]]]] = {
        m: defaultdict(list) for m in modes
    }
    turn_rows: dict[str, dict[str, list[dict[str, float]]]] = {m: defaultdict(list) for m in modes}
    latencies: dict[str, list[float]] = {m: [] for m in modes}
    skipped = {"abstention": 0, "no_user_evidence": 0}
    ingest_s, turns, scored = 0.0, 0, 0
    with bench_memory(settings, workdir=workdir, memory=memory, index=index, lexical=lexical) as (
        mem,
        used,
    ):
        for question in iter_longmemeval(path, roles=("user",)):
            if limit is not None and scored >= limit:
                break
            if question.is_abstention:
                skipped["abstention"] += 1
                continue
            if not question.gold_sessions:
                skipped["no_user_evidence"] += 1
                continue
            if progress:
                progress(question.question_id, scored, limit or 0)
            start = time.perf_counter()
            mem.import_sessions(question.agent, question.sessions)
            ingest_s += time.perf_counter() - start
            turns += sum(len(s.turns) for s in question.sessions)
            for mode in modes:
                began = time.perf_counter()
                result = mem.recall(
                    question.question,
                    agent=question.agent,
                    k=depth,
                    mode=mode,
                    now=question.question_date,
                    record_access=False,
                )
                latencies[mode].append((time.perf_counter() - began) * 1000.0)
                ranked_sessions, ranked_turns = rankings(result, question)
                qtype = question.question_type
                session_rows[mode][qtype].append(
                    score_rankings(question.gold_sessions, ranked_sessions, ks)
                )
                turn_rows[mode][qtype].append(score_rankings(question.gold_turns, ranked_turns, ks))
            scored += 1
        model = embedder_id(mem)
    scores: dict[str, Any] = {}
    for mode in modes:
        scores[mode] = {
            level: {
                "overall": average_rows([r for rows in table_.values() for r in rows]),
                "by_type": {t: average_rows(rows) for t, rows in sorted(table_.items())},
            }
            for level, table_ in (("session", session_rows[mode]), ("turn", turn_rows[mode]))
        }
    results: dict[str, Any] = {
        "benchmark": "longmemeval",
        "dataset": str(path),
        "modes": list(modes),
        "ks": list(ks),
        "depth": depth,
        "questions_scored": scored,
        "questions_skipped": skipped,
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
    for mode, levels in scores.items():
        for level, block in levels.items():
            for metric in METRICS:
                for k in ks:
                    key = f"{metric}@{k}"
                    flat[f"{mode}.{level}.{key}"] = block["overall"].get(key, 0.0)
    for metric in METRICS:
        for k in ks:
            key = f"{metric}@{k}"
            flat[key] = flat[f"{primary}.session.{key}"]
            flat[f"turn.{key}"] = flat[f"{primary}.turn.{key}"]
    return flat


def _tables(results: dict[str, Any]) -> list[dict[str, Any]]:
    ks = results["ks"]
    head_keys = ["recall_all@5", "recall_all@10", "ndcg_any@10", "recall_any@5"]
    tables: list[dict[str, Any]] = []
    for level in ("session", "turn"):
        rows: list[list[str]] = []
        for mode, levels in results["scores"].items():
            block = levels[level]
            labelled = [("all", block["overall"]), *block["by_type"].items()]
            for label, row in labelled:
                n = str(int(row.get("questions", 0)))
                rows.append([mode, label, n, *rows_of(row, head_keys)])
        tables.append(
            table(
                f"LongMemEval {level}-level retrieval",
                ["mode", "question type", "questions", *head_keys],
                rows,
            )
        )
        full_rows = []
        for mode, levels in results["scores"].items():
            overall = levels[level]["overall"]
            for metric in METRICS:
                full_rows.append([mode, metric, *rows_of(overall, [f"{metric}@{k}" for k in ks])])
        tables.append(
            table(
                f"LongMemEval {level}-level, every k",
                ["mode", "metric", *[f"@{k}" for k in ks]],
                full_rows,
            )
        )
    timing = results["timings"]
    tables.append(
        table(
            "LongMemEval ingest and recall",
            ["questions", "user turns", "ingest s", "turns/s", "peak RSS MiB", "recall ms p50/p95"],
            [
                [
                    str(results["questions_scored"]),
                    str(timing["turns"]),
                    f"{timing['ingest_s']:.1f}",
                    f"{timing['turns_per_s']:.0f}",
                    f"{timing['peak_rss_mb']:.0f}",
                    ", ".join(
                        f"{m} {t['p50']:.1f} / {t['p95']:.1f}"
                        for m, t in timing["recall_ms"].items()
                    ),
                ]
            ],
        )
    )
    return tables
