"""Storage policies changed while ``kronika serve --workers 2`` runs hold in every worker
at once: an edit made through one worker, a hand edit of ``kronika.toml``, and in a
worker started again after a crash; a bad hand edit keeps the policies in force."""

from __future__ import annotations

import http.client
import json
import os
import signal
import time
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path
from typing import Any

import pytest
from tests.server.test_workers import ServerProcess, workspace  # noqa: F401

from kronika.engine.policy_follow import PolicyFollower

NO_HR = """[[policy]]
name = "never store #hr-private"
channels = ["hr-private"]
store = false
"""


class Connection:
    """A kept-alive connection to the server, and the worker that accepted it."""

    def __init__(self, server: ServerProcess, token: str) -> None:
        self.http = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        self.token = token
        assert self.call("GET", "/healthz")[0] == 200
        self.worker = _worker_holding(server, self.http.sock.getsockname()[1])

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"}
        self.http.request(method, path, body=data, headers=headers)
        answer = self.http.getresponse()
        return answer.status, json.loads(answer.read() or b"null")

    def remember(self, content: str, channel: str) -> str:
        status, receipt = self.call(
            "POST", "/v1/agents/default/memories", {"content": content, "channel": channel}
        )
        assert status == 200, receipt
        return str(receipt["outcome"])


def _worker_holding(server: ServerProcess, client_port: int) -> int:
    """The worker whose open files hold the server's end of the connection from
    ``client_port`` (read from ``/proc``)."""
    inode = None
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                local = int(fields[1].rsplit(":", 1)[1], 16)
                remote = int(fields[2].rsplit(":", 1)[1], 16)
                if local == server.port and remote == client_port:
                    inode = fields[9]
    assert inode is not None
    for pid in server.workers():
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            with suppress(OSError):
                if os.readlink(fd) == f"socket:[{inode}]":
                    return pid
    raise AssertionError(f"no worker holds the connection from port {client_port}")


def _one_on_each_worker(server: ServerProcess, token: str) -> dict[int, Connection]:
    """A kept-alive connection served by each worker (the kernel spreads new ones)."""
    found: dict[int, Connection] = {}
    spare = []
    for _ in range(64):
        conn = Connection(server, token)
        if conn.worker in found:
            spare.append(conn)
        else:
            found[conn.worker] = conn
        if len(found) == len(server.workers()):
            break
    for conn in spare:
        conn.http.close()
    assert sorted(found) == sorted(server.workers())
    return found


@pytest.fixture
def served(workspace: tuple[Path, str]) -> Iterator[tuple[ServerProcess, str]]:  # noqa: F811
    home, token = workspace
    server = ServerProcess(home, workers=2)
    try:
        yield server, token
    finally:
        assert server.stop() == 0


def test_a_policy_edited_through_one_worker_holds_in_every_worker(
    served: tuple[ServerProcess, str],
) -> None:
    server, token = served
    conns = _one_on_each_worker(server, token)
    for conn in conns.values():  # every worker has served under the policies of its start
        assert conn.remember("the HR budget is 5M", "hr-private") != "refused"
    editor, other = conns.values()
    status, shown = editor.call("PUT", "/v1/agents/default/policies", {"toml": NO_HR})
    assert status == 200, shown
    # before, the other worker went on storing what the new rule refuses until restarted
    for n, conn in enumerate([other, editor, other]):
        assert conn.remember(f"salary of employee {n} is secret", "hr-private") == "refused"
        assert conn.remember(f"lunch {n} is at noon", "general") != "refused"
    status, listed = other.call("GET", "/v1/agents/default/policies")
    assert [p["name"] for p in listed["policies"]] == ["never store #hr-private"]

    # a worker started again after a crash takes the file's policies, not the ones the
    # server read when it started
    os.kill(other.worker, signal.SIGKILL)
    deadline = time.monotonic() + 60
    while len(server.workers()) < 2 or other.worker in server.workers():
        assert time.monotonic() < deadline, "the worker was not started again"
        time.sleep(0.2)
    for conn in conns.values():
        conn.http.close()
    for conn in _one_on_each_worker(server, token).values():
        assert conn.remember("the new hire's salary", "hr-private") == "refused"
        conn.http.close()


def test_hand_edits_of_the_file_hold_in_every_worker_and_a_bad_one_is_only_a_warning(
    served: tuple[ServerProcess, str],
) -> None:
    server, token = served
    config = server.home / "kronika.toml"
    kept = config.read_text(encoding="utf-8")
    conns = _one_on_each_worker(server, token)
    for conn in conns.values():
        assert conn.remember("the HR budget is 5M", "hr-private") != "refused"

    config.write_text(kept + "\n" + NO_HR, encoding="utf-8")  # in place, as editors do
    for conn in conns.values():
        assert conn.remember("a salary", "hr-private") == "refused"

    # the same size again, at once: the stamp may not change, the content does
    config.write_text(kept + "\n" + NO_HR.replace("hr-private", "hr-payroll"), "utf-8")
    for conn in conns.values():
        assert conn.remember("a payslip", "hr-payroll") == "refused"
        assert conn.remember("another salary", "hr-private") != "refused"

    # a broken file: the workers keep the rule in force, warn once, and go on serving
    config.write_text(kept + "\n[[policy]]\nname = 'half\n", encoding="utf-8")
    for _ in range(2):
        for conn in conns.values():
            assert conn.remember("a payslip", "hr-payroll") == "refused"
    config.write_text(kept + "\n[[policy]]\nname = 'x'\nstore = 'no'\n", encoding="utf-8")
    for conn in conns.values():
        assert conn.remember("a payslip", "hr-payroll") == "refused"
    assert sorted(conns) == sorted(server.workers())  # no worker died

    config.write_text(kept, encoding="utf-8")  # the rule taken out: stored again
    for conn in conns.values():
        assert conn.remember("a payslip", "hr-payroll") != "refused"
        conn.http.close()
    said = (server.home.parent / f"serve-{server.port}.log").read_text(errors="replace")
    assert "Traceback" not in said
    warnings = [line for line in said.splitlines() if "policies in force stay" in line]
    # one warning per worker and broken version of the file, each naming the problem
    assert len(warnings) == 4, said
    assert sum("not valid TOML" in w for w in warnings) == 2, warnings
    assert sum("store" in w for w in warnings) == 2, warnings


def test_a_follower_reads_the_file_again_only_when_it_changed(tmp_path: Path) -> None:
    config = tmp_path / "kronika.toml"
    follower = PolicyFollower(config)
    assert follower.poll() is None  # no file: nothing to apply, nothing to say
    config.write_text(NO_HR, encoding="utf-8")
    first = follower.poll()
    assert first is not None and [r.name for r in first.rules] == ["never store #hr-private"]
    assert follower.poll() is None
    config.write_text(NO_HR.replace("#hr-private", "#hr-payroll"), encoding="utf-8")
    second = follower.poll()
    assert second is not None and [r.name for r in second.rules] == ["never store #hr-payroll"]
    settled = time.time_ns() - 10_000_000_000
    os.utime(config, ns=(settled, settled))
    assert follower.poll() is None  # read again (the stamp changed), the same text
    config.unlink()
    assert follower.poll() is None  # gone: the policies in force stay
