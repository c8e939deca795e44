"""``kronika bench lessons``: do lessons stop an agent from repeating its failures?

A scripted agent meets tasks whose failures have known causes. Each task family (deploy
a service, renew a certificate, …) has a few ways to try it; in a given environment
exactly one works and every other fails with an error message of its own. The agent
tries ways in a fixed order until one works, recording every attempt with
``memory.record_outcome`` (the deterministic exit-code evaluator). With lessons it
first asks ``memory.lessons_for(task)`` — real recall over the real workspace — and
follows what they say: a strategy's way first, and never a way a reflection says
failed.

Measured over the same seeded sequence of tasks, in three runs side by side:

* **no lessons**: the agent ignores memory;
* **lessons**: it reads and follows them;
* and, in both, a **changed environment** half way through: half of the families now
  need another way (the old strategy fails with a new error), so lessons must retire
  and be learned again.

A *repeated failure* is an attempt that fails with an error the agent already met for
that family in an earlier task, in the same environment. The rate is per task.
Nothing is tuned here: the retirement thresholds are those of
:mod:`kronika.core.lessons`, chosen on principle.

With a model judge (``evaluator="scripted"`` or ``"model"``) a third run,
**lessons, model judge**, has the model judge every attempt
(:func:`kronika.evaluate_with_model`, ``{is_ok, reasons, score}``)
from the task, the action and its output, instead of the exit code. A judgement the
model cannot give (no JSON even after the repair request, a refusal, an error) falls
back to the exit-code evaluator, as an agent should. Reported beside the others: how
many judgements were valid at once, valid after the repair request, or unusable;
how often the judge agreed with the exit code; model calls, tokens and milliseconds
per judgement (from the usage ledger). ``scripted`` judges with
:class:`ScriptedJudge` on a local OpenAI-compatible server (reproducible, no
network); ``model`` with the configured one (``llm_base_url``, ``minion_model`` or
``llm_model``).
"""

from __future__ import annotations

import json
import random
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kronika import Evaluation, InvalidInput, LLMError, Settings, exit_code
from kronika.bench._runtime import settings_summary
from kronika.bench.report import table

if TYPE_CHECKING:
    from kronika import LLM

Progress = Callable[[str, int, int], None]

FAMILIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("deploy the billing service", ("make deploy", "make migrate deploy", "helm upgrade billing")),
    ("renew the TLS certificate", ("certbot renew", "certbot renew --force", "acme.sh --renew")),
    ("rotate the web server logs", ("logrotate -f web", "systemctl reload nginx", "truncate logs")),
    ("back up the customer database", ("pg_dump customers", "pg_basebackup", "barman backup")),
    ("rebuild the search index", ("kronika reindex", "reindex --full", "drop and rebuild")),
    ("publish the Python package", ("twine upload dist/*", "uv publish", "flit publish")),
    (
        "restart the payment worker",
        ("systemctl restart pay", "kill -HUP pay", "supervisorctl restart pay"),
    ),
    ("update the DNS records", ("terraform apply dns", "nsupdate zone", "edit zone file")),
)


@dataclass(frozen=True, slots=True)
class World:
    """Which way works for each family, and the error every other way gives."""

    working: dict[str, int]
    epoch: int

    def attempt(self, family: int, way: int) -> tuple[bool, str]:
        if self.working[FAMILIES[family][0]] == way:
            return True, ""
        name = FAMILIES[family][1][way]
        return False, f"error E{self.epoch}{family}{way}: {name} is not how it is done here"


def _worlds(seed: int) -> tuple[World, World]:
    rng = random.Random(seed)
    first = {name: rng.randrange(len(ways)) for name, ways in FAMILIES}
    changed = dict(first)
    for n, (name, ways) in enumerate(FAMILIES):
        if n % 2 == 0:  # half of the families change
            changed[name] = (first[name] + 1 + rng.randrange(len(ways) - 1)) % len(ways)
    return World(first, 1), World(changed, 2)


class ScriptedJudge:
    """The judge the ``scripted`` evaluator serves (a ``ScriptedChatServer`` responder):
    it reads the action's output in the request and answers ``{is_ok, reasons,
    score}`` — a failure when the output holds an error line, with that line as the
    reason. Of every ten judgements asked for, one is first answered in prose without
    JSON (the repair request then gets a valid answer), one is refused (the repair too),
    and eight are answered at once."""

    MALFORMED = "The action did not work, I would say; the output shows an error."
    REFUSAL = "I'm sorry, but I can't evaluate this action."

    def __init__(self) -> None:
        self.asked = 0
        self.refusing = False

    def __call__(self, body: dict[str, Any]) -> str:
        messages = body.get("messages") or []
        repair = any(m.get("role") == "assistant" for m in messages)
        if not repair:
            self.asked += 1
            self.refusing = self.asked % 10 == 7
            if self.asked % 10 == 3:
                return self.MALFORMED
        if self.refusing:
            return self.REFUSAL
        material = next((m["content"] for m in messages if m.get("role") == "user"), "")
        output = material.partition("Result:")[2]
        errors = [line.strip() for line in output.splitlines() if "error" in line.lower()]
        if errors:
            return json.dumps({"is_ok": False, "reasons": errors[:1], "score": 0.0})
        return json.dumps({"is_ok": True, "reasons": [], "score": 1.0})


