"""A batch (``remember_many``, ``import_sessions``, ``save_turns``) killed with SIGKILL
at any point is stored whole or not at all, on the Markdown workspace and in team mode (PostgreSQL,
the killed worker's working copy opened again). A real process writes the batch and is
killed just before and just after each change of a name in a folder (``os.replace``,
``os.link``, ``os.unlink``, ``os.rmdir``: the moments a file is old or new, and each
step of the batch's journal), then another process's memory opens the workspace."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kronika import InvalidInput, Memory, build_memory, load_settings
from kronika.settings import Settings
from kronika.stores.batch import FOLDER
from kronika.testing import conversation

KEYS = ("city", "job", "pet")
NEW_KEYS = ("b0", "b1", "b2")

_BATCH = textwrap.dedent(
    """
    import os, signal, sys
    from datetime import UTC, datetime
    from kronika import build_memory, load_settings
    from kronika.testing import conversation

    home, kill_at, how, kind, url = sys.argv[1:6]
    calls = 0
    NAMES = ("replace", "link", "unlink", "rmdir")  # the operating system's calls, not kronika's
    real = {name: getattr(os, name) for name in NAMES}

    def killing(name):
        def call(*args, **kwargs):
            global calls
            calls += 1
            if calls == int(kill_at) and how == "before":
                os.kill(os.getpid(), signal.SIGKILL)
            done = real[name](*args, **kwargs)
            if calls == int(kill_at) and how == "after":
                os.kill(os.getpid(), signal.SIGKILL)
            return done
        return call

    team = {"database_url": url} if url else {}
    settings = load_settings(home, environ={}, embedder="hashing", **team)
    with build_memory(settings) as memory:
        for name in NAMES:
            setattr(os, name, killing(name))
        if kind.startswith("remember_many"):  # new keys, new values moving old ones to the history
            keys = ("b0", "b1", "b2", "city", "job", "pet")
            memory.remember_many([{"key": k, "value": f"new {k}"} for k in keys] + ["new loose"])
        elif kind == "remember_archived":  # one write: the archived value to the history
            memory.remember(key="city", value="new city")
        elif kind == "save_turns":  # appended in place to a session of two turns
            memory.save_turns("live", [("user", f"new turn {n}") for n in range(3)])
        else:
            at = datetime(2026, 1, 1, tzinfo=UTC)
            turns = [(f"t{n}", "user", f"new turn {n}") for n in range(2)]
            sessions = [conversation(f"imp{j}", at, turns) for j in range(3)]
            memory.import_sessions("default", sessions)
        for name in NAMES:
            setattr(os, name, real[name])
    print(calls)
    """
)


def _start(settings: Settings, *, archived: bool = False) -> None:
    """The memory a batch is written into; ``archived``: the keyed facts in the archive
    (a new value then brings each back to the Brain, leaving its lines marked)."""
    with build_memory(settings, create=True) as memory:
        for key in KEYS:
            memory.remember(key=key, value=f"old {key}")
        memory.save_turn("live", "user", "old turn 0")
        memory.save_turn("live", "assistant", "old turn 1")
        if archived:
            keyed = [f.id for f in memory.facts() if f.key in KEYS]
            memory.workspace.move_to_archive("default", keyed)
            memory.sync()


def _write(
    home: Path, kill_at: int, how: str, kind: str, url: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _BATCH, str(home), str(kill_at), how, kind, url],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )


def _stored(memory: Memory, kind: str) -> tuple[int, int]:
    """How many of the batch's items ``memory`` holds, and of how many."""
    if kind == "remember_archived":
        current = [f.value for f in memory.facts() if f.key == "city"]
        assert current in (["old city"], ["new city"]), current  # one value, never none
        return int(current == ["new city"]), 1
    if kind.startswith("remember_many"):
        values = {f.value or f.content for f in memory.facts()}
        found = sum(f"new {k}" in values for k in (*NEW_KEYS, *KEYS)) + ("new loose" in values)
        hits = memory.recall("new", k=50, record_access=False).hits
        assert len({h.item.id for h in hits if "new" in h.item.content}) in (0, 7)  # the index
        return found, 7
    if kind == "save_turns":
        texts = [t.content for t in memory.load_session("live")]
        assert texts[:2] == ["old turn 0", "old turn 1"], texts  # the acknowledged turns
        return len(texts) - 2, 3
    turns = [len(memory.load_session(f"imp{j}")) for j in range(3)]
    assert all(n in (0, 2) for n in turns), turns  # no session in part
    return sum(turns) // 2, 3


def _old_values_kept(memory: Memory) -> None:
    """Nothing acknowledged before the batch is lost: each old value is current or past."""
    for key in KEYS:
        assert f"old {key}" in {h.value for h in memory.history(key)}, key


def _journal_names_a_file(home: Path) -> int:
    """1 when a batch's journal lists a file it changed (put back when the folder's lock
    is next taken), else 0."""
    try:
        text = (home / FOLDER / "journal.jsonl").read_text(encoding="utf-8")
    except FileNotFoundError:
        return 0
    return int(any(line.endswith("\n") for line in text.splitlines(True)))


