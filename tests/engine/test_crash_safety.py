"""Keyed history survives a crash at any point and writers that race on one key."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from kronika import Memory, build_memory
from kronika.core.model import MemoryItem, Status
from kronika.settings import Settings, load_settings
from kronika.testing import FrozenClock


def _city_values(memory: Memory, moment: datetime | None = None) -> list[str]:
    """Values of ``city`` the index holds as current (at ``moment`` when given)."""
    as_of = moment.isoformat() if moment is not None else None
    hits = memory.recall("city", k=20, as_of=as_of, record_access=False).hits
    return sorted(h.item.value or "" for h in hits if h.item.key == "city")


def _assert_one_timeline(history: list[MemoryItem]) -> None:
    """Intervals of one single-valued key: each ends where the next begins, none runs
    backwards, only the last is open."""
    starts = [h.valid_from or h.created_at for h in history]
    assert starts == sorted(starts)
    for older, newer in zip(history, history[1:], strict=False):
        assert older.valid_to is not None
        assert older.valid_to == (newer.valid_from or newer.created_at)
    for item in history:
        if item.valid_to is not None:
            assert item.valid_to >= (item.valid_from or item.created_at)
    assert [h.valid_to is None for h in history].count(True) == 1


def test_a_crash_between_history_and_brain_leaves_the_old_value_current(
    settings: Settings, clock: FrozenClock
) -> None:
    with build_memory(settings, create=True, clock=clock) as memory:
        first = memory.remember("Kraków", key="city").item
        assert first is not None
        brain = settings.home / "agents" / "default" / "brain.md"
        before = brain.read_bytes()
        clock.advance(days=1)
        memory.remember("Warszawa", key="city")
    # what kill -9 right after the history write leaves: history.md holds the retired
    # copy, the Brain was never replaced
    brain.write_bytes(before)

    clock.advance(hours=1)
    with build_memory(settings, clock=clock) as memory:
        assert _city_values(memory) == ["Kraków"]
        assert memory.get(first.id).status is Status.CURRENT
        assert _city_values(memory, clock.now()) == ["Kraków"]
        assert [h.value for h in memory.history("city")] == ["Kraków"]
        memory.reindex()
        assert _city_values(memory) == ["Kraków"]
        assert _city_values(memory, clock.now()) == ["Kraków"]

        # the next update of the key finishes cleanly: one history entry, one current value
        clock.advance(hours=1)
        memory.remember("Gdańsk", key="city")
        history = memory.history("city")
        assert [h.value for h in history] == ["Kraków", "Gdańsk"]
        _assert_one_timeline(history)
        assert _city_values(memory) == ["Gdańsk"]
        report = memory.reindex()
        assert report.warnings == []
        assert _city_values(memory) == ["Gdańsk"]


def test_a_clock_that_goes_back_never_makes_an_interval_run_backwards(
    memory: Memory, clock: FrozenClock
) -> None:
    memory.remember("Kraków", key="city")
    clock.advance(days=1)
    memory.remember("Warszawa", key="city")
    clock.advance(hours=-5)  # the system clock was set back
    memory.remember("Gdańsk", key="city")
    history = memory.history("city")
    assert [h.value for h in history] == ["Kraków", "Warszawa", "Gdańsk"]
    _assert_one_timeline(history)
    for moment in (clock.now(), clock.now() + timedelta(hours=5), clock.now() + timedelta(days=1)):
        assert len(_city_values(memory, moment)) == 1


_WAITING_WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from kronika import build_memory, load_settings

    settings = load_settings(Path(sys.argv[1]), environ={}, embedder="hashing")
    with build_memory(settings) as memory:
        print("ready", flush=True)
        sys.stdin.readline()
        memory.remember("Gdańsk", key="city")
    print("done", flush=True)
    """
)


