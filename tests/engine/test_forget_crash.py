"""A forget killed with SIGKILL at any point never lets the forgotten value come back:
not in the Markdown, the index or a ``.corrupt/`` copy, and not through ``kronika doctor
--fix``. A real process forgets and is killed at each file replacement of its write
path (before and after the rename: the moments a file is old or new), then another
opens the workspace."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kronika import build_memory, load_settings
from kronika.workflows.session import Session

WORDS = {  # what must be gone: by key, its values; by topic, every form of the name
    "key": re.compile(r"zhabotynsky \d"),
    "topic": re.compile("zhabotynsk"),
}

_FORGET = textwrap.dedent(
    """
    import os, signal, sys
    from kronika import build_memory, load_settings

    home, kill_at, how = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    real = os.replace
    calls = 0

    def replace(src, dst, *args, **kwargs):  # the operating system's rename, not kronika
        global calls
        calls += 1
        if calls == kill_at and how == "before":
            os.kill(os.getpid(), signal.SIGKILL)
        real(src, dst, *args, **kwargs)
        if calls == kill_at and how == "after":
            os.kill(os.getpid(), signal.SIGKILL)

    settings = load_settings(home, environ={}, embedder="hashing")
    with build_memory(settings) as memory:
        os.replace = replace
        if sys.argv[4] == "key":
            memory.forget(key="neighbour")
        else:
            memory.forget(topic="Dmytro Zhabotynsky")
        os.replace = real
    print(calls)
    """
)


def _workspace(home: Path) -> None:
    settings = load_settings(home, environ={}, embedder="hashing")
    with build_memory(settings, create=True) as memory:
        for n in range(4):
            memory.remember(key="neighbour", value=f"Dmytro Zhabotynsky {n}", multi=True)
        memory.remember(key="city", value="Kraków")
        session = Session(memory)
        session.user("Mój sąsiad to Dmytro Zhabotynsky 1. Wczoraj widziałam Dmytra Zhabotynskiego.")
        session.close()


def _forget(home: Path, kill_at: int, how: str, by: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _FORGET, str(home), str(kill_at), how, by],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )


def _holding(home: Path, word: re.Pattern[str]) -> list[str]:
    return sorted(
        p.relative_to(home).as_posix()
        for p in home.rglob("*")
        if p.is_file() and word.search(p.read_bytes().decode("utf-8", "ignore").casefold())
    )


@pytest.mark.parametrize("by", ["key", "topic"])
def test_a_forget_killed_at_any_point_is_finished_not_undone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, by: str
) -> None:
    from kronika.cli import main

    template = tmp_path / "template"
    _workspace(template)
    whole = _forget(_copy(template, tmp_path / "whole"), 0, "never", by)
    assert whole.returncode == 0, whole.stderr
    points = int(whole.stdout.split()[-1])
    assert points >= 3  # the Brain, a transcript, the audit trail at least
    forgotten = untouched = 0
    for kill_at in range(1, points + 1):
        for how in ("before", "after"):
            home = _copy(template, tmp_path / f"{how}-{kill_at}")
            done = _forget(home, kill_at, how, by)
            assert done.returncode == -9, done.stderr  # killed where it was meant to be
            settings = load_settings(home, environ={}, embedder="hashing")
            with build_memory(settings) as memory:  # opening finishes the forget
                facts = sorted(f.value or "" for f in memory.facts())
                hits = [h.item.content for h in memory.recall("Dmytro Zhabotynsky", k=50).hits]
            monkeypatch.setenv("KRONIKA_HOME", str(home))
            monkeypatch.setenv("KRONIKA_EMBEDDER", "hashing")
            assert main(["doctor"]) == 0, (how, kill_at)
            assert main(["doctor", "--fix"]) == 0, (how, kill_at)
            if facts == ["Kraków"]:  # forgotten: whole, for good
                assert not any(WORDS[by].search(h.casefold()) for h in hits), (how, kill_at)
                assert _holding(home, WORDS[by]) == [], (how, kill_at)
                with build_memory(settings) as memory:  # doctor --fix brought nothing back
                    assert sorted(f.value or "" for f in memory.facts()) == ["Kraków"]
                forgotten += 1
            else:  # killed before its first edit: nothing changed, nothing acknowledged
                assert len(facts) == 5 and not (home / "agents/default/.corrupt").exists()
                untouched += 1
    assert untouched <= 1 and forgotten + untouched == 2 * points


def _copy(source: Path, target: Path) -> Path:
    import shutil

    shutil.copytree(source, target)
    return target


def test_a_forget_takes_its_facts_out_of_copies_kept_under_corrupt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kronika.cli import main

    home = tmp_path / "ws"
    _workspace(home)
    brain = home / "agents/default/brain.md"
    whole = brain.read_text(encoding="utf-8")
    brain.write_text(whole.split("- ")[0], encoding="utf-8")  # emptied: its facts kept aside
    settings = load_settings(home, environ={}, embedder="hashing")
    with build_memory(settings) as memory:
        memory.sync()
    [copy] = (home / "agents/default/.corrupt").glob("brain.md.lost.*")
    assert "Zhabotynsky 2" in copy.read_text(encoding="utf-8")
    brain.write_text(whole, encoding="utf-8")  # the person puts the Brain back by hand
    with build_memory(settings) as memory:
        memory.forget(key="neighbour")
    kept = copy.read_text(encoding="utf-8")
    assert "Kraków" in kept and "Zhabotynsky" not in kept  # the rest stays kept
    monkeypatch.setenv("KRONIKA_HOME", str(home))
    monkeypatch.setenv("KRONIKA_EMBEDDER", "hashing")
    assert main(["doctor", "--fix"]) == 0
    with build_memory(settings) as memory:
        assert [f.value for f in memory.facts()] == ["Kraków"]
    assert _holding(home, WORDS["key"]) == []
