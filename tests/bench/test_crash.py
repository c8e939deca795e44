"""The crash harness: a short run of real trials, and its checks catching a broken workspace."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import kronika
from kronika import build_memory
from kronika.bench.crash import SHARED_KEY, Event, check_workspace
from kronika.settings import Settings

SRC = str(Path(kronika.__file__).parents[1])  # the subprocesses run this kronika


def test_writers_killed_at_random_leave_a_consistent_workspace(tmp_path: Path) -> None:
    out = tmp_path / "results"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": SRC}
    done = subprocess.run(
        [sys.executable, "-m", "kronika", "bench", "crash", "--trials", "3", "--writers", "2"]
        + ["--max-run", "1.5", "--out", str(out), "--seed", "7"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    results = json.loads((out / "crash-2.json").read_text(encoding="utf-8"))
    assert results["failures"] == [], results["failures"]
    assert done.returncode == 0, done.stderr
    assert results["headline"]["trials"] == 3
    assert results["headline"]["acknowledged_writes"] > 0
    assert "| opens | 0 | 3 |" in (out / "crash-2.md").read_text(encoding="utf-8")


def test_the_checks_report_a_lost_write_and_a_second_current_value(
    settings: Settings,
) -> None:
    with build_memory(settings, create=True) as memory:
        memory.remember("start", key=SHARED_KEY)
        kept = memory.remember("Kraków", key=SHARED_KEY).item
        assert kept is not None
    brain = settings.home / "agents" / "default" / "brain.md"
    text = brain.read_text(encoding="utf-8")
    brain.write_text(text + "- **city**: Lublin\n", encoding="utf-8")
    events = [
        Event(0, "begin", "shared", "Kraków"),
        Event(0, "ack", "shared", "Kraków", kept.id),
        Event(0, "begin", "note", "w0-2"),
        Event(0, "ack", "note", "w0-2", "n-000000000000"),
    ]
    result = check_workspace(0, settings, events)
    assert "note w0-2 is missing" in result.failures["acknowledged"]
    assert f"{SHARED_KEY} has 2 current values" in result.failures["one value"]


def test_batch_writers_killed_at_random_leave_each_batch_whole_or_absent(tmp_path: Path) -> None:
    out = tmp_path / "results"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": SRC}
    done = subprocess.run(
        [sys.executable, "-m", "kronika", "bench", "crash", "--trials", "3", "--writers", "2"]
        + ["--batches", "--max-run", "1.5", "--out", str(out), "--seed", "11"],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    results = json.loads((out / "crash-batches-2.json").read_text(encoding="utf-8"))
    assert results["failures"] == [], results["failures"]
    assert done.returncode == 0, done.stderr
    assert results["settings"]["batches"] is True
    assert "killed_inside_a_batch" in results["headline"]
    assert "| batch whole | 0 | 3 |" in (out / "crash-batches-2.md").read_text(encoding="utf-8")


def test_the_checks_report_an_archived_fact_lost_or_left_with_its_old_value(
    settings: Settings,
) -> None:
    from kronika.bench.crash import _seed_archive

    with build_memory(settings, create=True) as memory:
        memory.remember("start", key=SHARED_KEY)
        _seed_archive(memory, 1)
        changed = memory.remember("w0-1", key="o0_0").item
        assert changed is not None
    archive = settings.home / "agents" / "default" / "brain_archive.md"
    lines = archive.read_text(encoding="utf-8").splitlines(keepends=True)
    archive.write_text("".join(x for x in lines if "o0_5" not in x), encoding="utf-8")
    events = [
        Event(0, "begin", "archived", "w0-1"),
        Event(0, "ack", "archived", "w0-1", changed.id),
        Event(0, "begin", "archived", "w0-2"),
        Event(0, "ack", "archived", "w0-2", "f-000000000000"),
    ]
    result = check_workspace(0, settings, events)
    failures = result.failures["one value"]
    assert "o0_5 holds [], expected one of {'seeded 0-5'}" in failures
    assert "o0_1 holds ['seeded 0-1'], expected one of {'w0-2'}" in failures
    assert not any("o0_0" in failure for failure in failures)
    assert result.failures["acknowledged"][0] == "o0_1=w0-2 is not in the index"


def test_the_checks_report_a_batch_stored_in_part(settings: Settings) -> None:
    with build_memory(settings, create=True) as memory:
        memory.remember("start", key=SHARED_KEY)
        memory.remember_many([{"key": f"b0-{j}", "value": f"w0-1 #{j}"} for j in range(3)])
        memory.remember_many([{"key": "b0-0", "value": "w0-2 #0"}])  # 1 of a batch of 3
    events = [
        Event(0, "begin", "remember_many", "w0-1", size=3),
        Event(0, "ack", "remember_many", "w0-1", size=3),
        Event(0, "begin", "remember_many", "w0-2", size=3),
    ]
    result = check_workspace(0, settings, events)
    assert result.failures["batch whole"][0] == "remember_many w0-2 holds 1 of 3 items"
    assert "acknowledged" not in result.failures  # the first batch is whole


def test_bad_trial_counts_are_refused(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": SRC}
    done = subprocess.run(
        [sys.executable, "-m", "kronika", "bench", "crash", "--writers", "0"],
        env=env,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert done.returncode == 2
    assert "--writers" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "bench-results").exists()


def test_workers_killed_at_random_leave_the_team_memory_consistent(
    postgres_server: object,
) -> None:
    from kronika.bench.crash import run_crash
    from kronika.stores.postgres.embedded import LocalPostgres

    assert isinstance(postgres_server, LocalPostgres)
    results = run_crash(
        2,
        writers=2,
        settings=Settings().with_overrides(embedder="hashing"),
        seed=3,
        max_run_s=1.5,
        index=f"postgres={postgres_server.url()}",
        batches=True,
    )
    assert results["failures"] == [], results["failures"]
    assert results["settings"]["store"] == "postgres"
    assert results["headline"]["trials"] == 2
    assert results["headline"]["acknowledged_writes"] > 0


def test_workers_of_agents_of_their_own_killed_at_random_leave_the_team_memory_consistent(
    postgres_server: object,
) -> None:
    """Writers of different agents write at once in team mode (the shared key's
    writers, and every forget, still take turns): no acknowledged write is lost."""
    from kronika.bench.crash import run_crash
    from kronika.stores.postgres.embedded import LocalPostgres

    assert isinstance(postgres_server, LocalPostgres)
    results = run_crash(
        2,
        writers=3,
        settings=Settings().with_overrides(embedder="hashing"),
        seed=5,
        max_run_s=2.0,
        index=f"postgres={postgres_server.url()}",
        batches=True,
        agents=True,
    )
    assert results["failures"] == [], results["failures"]
    assert results["settings"]["agents"] is True
    assert results["headline"]["acknowledged_writes"] > 0


def test_the_checks_look_for_a_writers_items_in_its_own_agent(settings: Settings) -> None:
    with build_memory(settings, create=True) as memory:
        memory.remember("start", key=SHARED_KEY)
        memory.create_agent("w0")
        memory.remember("w0-1", key="k0", agent="w0")
        memory.remember("w0-2", key="k0")  # in the default agent: not the writer's
    events = [
        Event(0, "begin", "own", "w0-1", agent="w0"),
        Event(0, "ack", "own", "w0-1", agent="w0"),
        Event(0, "begin", "own", "w0-2", agent="w0"),
        Event(0, "ack", "own", "w0-2", agent="w0"),
    ]
    result = check_workspace(0, settings, events)
    assert result.failures["acknowledged"][0] == "k0=w0-2 is missing"
    assert result.failures["one value"][0] == "k0 holds ['w0-1'], expected one of {'w0-2'}"
