"""Turns saved at once by several threads and processes (their fsyncs shared by group
commit) are all kept, in each writer's order, with their audit lines; a turn that was
acknowledged survives the writer being killed right after."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from kronika import Memory, build_memory, load_settings
from kronika.stores.audit import JsonlAuditLog

_WRITER = """
import sys
from kronika import build_memory, load_settings
home, who, session, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
settings = load_settings(home, environ={}, embedder="hashing")
with build_memory(settings) as memory:
    for n in range(count):
        turn = memory.save_turn(session, who, f"{who} writes {n}")
        print(turn, flush=True)  # acknowledged: saved and on disk
"""


def _writer(home: Path, who: str, session: str, count: int) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(home), who, session, str(count)],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )


def _check(memory: Memory, session: str, writers: dict[str, list[str]]) -> None:
    """Every acknowledged turn is in the session in its writer's order, numbered in
    file order, audited, and indexed as a full re-index would."""
    memory.sync()
    turns = memory.load_session(session)
    ids = [t.provenance.turn_ids[0] for t in turns]
    assert ids == [f"{session}_{n}" for n in range(1, len(turns) + 1)]
    for who, acknowledged in writers.items():
        mine = [t for t in turns if t.speaker == who]
        assert [t.provenance.turn_ids[0] for t in mine][: len(acknowledged)] == acknowledged
        assert [t.content for t in mine] == [f"{who} writes {n}" for n in range(len(mine))]
    audit = JsonlAuditLog(memory.settings.home / "audit.jsonl").read("default")
    audited = {e.summary.split()[0] for e in audit if e.action == "save_turn"}
    assert {f"{session}/{i}" for i in ids} <= audited
    before = {t.id for t in memory.load_session(session)}
    memory.reindex()
    assert {t.id for t in memory.load_session(session)} == before


def test_threads_saving_turns_at_once_keep_every_turn_in_order(memory: Memory) -> None:
    acknowledged: dict[str, list[str]] = {}

    def talk(who: str, session: str) -> None:
        acknowledged[who] = [memory.save_turn(session, who, f"{who} writes {n}") for n in range(20)]

    plan = [("Ada", "shared"), ("Bob", "shared"), ("Cyd", "shared"), ("Dee", "own")]
    threads = [threading.Thread(target=talk, args=plan_item) for plan_item in plan]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    _check(memory, "shared", {who: acknowledged[who] for who in ("Ada", "Bob", "Cyd")})
    _check(memory, "own", {"Dee": acknowledged["Dee"]})


def test_processes_saving_turns_at_once_keep_every_turn_in_order(memory: Memory) -> None:
    memory.save_turn("shared", "user", "user writes 0")
    home = memory.settings.home
    writers = {who: _writer(home, who, "shared", 12) for who in ("Ada", "Bob", "Cyd")}
    writers["Dee"] = _writer(home, "Dee", "own", 12)
    acknowledged = {who: w.communicate(timeout=300)[0].split() for who, w in writers.items()}
    assert [w.returncode for w in writers.values()] == [0, 0, 0, 0]
    _check(memory, "shared", {who: acknowledged[who] for who in ("Ada", "Bob", "Cyd")})
    _check(memory, "own", {"Dee": acknowledged["Dee"]})


def test_an_acknowledged_turn_survives_a_kill_right_after(tmp_path: Path) -> None:
    home = tmp_path / "ws"
    build_memory(load_settings(home, environ={}, embedder="hashing"), create=True).close()
    writer = _writer(home, "Ada", "s1", 10_000)
    assert writer.stdout is not None
    acknowledged = [writer.stdout.readline().strip() for _ in range(25)]
    writer.send_signal(signal.SIGKILL)
    writer.wait(timeout=60)
    writer.stdout.close()
    with build_memory(load_settings(home, environ={}, embedder="hashing")) as memory:
        kept = [t.provenance.turn_ids[0] for t in memory.load_session("s1")]
    assert kept[: len(acknowledged)] == acknowledged
