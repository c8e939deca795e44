"""The job records' SQLite file, opened by several server workers at the same moment."""

from __future__ import annotations

import multiprocessing
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

from kronika.server.jobstore import SqliteJobRecords


def _open(path: str, barrier: Barrier, said: Any) -> None:
    barrier.wait()
    try:
        SqliteJobRecords(Path(path)).close()
    except Exception as exc:  # reported to the test, which names it
        said.put(f"{type(exc).__name__}: {exc}")
    else:
        said.put("ok")


def test_workers_opening_new_job_records_at_once_all_open_them(tmp_path: Path) -> None:
    """`kronika serve --workers N` on a workspace without job records: every worker
    makes or opens the file at the same moment, and none may fail (a worker that did
    stopped with "database is locked" and was started again)."""
    context = multiprocessing.get_context("fork")
    outcomes: list[str] = []
    for trial in range(15):
        path = tmp_path / f"trial-{trial}" / "server-jobs.sqlite"
        path.parent.mkdir()
        barrier = context.Barrier(3)
        said = context.Queue()
        openers = [context.Process(target=_open, args=(str(path), barrier, said)) for _ in range(3)]
        for opener in openers:
            opener.start()
        for opener in openers:
            opener.join(60)
        outcomes += [said.get(timeout=5) for _ in openers]
    assert [o for o in outcomes if o != "ok"] == []
    records = SqliteJobRecords(path)  # the file made by the race is whole and usable
    try:
        assert records.newest("default", 10) == []
    finally:
        records.close()
