"""The folder watch a team-mode push asks which files changed (real folders, real
``inotify``): every kind of change is told, whoever makes it, and where the watch
cannot vouch for an agent its look says to list everything."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kronika.stores.folder_watch import FolderWatch

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the folder watch uses Linux's inotify"
)


def _agents(tmp_path: Path) -> Path:
    agents = tmp_path / "agents"
    for sub in ("ola/sessions", "ola/memory", "ivan/sessions"):
        (agents / sub).mkdir(parents=True)
    (agents / "ola" / "brain.md").write_text("# Brain\n")
    (agents / "ola" / "sessions" / "s1.md").write_text("# s1\n")
    (agents / "ivan" / "brain.md").write_text("# Brain\n")
    return agents


def _listed(watch: FolderWatch, *agents: str) -> None:
    for agent in agents:
        assert watch.look(agent) is None  # a first look lists everything
        watch.listed(agent)


def test_each_kind_of_change_is_told_once_for_its_agent(tmp_path: Path) -> None:
    agents = _agents(tmp_path)
    watch = FolderWatch(agents)
    try:
        _listed(watch, "ola", "ivan")
        assert watch.watching
        assert watch.look("ola") == set()
        with open(agents / "ola" / "sessions" / "s1.md", "r+b") as handle:  # in place
            handle.seek(0, os.SEEK_END)
            handle.write(b"more\n")
        os.utime(agents / "ola" / "brain.md", ns=(1, 1))  # the time alone
        (agents / "ola" / "memory" / "2026-12-07.md").write_text("a note\n")  # new
        (agents / "ivan" / "brain.md").unlink()  # removed
        (agents / "ola" / "sessions" / ".s1.md.x.kronika-tmp").write_text("hidden")
        (agents / "ola" / "notes.txt").write_text("not Markdown")
        assert watch.look("ola") == {"sessions/s1.md", "brain.md", "memory/2026-12-07.md"}
        assert watch.look("ola") == set()
        assert watch.look("ivan") == {"brain.md"}
    finally:
        watch.close()


def test_a_file_renamed_into_place_is_told_under_its_new_name(tmp_path: Path) -> None:
    agents = _agents(tmp_path)
    watch = FolderWatch(agents)
    try:
        _listed(watch, "ola")
        tmp = agents / "ola" / ".brain.md.1234.kronika-tmp"
        tmp.write_text("# Brain\n- city: Kraków\n")
        os.replace(tmp, agents / "ola" / "brain.md")
        os.replace(agents / "ola" / "sessions" / "s1.md", agents / "ola" / "sessions" / "s2.md")
        assert watch.look("ola") == {"brain.md", "sessions/s1.md", "sessions/s2.md"}
    finally:
        watch.close()


def test_a_folder_that_comes_or_goes_makes_its_agent_listed_whole(tmp_path: Path) -> None:
    agents = _agents(tmp_path)
    watch = FolderWatch(agents)
    try:
        _listed(watch, "ola", "ivan")
        (agents / "ola" / "bank" / "entities").mkdir(parents=True)
        (agents / "ola" / "bank" / "entities" / "olena.md").write_text("# Olena\n")
        assert watch.look("ola") is None
        watch.listed("ola")
        # the new folders are watched from then on
        (agents / "ola" / "bank" / "entities" / "olena.md").write_text("# Olena Kovalenko\n")
        assert watch.look("ola") == {"bank/entities/olena.md"}
        shutil.rmtree(agents / "ivan" / "sessions")
        assert watch.look("ivan") is None
        (agents / "new").mkdir()  # an agent that was not there
        assert watch.look("new") is None
        watch.listed("new")
        (agents / "new" / "brain.md").write_text("# Brain\n")
        assert watch.look("new") == {"brain.md"}
    finally:
        watch.close()


def test_a_full_queue_or_a_forgotten_look_lists_every_agent_again(tmp_path: Path) -> None:
    agents = _agents(tmp_path)
    watch = FolderWatch(agents)
    try:
        _listed(watch, "ola", "ivan")
        queued = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
        one, two = agents / "ola" / "brain.md", agents / "ivan" / "brain.md"
        for n in range(queued // 2 + 10):  # two different events a turn: none merged
            os.utime(one, ns=(n, n))
            os.utime(two, ns=(n, n))
        assert watch.look("ola") is None
        assert watch.look("ivan") is None
        _listed(watch, "ola", "ivan")
        assert watch.look("ola") == set()
        watch.forget()
        assert watch.look("ola") is None
    finally:
        watch.close()


def test_an_agent_with_a_symbolic_link_among_its_files_is_listed_at_every_look(
    tmp_path: Path,
) -> None:
    agents = _agents(tmp_path)
    elsewhere = tmp_path / "elsewhere.md"
    elsewhere.write_text("# kept elsewhere\n")
    watch = FolderWatch(agents)
    try:
        _listed(watch, "ola")
        (agents / "ola" / "memory" / "linked.md").symlink_to(elsewhere)
        assert watch.look("ola") is None  # its target may change where no watch sees
        watch.listed("ola", linked=True)
        assert watch.look("ola") is None
    finally:
        watch.close()


def test_the_agents_folder_removed_is_watched_again_once_it_is_back(tmp_path: Path) -> None:
    agents = _agents(tmp_path)
    watch = FolderWatch(agents)
    try:
        _listed(watch, "ola")
        shutil.rmtree(agents)
        assert watch.look("ola") is None
        assert not watch.watching
        _agents(tmp_path)
        _listed(watch, "ola")
        (agents / "ola" / "brain.md").write_text("# Brain again\n")
        assert watch.look("ola") == {"brain.md"}
    finally:
        watch.close()


def test_without_an_agents_folder_or_after_close_every_look_lists(tmp_path: Path) -> None:
    watch = FolderWatch(tmp_path / "agents")
    assert watch.look("ola") is None
    watch.listed("ola")
    assert watch.look("ola") is None
    agents = _agents(tmp_path)
    _listed(watch, "ola")
    assert watch.look("ola") == set()
    watch.close()
    assert not watch.watching
    (agents / "ola" / "brain.md").write_text("# changed after close\n")
    assert watch.look("ola") is None  # a new watch: listed whole first


def test_watches_share_one_instance_and_each_is_told_of_its_own_folder(
    tmp_path: Path,
) -> None:
    limit = int(Path("/proc/sys/fs/inotify/max_user_instances").read_text())
    homes = [_agents(tmp_path / f"home-{n}") for n in range(limit + 10)]
    watches = [FolderWatch(agents) for agents in homes]
    twin = FolderWatch(homes[0])  # a second watch of one folder
    try:
        for watch in [*watches, twin]:
            _listed(watch, "ola")
            assert watch.watching
        (homes[0] / "ola" / "brain.md").write_text("# Brain\n- city: Lviv\n")
        (homes[-1] / "ola" / "sessions" / "s1.md").write_text("# s1 again\n")
        assert watches[0].look("ola") == {"brain.md"}
        assert twin.look("ola") == {"brain.md"}
        assert watches[-1].look("ola") == {"sessions/s1.md"}
        assert all(watch.look("ola") == set() for watch in watches[1:-1])
        watches[0].close()  # the twin is still told
        (homes[0] / "ola" / "brain.md").write_text("# Brain\n- city: Odesa\n")
        assert twin.look("ola") == {"brain.md"}
    finally:
        for watch in [*watches, twin]:
            watch.close()


_FORKED = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    from kronika.stores.folder_watch import FolderWatch

    agents = Path(sys.argv[1])
    watch = FolderWatch(agents)
    assert watch.look("ola") is None
    watch.listed("ola")
    child = os.fork()
    if child == 0:  # the parent's watch is not the child's: it lists, then is told
        code = 0 if watch.look("ola") is None else 3
        watch.listed("ola")
        (agents / "ola" / "memory" / "child.md").write_text("from the child")
        code = code or (0 if watch.look("ola") == {"memory/child.md"} else 4)
        os._exit(code)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0, status
    # the child's edit reached the parent's watch too: the child left it alone
    assert watch.look("ola") == {"memory/child.md"}, watch.look("ola")
    (agents / "ola" / "brain.md").write_text("# after the fork")
    assert watch.look("ola") == {"brain.md"}
    print("ok")
    """
)


def test_a_forked_process_sets_its_own_watch_and_leaves_the_parents(tmp_path: Path) -> None:
    agents = _agents(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", _FORKED, os.fspath(agents)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_a_change_made_while_an_agent_is_listed_is_told_at_the_next_look(tmp_path: Path) -> None:
    """A change made after a look, while its caller lists the files, and read from the
    queue by another watch of the process before the listing is said done, is told at
    the next look: the listing may have read that file before the change."""
    agents = _agents(tmp_path)
    watch, other = FolderWatch(agents), FolderWatch(agents)
    try:
        _listed(other, "ola")
        assert watch.look("ola") is None  # the caller lists every file now...
        (agents / "ola" / "brain.md").write_text("# Brain\n- city: Lviv\n")  # ...meanwhile
        assert other.look("ola") == {"brain.md"}  # reads the queue for both watches
        watch.listed("ola")
        assert watch.look("ola") == {"brain.md"}
        assert watch.look("ola") == set()
    finally:
        watch.close()
        other.close()