@dataclass(slots=True)
class _Judge:
    """The model judge of one run, and what it did."""

    llm: LLM
    settings: Settings
    """The run's settings: its workspace's usage ledger books the judge's calls."""
    counts: dict[str, float]

    def judge(self, task: str, action: str, ok: bool, error: str) -> Evaluation:
        from kronika import evaluate_with_model, read_usage

        output = f"exit code {0 if ok else 1}\n{error}".strip()
        before = len(read_usage(self.settings))
        started = time.perf_counter()
        try:
            judged = evaluate_with_model(self.llm, task, action, output, agent="default")
            outcome = "valid" if len(read_usage(self.settings)) - before <= 1 else "repaired"
        except LLMError:
            judged, outcome = exit_code(0 if ok else 1, error), "unusable"
        counts = self.counts
        counts["seconds"] = counts.get("seconds", 0.0) + time.perf_counter() - started
        counts[outcome] = counts.get(outcome, 0) + 1
        counts["judgements"] = counts.get("judgements", 0) + 1
        if outcome != "unusable":
            counts["agreed"] = counts.get("agreed", 0) + int(judged.is_ok == ok)
        return judged


def _episode(
    memory: Any,
    world: World,
    family: int,
    use_lessons: bool,
    seen: set[tuple[int, str]],
    judge: _Judge | None = None,
) -> dict[str, int]:
    task, ways = FAMILIES[family]
    order = list(range(len(ways)))
    advice: dict[int, list[str]] = {}  # way -> the strategies that advise it
    if use_lessons:
        hits = memory.lessons_for(task)
        mine = [h for h in hits if task.casefold() in h.item.content.casefold()]
        for h in mine:
            for w in order:
                if f"do what worked: {ways[w]}." in h.item.content:
                    advice.setdefault(w, []).append(h.item.id)
        texts = [h.item.content for h in mine]
        failed = {w for w in order if any(f"{ways[w]!r} failed" in t for t in texts)}
        advised = [w for w in order if w in advice]
        order = advised + [w for w in order if w not in advised and w not in failed]
        order += [w for w in range(len(ways)) if w in failed and w not in advised]
    attempts = repeated = 0
    for way in order:
        ok, error = world.attempt(family, way)
        attempts += 1
        if not ok:
            if (family, error) in seen:
                repeated += 1
            seen.add((family, error))
        if memory is not None:
            judged = (
                exit_code(0 if ok else 1, error)
                if judge is None
                else judge.judge(task, ways[way], ok, error)
            )
            memory.record_outcome(
                task,
                ways[way],
                judged,
                served=advice.get(way, []),  # credit only the lessons followed
            )
        if ok:
            break
    return {"attempts": attempts, "repeated": repeated, "first_try": int(attempts == 1)}


def _run(
    settings: Settings,
    schedule: list[int],
    worlds: tuple[World, World],
    use_lessons: bool,
    progress: Progress | None,
    label: str,
    evaluator: str = "exit-code",
) -> dict[str, Any]:
    from kronika import build_llm, build_memory, read_usage

    half = len(schedule) // 2
    phases: list[dict[str, int]] = [{}, {}]
    seen: set[tuple[int, str]] = set()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="kronika-bench-lessons-") as tmp:
        chosen = settings.with_overrides(home=Path(tmp) / "home")
        judge: _Judge | None = None
        counts: dict[str, float] = {}
        if evaluator != "exit-code":
            llm = build_llm(chosen, minion=True)
            if llm is None:
                raise InvalidInput(
                    "the model judge needs a model: set llm_base_url and minion_model"
                    " (or llm_model)"
                )
            judge = _Judge(llm, chosen, counts)
        with build_memory(chosen, create=True) as memory:
            for n, family in enumerate(schedule):
                phase = 0 if n < half else 1
                got = _episode(memory, worlds[phase], family, use_lessons, seen, judge)
                totals = phases[phase]
                for key, value in got.items():
                    totals[key] = totals.get(key, 0) + value
                totals["tasks"] = totals.get("tasks", 0) + 1
                if progress is not None:
                    progress(label, n + 1, len(schedule))
            lessons = memory.lessons(include_retired=True)
            embedder = memory.embedder.model_id
        if judge is not None:
            booked = read_usage(chosen)
            counts["calls"] = len(booked)
            counts["tokens_in"] = sum(e.tokens_in for e in booked)
            counts["tokens_out"] = sum(e.tokens_out for e in booked)
    return {
        "embedder": embedder,
        "judge": counts,
        "phases": phases,
        "lessons": len(lessons),
        "retired": sum(1 for x in lessons if not x.active),
        "seconds": round(time.perf_counter() - started, 2),
    }


