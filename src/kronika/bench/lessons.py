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
"""

from __future__ import annotations

import random
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kronika.bench._runtime import settings_summary
from kronika.bench.report import table
from kronika.core.lessons import exit_code
from kronika.settings import Settings

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


def _episode(
    memory: Any, world: World, family: int, use_lessons: bool, seen: set[tuple[int, str]]
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
            memory.record_outcome(
                task,
                ways[way],
                exit_code(0 if ok else 1, error),
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
) -> dict[str, Any]:
    from kronika.app import build_memory

    half = len(schedule) // 2
    phases: list[dict[str, int]] = [{}, {}]
    seen: set[tuple[int, str]] = set()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="kronika-bench-lessons-") as tmp:
        chosen = settings.with_overrides(home=Path(tmp) / "home")
        with build_memory(chosen, create=True) as memory:
            for n, family in enumerate(schedule):
                phase = 0 if n < half else 1
                got = _episode(memory, worlds[phase], family, use_lessons, seen)
                totals = phases[phase]
                for key, value in got.items():
                    totals[key] = totals.get(key, 0) + value
                totals["tasks"] = totals.get("tasks", 0) + 1
                if progress is not None:
                    progress(label, n + 1, len(schedule))
            lessons = memory.lessons(include_retired=True)
            embedder = memory.embedder.model_id
    return {
        "embedder": embedder,
        "phases": phases,
        "lessons": len(lessons),
        "retired": sum(1 for x in lessons if not x.active),
        "seconds": round(time.perf_counter() - started, 2),
    }


def run_lessons(
    *,
    tasks: int = 96,
    seed: int = 7,
    settings: Settings | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Run the scripted agent without and with lessons over one task schedule."""
    base = settings or Settings()
    rng = random.Random(seed)
    schedule = [rng.randrange(len(FAMILIES)) for _ in range(tasks)]
    worlds = _worlds(seed)
    runs = {
        "no lessons": _run(base, schedule, worlds, False, progress, "no lessons"),
        "lessons": _run(base, schedule, worlds, True, progress, "lessons"),
    }
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
                    str(run["lessons"]) if name == "lessons" else "—",
                    str(run["retired"]) if name == "lessons" else "—",
                ]
            )
            headline[f"repeated_failure_rate[{name}, {title}]"] = round(rate, 4)
    return {
        "benchmark": "lessons",
        "embedder": runs["lessons"]["embedder"],
        "tasks": tasks,
        "seed": seed,
        "families": len(FAMILIES),
        "settings": settings_summary(base),
        "runs": runs,
        "headline": headline,
        "tables": [
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
        ],
    }