def test_validity_is_taken_under_the_write_lock(settings: Settings) -> None:
    """A writer that waited for the lock starts its value after the one written
    meanwhile, not at the moment it asked."""
    with build_memory(settings, create=True) as memory:
        memory.remember("Kraków", key="city")
        with subprocess.Popen(
            [sys.executable, "-c", _WAITING_WRITER, str(settings.home)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        ) as waiting:
            assert waiting.stdin is not None and waiting.stdout is not None
            assert waiting.stdout.readline().strip() == "ready"
            with memory.lock:  # another write is under way while the child asks
                waiting.stdin.write("go\n")
                waiting.stdin.flush()
                time.sleep(0.5)
                memory.remember("Warszawa", key="city")
            assert waiting.stdout.readline().strip() == "done"
            waiting.stdin.close()
            assert waiting.wait(timeout=30) == 0
        memory.sync()
        history = memory.history("city")
        assert [h.value for h in history] == ["Kraków", "Warszawa", "Gdańsk"]
        _assert_one_timeline(history)
        assert _city_values(memory) == ["Gdańsk"]


def test_an_acknowledged_write_exits_zero_when_a_later_step_fails(
    tmp_path: Path, settings: Settings
) -> None:
    home = settings.home
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "KRONIKA_EMBEDDER": "hashing"}
    cli = [sys.executable, "-m", "kronika", "--home", str(home)]
    subprocess.run([*cli, "init"], env=env, check=True, capture_output=True)
    (home / "audit.jsonl").unlink(missing_ok=True)
    (home / "audit.jsonl").mkdir()  # the audit trail cannot be appended to
    done = subprocess.run(
        [*cli, "remember", "--key", "city", "Kraków"], env=env, capture_output=True, text=True
    )
    assert "Kraków" in (home / "agents" / "default" / "brain.md").read_text(encoding="utf-8")
    assert done.returncode == 0, done.stderr
    assert "audit" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_new_value_of_an_archived_key_supersedes_it(home: Path, clock: FrozenClock) -> None:
    small = load_settings(home, environ={}, embedder="hashing", brain_max=60, brain_budget=40)
    with build_memory(small, create=True, clock=clock) as memory:
        for n in range(8):
            memory.remember(f"the user collects item number {n} from every trip", key=f"hobby{n}")
            clock.advance(minutes=1)
        archived = memory.workspace.archived_facts("default")
        assert archived
        old = archived[0]
        assert old.key is not None
        receipt = memory.remember("the user collects nothing any more", key=old.key)
        assert type(receipt.change).__name__ == "SupersedeFact"
        history = memory.history(old.key)
        assert [h.value for h in history] == [old.value, "the user collects nothing any more"]
        _assert_one_timeline(history)
        current = [f.value for f in memory.facts() if f.key == old.key]
        assert current == ["the user collects nothing any more"]


def test_an_interrupted_archive_move_reads_as_not_moved(
    settings: Settings, clock: FrozenClock
) -> None:
    with build_memory(settings, create=True, clock=clock) as memory:
        kept = memory.remember("Kraków", key="city").item
        assert kept is not None
        folder = settings.home / "agents" / "default"
        before = (folder / "brain.md").read_bytes()
        memory.workspace.move_to_archive("default", [kept.id])
    (folder / "brain.md").write_bytes(before)  # killed before the Brain was rewritten

    with build_memory(settings, clock=clock) as memory:
        assert [f.id for f in memory.facts()] == [kept.id]
        assert memory.get(kept.id).status is Status.CURRENT
        assert _city_values(memory) == ["Kraków"]
        report = memory.reindex()
        assert any("interrupted update" in w for w in report.warnings)
        assert _city_values(memory) == ["Kraków"]
        memory.forget(kept.id)
        assert memory.facts() == []
        assert "Kraków" not in (folder / "brain_archive.md").read_text(encoding="utf-8")
        memory.reindex()
        assert _city_values(memory) == []


@pytest.mark.parametrize("target", ["brain_archive.md", "history.md"])
def test_an_append_cut_at_any_byte_never_reads_as_a_fact_written_by_hand(
    settings: Settings, clock: FrozenClock, target: str
) -> None:
    """A process killed inside an in-place append leaves the start of the moved fact's
    bullet at the end of the archive (or the history), with the fact still in the
    Brain: cut at every byte of that record, the fact stays the one current value and
    the torn line is ignored, then cut off by the next append."""
    with build_memory(settings, create=True, clock=clock) as memory:
        first = memory.remember("Gdańsk", key="town", entities=["Baltic"]).item
        moving = memory.remember("Kraków", key="city").item
        assert first is not None and moving is not None
        memory.workspace.move_to_archive("default", [first.id])  # the files exist
        memory.remember("Poznań", key="town")  # its old value goes to the history
        folder = settings.home / "agents" / "default"
        brain = (folder / "brain.md").read_bytes()
        before = (folder / target).read_bytes()
        if target == "brain_archive.md":
            memory.workspace.move_to_archive("default", [moving.id])
        else:
            clock.advance(seconds=1)
            memory.remember("Wrocław", key="city")
        after = (folder / target).read_bytes()
    assert after.startswith(before) and len(after) > len(before)
    for cut in range(len(before), len(after)):
        (folder / "brain.md").write_bytes(brain)  # killed before the Brain was rewritten
        (folder / target).write_bytes(after[:cut])
        with build_memory(settings, clock=clock) as memory:
            assert [f.value for f in memory.facts() if f.key == "city"] == ["Kraków"], cut
            assert not any(
                it.id.startswith("h-") for it in memory.index.source_items("default", target)
            ), (cut, after[len(before) : cut])
            held = memory.workspace.archived_facts("default") + memory.workspace.fact_history(
                "default"
            )
            assert not any(it.id.startswith("h-") for it in held), cut
    # the next append cuts the torn line off and adds whole lines after it
    with build_memory(settings, clock=clock) as memory:
        clock.advance(seconds=1)
        memory.remember("Łódź", key="city")
        memory.workspace.move_to_archive(
            "default", [f.id for f in memory.facts() if f.key == "city"]
        )
        text = (folder / target).read_text(encoding="utf-8")
        assert text.endswith("\n")
        assert not any(
            it.id.startswith("h-") for it in memory.index.source_items("default", target)
        )