def _trials(
    kind: str,
    fresh: Callable[[str], tuple[Settings, Settings]],
    hows: tuple[str, ...],
    most: int = 1000,
) -> int:
    """Kill the batch at each change of a name (``hows``: before it, after it; at
    ``most`` points spread evenly, the last included); returns how many kills were put
    back (the rest left it whole)."""
    settings, reader = fresh("whole")
    done = _write(settings.home, 0, "never", kind, settings.database_url)
    assert done.returncode == 0, done.stderr
    points = int(done.stdout.split()[-1])
    assert points >= 2
    with build_memory(reader) as memory:  # not killed: the batch is whole
        found, size = _stored(memory, kind)
        assert found == size
    undone = 0
    chosen = sorted({points - (points - 1) * n // max(1, most - 1) for n in range(most)})
    for kill_at in (k for k in chosen if k >= 1):
        for how in hows:
            settings, reader = fresh(f"{how}-{kill_at}")
            killed = _write(settings.home, kill_at, how, kind, settings.database_url)
            assert killed.returncode == -9, killed.stderr  # killed where it was meant to be
            undone += (settings.home / FOLDER).exists()  # inside the batch: its journal is there
            named = _journal_names_a_file(settings.home)
            with build_memory(settings) as memory:  # the killed writer's folder, opened again
                memory.sync()
                said = [e for e in memory.audit(limit=1000) if e.action == "batch undone"]
            assert not (settings.home / FOLDER).exists()
            # a batch put back is said in the audit trail, which keeps its writes' entries
            assert len(said) == named, said
            assert all(e.target_agent == "default" and e.outcome == "undone" for e in said)
            with build_memory(reader) as memory:
                found, size = _stored(memory, kind)
                assert found in (0, size), (kind, how, kill_at, found)
                _old_values_kept(memory)
                assert not any("lost" in note for note in memory.notes), memory.notes
    return undone


@pytest.mark.parametrize(
    "kind", ["remember_many", "remember_many_archived", "import", "save_turns"]
)
def test_a_batch_killed_at_any_point_is_whole_or_absent(tmp_path: Path, kind: str) -> None:
    template = tmp_path / "template"
    _start(load_settings(template, environ={}, embedder="hashing"), archived="archived" in kind)

    def fresh(name: str) -> tuple[Settings, Settings]:
        home = tmp_path / name
        shutil.copytree(template, home)
        settings = load_settings(home, environ={}, embedder="hashing")
        return settings, settings

    assert _trials(kind, fresh, ("before", "after")) >= 2  # kills inside it, each put back


@pytest.mark.parametrize("kind", ["remember_many", "import", "save_turns"])
def test_a_team_batch_killed_at_any_point_is_whole_or_absent(
    tmp_path: Path, postgres_server: object, kind: str
) -> None:
    """In team mode the killed worker's working copy is opened again (as a restarted
    worker would), then the record is read through a fresh working copy."""
    from kronika.stores.postgres.embedded import LocalPostgres

    assert isinstance(postgres_server, LocalPostgres)

    def fresh(name: str) -> tuple[Settings, Settings]:
        url = postgres_server.create_database(f"batch_{kind}_{name}".replace("-", "_"))
        settings = load_settings(tmp_path / name, environ={}, embedder="hashing", database_url=url)
        _start(settings)
        reader = load_settings(
            tmp_path / f"{name}-reader", environ={}, embedder="hashing", database_url=url
        )
        return settings, reader

    # a fresh database each: after 12 of the points only
    assert _trials(kind, fresh, ("after",), most=12) >= 2


def test_a_new_value_of_an_archived_fact_killed_at_any_point_keeps_one_value(
    tmp_path: Path,
) -> None:
    """One ``remember()`` (no batch, no journal) of a new value for an archived key,
    killed at each rename: the key has the old value or the new one, never both or
    none, and the old one is kept (current, or in the history)."""
    template = tmp_path / "template"
    _start(load_settings(template, environ={}, embedder="hashing"), archived=True)

    def fresh(name: str) -> tuple[Settings, Settings]:
        home = tmp_path / name
        shutil.copytree(template, home)
        settings = load_settings(home, environ={}, embedder="hashing")
        return settings, settings

    assert _trials("remember_archived", fresh, ("before", "after")) == 0  # no journal


def test_a_batch_that_raises_leaves_nothing(tmp_path: Path) -> None:
    """Bad input part way (the second session of an import has no id) puts back the
    session written before it: the import is not half done, and can be made again."""
    settings = load_settings(tmp_path / "home", environ={}, embedder="hashing")
    _start(settings)
    at = datetime(2026, 1, 1, tzinfo=UTC)
    first = conversation("first", at, [("1", "user", "hello")])
    sessions = settings.home / "agents" / "default" / "sessions"
    with build_memory(settings) as memory:
        before = sorted(p.name for p in sessions.iterdir())
        with pytest.raises(InvalidInput, match="session id"):
            memory.import_sessions("default", [first, conversation("", at, [("1", "user", "hi")])])
        assert memory.load_session("first") == []
        assert sorted(p.name for p in sessions.iterdir()) == before
        assert not (settings.home / FOLDER).exists()
        said = [e for e in memory.audit() if e.action == "batch undone"]
        assert [(e.target_agent, e.outcome) for e in said] == [("default", "undone")]
        assert "put back whole" in said[0].summary
        memory.import_sessions("default", [first])
        assert len(memory.load_session("first")) == 1