EVALUATORS = ("exit-code", "scripted", "model")
JUDGED = "lessons, model judge"


def run_lessons(
    *,
    tasks: int = 96,
    seed: int = 7,
    settings: Settings | None = None,
    progress: Progress | None = None,
    evaluator: str = "exit-code",
) -> dict[str, Any]:
    """Run the scripted agent without and with lessons over one task schedule; with
    ``evaluator`` ``scripted`` or ``model`` also with lessons judged by a model."""
    if evaluator not in EVALUATORS:
        raise InvalidInput(f"unknown evaluator {evaluator!r}: one of {', '.join(EVALUATORS)}")
    base = settings or Settings()
    rng = random.Random(seed)
    schedule = [rng.randrange(len(FAMILIES)) for _ in range(tasks)]
    worlds = _worlds(seed)
    runs = {
        "no lessons": _run(base, schedule, worlds, False, progress, "no lessons"),
        "lessons": _run(base, schedule, worlds, True, progress, "lessons"),
    }
    if evaluator == "scripted":
        from kronika.testing import ScriptedChatServer

        with ScriptedChatServer(responder=ScriptedJudge()) as server:
            scripted = base.with_overrides(
                llm_base_url=server.base_url, llm_model="scripted-judge", minion_model=""
            )
            runs[JUDGED] = _run(scripted, schedule, worlds, True, progress, JUDGED, evaluator)
    elif evaluator == "model":
        runs[JUDGED] = _run(base, schedule, worlds, True, progress, JUDGED, evaluator)
    rows = []
    headline: dict[str, Any] = {}
    for name, run in runs.items():
        for phase, title in ((0, "before the change"), (1, "after the change")):
            totals = run["phases"][phase]
            n = max(1, totals.get("tasks", 0))
            rate = totals.get("repeated", 0) / n
            rows.append(
                [
                    name,
                    title,
                    str(totals.get("tasks", 0)),
                    f"{rate:.3f}",
                    f"{totals.get('first_try', 0) / n:.3f}",
                    f"{totals.get('attempts', 0) / n:.2f}",
                    str(run["lessons"]) if name != "no lessons" else "—",
                    str(run["retired"]) if name != "no lessons" else "—",
                ]
            )
            headline[f"repeated_failure_rate[{name}, {title}]"] = round(rate, 4)
    tables = [
        table(
            "repeated failures per task, without and with lessons",
            [
                "agent",
                "environment",
                "tasks",
                "repeated failures / task",
                "first try right",
                "attempts / task",
                "lessons",
                "retired",
            ],
            rows,
        )
    ]
    if JUDGED in runs:
        judged = runs[JUDGED]["judge"]
        n = max(1, int(judged.get("judgements", 0)))
        usable = max(1, n - int(judged.get("unusable", 0)))
        agreement = judged.get("agreed", 0) / usable
        headline["judge_agreement_with_exit_code"] = round(agreement, 4)
        headline["judge_unusable_share"] = round(judged.get("unusable", 0) / n, 4)
        tables.append(
            table(
                "the model judge ({is_ok, reasons, score}) beside the exit code",
                [
                    "evaluator",
                    "judgements",
                    "valid at once",
                    "valid after repair",
                    "unusable (exit code used)",
                    "agrees with exit code",
                    "model calls",
                    "tokens in / out",
                    "ms / judgement",
                ],
                [
                    [
                        "exit code",
                        str(sum(p.get("attempts", 0) for p in runs["lessons"]["phases"])),
                        "—",
                        "—",
                        "—",
                        "1.000",
                        "0",
                        "—",
                        "—",
                    ],
                    [
                        f"model ({evaluator})",
                        str(int(judged.get("judgements", 0))),
                        str(int(judged.get("valid", 0))),
                        str(int(judged.get("repaired", 0))),
                        str(int(judged.get("unusable", 0))),
                        f"{agreement:.3f}",
                        str(int(judged.get("calls", 0))),
                        f"{int(judged.get('tokens_in', 0))} / {int(judged.get('tokens_out', 0))}",
                        f"{1000 * judged.get('seconds', 0.0) / n:.1f}",
                    ],
                ],
            )
        )
    return {
        "benchmark": "lessons",
        "evaluator": evaluator,
        "embedder": runs["lessons"]["embedder"],
        "tasks": tasks,
        "seed": seed,
        "families": len(FAMILIES),
        "settings": settings_summary(base),
        "runs": runs,
        "headline": headline,
        "tables": tables,
    }
