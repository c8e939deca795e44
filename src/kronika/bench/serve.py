"""Load on the server, on loopback: recall and remember at 1, 16 and 64 clients.

A workspace of ``size`` synthetic conversation turns (the scale benchmark's corpus) is
built with the configured embedder. Recall and remember are timed in process first (one
caller), then ``kronika serve`` is started as its own process on 127.0.0.1 with an
admin key and no rate limit, and each level of concurrency sends ``requests`` requests
(at most ``budget_s`` seconds) from that many threads, each with its own keep-alive
connection. Reported per level: p50 and p99 latency, requests a second, errors (any
answer but 200, or a failed connection). The server overhead is the p50 at one client
minus the in-process p50. Nothing leaves the machine, and every loop is bounded.
"""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from kronika.bench._runtime import peak_rss_mb, settings_summary
from kronika.bench.metrics import percentile
from kronika.bench.report import table
from kronika.bench.scale import synthetic_queries, synthetic_sessions
from kronika.settings import Settings

Progress = Callable[[str, int, int], None]
HOST = "127.0.0.1"


def _ms(values: Sequence[float], q: float) -> float:
    return round(percentile(values, q) * 1000, 2)


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


class _Server:
    """``kronika serve`` in its own process, stopped on exit."""

    def __init__(self, home: Path, settings: Settings, extra: Sequence[str] = ()) -> None:
        self.port = _free_port()
        env = {**os.environ, "KRONIKA_EMBEDDER": settings.embedder}
        env["KRONIKA_EMBEDDER_THREADS"] = str(settings.embedder_threads)
        command = [sys.executable, "-m", "kronika", "--home", str(home), "serve"]
        command += ["--port", str(self.port), "--rate", "0", "--max-body", "1048576", *extra]
        # the server's log goes to a file: a pipe nobody reads would fill and stall it
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            command, env=env, stdout=subprocess.DEVNULL, stderr=self.log
        )

    def wait_ready(self, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self.log.seek(0)
                said = self.log.read().decode("utf-8", "replace")[-2000:]
                raise RuntimeError(f"kronika serve stopped: {said}")
            conn = http.client.HTTPConnection(HOST, self.port, timeout=2)
            try:
                conn.request("GET", "/healthz")
                if conn.getresponse().status == 200:
                    return
            except OSError:
                time.sleep(0.2)
            finally:
                conn.close()
        raise RuntimeError("kronika serve did not answer /healthz in time")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(30)
        self.log.close()


def _load(
    port: int,
    token: str,
    clients: int,
    requests: int,
    budget_s: float,
    body: Callable[[int], tuple[str, dict[str, Any]]],
) -> dict[str, Any]:
    """``requests`` calls from ``clients`` threads (each its own connection)."""
    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()
    counter = iter(range(requests))
    deadline = time.monotonic() + budget_s
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

    def client() -> None:
        conn = http.client.HTTPConnection(HOST, port, timeout=60)
        while time.monotonic() < deadline:
            with lock:
                n = next(counter, None)
            if n is None:
                break
            path, payload = body(n)
            started = time.perf_counter()
            try:
                conn.request("POST", path, json.dumps(payload), headers)
                answer = conn.getresponse()
                answer.read()
                ok = answer.status == 200
            except (OSError, http.client.HTTPException):
                ok = False
                conn.close()
                conn = http.client.HTTPConnection(HOST, port, timeout=60)
            took = time.perf_counter() - started
            with lock:
                if ok:
                    latencies.append(took)
                else:
                    errors[0] += 1
        conn.close()

    threads = [threading.Thread(target=client) for _ in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    done = len(latencies) + errors[0]
    return {
        "clients": clients,
        "requests": done,
        "errors": errors[0],
        "p50_ms": _ms(latencies, 50),
        "p99_ms": _ms(latencies, 99),
        "per_second": round(len(latencies) / wall, 1) if wall > 0 else 0.0,
    }


def run_serve(
    size: int,
    *,
    requests: int,
    clients: Sequence[int] = (1, 16, 64),
    budget_s: float = 60.0,
    settings: Settings | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """The server under load beside the in-process figures (see the module docstring)."""
    from kronika.app import build_memory
    from kronika.server.keys import KeyStore, keys_path
    from kronika.server.run import one_blas_thread

    say = progress or (lambda label, done, total: None)
    queries = synthetic_queries(max(requests, 50))
    with tempfile.TemporaryDirectory(prefix="kronika-bench-serve-") as tmp:
        home = Path(tmp) / "home"
        chosen = (settings or Settings()).with_overrides(home=home)
        say(f"building {size} items", 0, size)
        memory = build_memory(chosen, create=True)
        one_blas_thread()  # as the server runs, so both sides compare alike
        try:
            memory.import_sessions(chosen.default_agent, _sessions(size))
            say("in process", 0, 2)
            inproc = {
                "recall": _in_process(
                    lambda n: memory.recall(queries[n % len(queries)], k=10), requests, budget_s
                ),
                "remember": _in_process(
                    lambda n: memory.remember(f"bench fact {n}: {queries[n % len(queries)]}"),
                    requests,
                    budget_s,
                ),
            }
        finally:
            memory.close()
        token = KeyStore(keys_path(home)).create(chosen.tenant, role="admin").token
        server = _Server(home, chosen)
        levels: dict[str, list[dict[str, Any]]] = {"recall": [], "remember": []}
        try:
            server.wait_ready()
            agent = f"/v1/agents/{chosen.default_agent}"
            bodies: dict[str, Callable[[int], tuple[str, dict[str, Any]]]] = {
                "recall": lambda n: (
                    f"{agent}/recall",
                    {"query": queries[n % len(queries)], "k": 10},
                ),
                "remember": lambda n: (
                    f"{agent}/memories",
                    {"content": f"served fact {n}: {queries[n % len(queries)]}"},
                ),
            }
            steps = len(clients) * 2
            for op, body in bodies.items():
                for count in clients:
                    say(f"{op} at {count} clients", len(levels["recall"]), steps)
                    levels[op].append(_load(server.port, token, count, requests, budget_s, body))
        finally:
            server.stop()
    return _results(size, requests, chosen, inproc, levels)


def _sessions(size: int) -> Any:
    left = size
    for session in synthetic_sessions(size):
        if left <= 0:
            return
        turns = session.turns[:left]
        left -= len(turns)
        yield type(session)(session.session_id, session.started_at, turns, source=session.source)


def _in_process(call: Callable[[int], object], requests: int, budget_s: float) -> dict[str, Any]:
    latencies: list[float] = []
    deadline = time.monotonic() + budget_s
    started = time.perf_counter()
    for n in range(requests):
        if time.monotonic() > deadline:
            break
        t0 = time.perf_counter()
        call(n)
        latencies.append(time.perf_counter() - t0)
    wall = time.perf_counter() - started
    return {
        "clients": 1,
        "requests": len(latencies),
        "errors": 0,
        "p50_ms": _ms(latencies, 50),
        "p99_ms": _ms(latencies, 99),
        "per_second": round(len(latencies) / wall, 1) if wall > 0 else 0.0,
    }


def _results(
    size: int,
    requests: int,
    settings: Settings,
    inproc: dict[str, dict[str, Any]],
    levels: dict[str, list[dict[str, Any]]],
) -> dict[str, Any]:
    rows = []
    for op in ("recall", "remember"):
        base = inproc[op]
        rows.append(
            [op, "in process", "1", f"{base['p50_ms']}", f"{base['p99_ms']}",
             f"{base['per_second']}", "0"]
        )  # fmt: skip
        for level in levels[op]:
            rows.append(
                [op, "server", str(level["clients"]), f"{level['p50_ms']}",
                 f"{level['p99_ms']}", f"{level['per_second']}", str(level["errors"])]
            )  # fmt: skip
    overhead = {
        op: round(levels[op][0]["p50_ms"] - inproc[op]["p50_ms"], 2) if levels[op] else None
        for op in ("recall", "remember")
    }
    best = max((lvl["per_second"] for lvl in levels["recall"]), default=0.0)
    return {
        "benchmark": "serve",
        "items": size,
        "requests_per_level": requests,
        "settings": settings_summary(settings),
        "in_process": inproc,
        "server": levels,
        "headline": {
            "items": size,
            "recall_overhead_p50_ms": overhead["recall"],
            "remember_overhead_p50_ms": overhead["remember"],
            "recall_best_per_second": best,
            "recall_in_process_per_second": inproc["recall"]["per_second"],
            "errors": sum(lvl["errors"] for op in levels.values() for lvl in op),
            "peak_rss_mb_client": round(peak_rss_mb(), 1),
        },
        "tables": [
            table(
                f"kronika serve on loopback, {size} items",
                ["call", "where", "clients", "p50 ms", "p99 ms", "per second", "errors"],
                rows,
            )
        ],
    }
