"""Load on the server, on loopback: recall and remember at 1, 16 and 64 clients.

A workspace of ``size`` synthetic conversation turns (the scale benchmark's corpus) is
built with the configured embedder. Recall and remember are timed in process first (one
caller), then ``kronika serve`` is started as its own process on 127.0.0.1 with an
admin key and no rate limit, and each level of concurrency sends ``requests`` requests
(at most ``budget_s`` seconds) over that many keep-alive connections at once. The
requests are encoded before the clock starts, and the connections share one event loop
in one thread, so the client takes little of the cores the server runs on (its CPU time
per request is reported beside the server's; ``client="threads"`` runs the earlier
client, a thread with ``http.client`` per connection, to compare). Every answer is read
whole and checked: any status but 200, an answer cut short, a failed connection, or a
body that is not the answer asked for (a recall's JSON naming its query, a remember's
``applied``) is an error. A request's latency runs from its sending to its answer read
whole; checking the answer is the client's own work and is left out. Reported per
level: p50 and p99 latency, requests a second, errors, the server's and the client's
CPU time per request and the machine's load average as the level began. The server
overhead is the p50 at one client minus the in-process p50. Nothing leaves the
machine, and every loop is bounded.
"""

from __future__ import annotations

import asyncio
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

from kronika import Settings
from kronika.bench._runtime import peak_rss_mb, settings_summary
from kronika.bench.metrics import percentile
from kronika.bench.processes import tree_cpu_seconds
from kronika.bench.report import table
from kronika.bench.scale import synthetic_queries, synthetic_sessions

Progress = Callable[[str, int, int], None]
HOST = "127.0.0.1"
TIMEOUT_S = 60.0
"""How long a client waits for one answer (or a connection) before counting an error."""


def _ms(values: Sequence[float], q: float) -> float:
    return round(percentile(values, q) * 1000, 2)


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


def _environment(settings: Settings) -> dict[str, str]:
    """The environment a ``kronika`` command of the benchmark runs with: ``settings``'s
    embedder and store of record."""
    env = {**os.environ, "KRONIKA_EMBEDDER": settings.embedder}
    env["KRONIKA_EMBEDDER_THREADS"] = str(settings.embedder_threads)
    env.pop("KRONIKA_DATABASE_URL", None)
    if settings.database_url:
        env["KRONIKA_DATABASE_URL"] = settings.database_url
    return env


def _admin_token(home: Path, settings: Settings) -> str:
    """A new admin API key of ``settings``'s tenant, made as a user makes one
    (``kronika keys create``)."""
    command = [sys.executable, "-m", "kronika", "--home", str(home), "keys", "create"]
    command += ["--tenant", settings.tenant, "--role", "admin", "--json"]
    made = subprocess.run(
        command, env=_environment(settings), capture_output=True, text=True, timeout=120
    )
    if made.returncode != 0:
        raise RuntimeError(f"kronika keys create failed: {made.stderr[-2000:]}")
    return str(json.loads(made.stdout)["token"])


def _one_blas_thread() -> None:
    """Vector search on one BLAS thread in this process, as ``kronika serve`` runs it,
    so both sides compare alike."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")


class _Server:
    """``kronika serve`` in its own process, stopped on exit."""

    def __init__(self, home: Path, settings: Settings, extra: Sequence[str] = ()) -> None:
        self.port = _free_port()
        env = _environment(settings)
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

    def cpu_seconds(self) -> float | None:
        """CPU time (user + system) of the server and its worker processes so far; None
        where ``/proc`` cannot tell."""
        return tree_cpu_seconds(self.process.pid)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(30)
        self.log.close()


Body = Callable[[int], tuple[str, dict[str, Any]]]
Check = Callable[[int, bytes], bool]
"""Whether the answer to request ``n`` is the one asked for."""
CLIENTS = ("asyncio", "threads")
"""How the load is sent: ``asyncio`` (the default) keeps every connection on one event
loop in one thread; ``threads`` is the earlier client, a thread and an
``http.client`` connection per client, kept to compare what the client costs."""


def _load(
    server: _Server,
    token: str,
    clients: int,
    requests: int,
    budget_s: float,
    body: Body,
    check: Check,
    client: str = "asyncio",
    database_cpu: Callable[[], float | None] | None = None,
) -> dict[str, Any]:
    """``requests`` calls from ``clients`` concurrent keep-alive connections, every
    answer read whole and checked (any other status than 200, an answer cut short or
    one ``check`` refuses is an error). Besides the server's CPU time per request, the
    client's own (``time.process_time`` of this process while the level ran) says how
    much of the machine the measuring took, and ``database_cpu`` (the CPU time so far
    of a database server on this machine, when there is one) what the database spent."""
    if client not in CLIENTS:
        raise ValueError(f"client must be one of {CLIENTS}, not {client!r}")
    prepare = _threads if client == "threads" else _asyncio_load
    send = prepare(server.port, token, clients, requests, budget_s, body, check)
    load = _load_average()
    database = database_cpu or (lambda: None)
    cpu_before, db_before = server.cpu_seconds(), database()
    mine_before = time.process_time()
    started = time.perf_counter()
    latencies, errors = send()
    wall = time.perf_counter() - started
    mine = time.process_time() - mine_before
    cpu_after, db_after = server.cpu_seconds(), database()
    done = len(latencies) + errors
    return {
        "clients": clients,
        "requests": done,
        "errors": errors,
        "p50_ms": _ms(latencies, 50),
        "p99_ms": _ms(latencies, 99),
        "per_second": round(len(latencies) / wall, 1) if wall > 0 else 0.0,
        "server_cpu_ms": _per_request(cpu_before, cpu_after, done),
        "database_cpu_ms": _per_request(db_before, db_after, done),
        "client_cpu_ms": round(mine / done * 1000, 3) if done else None,
        "client": client,
        "load_average": load,
    }


def _per_request(before: float | None, after: float | None, done: int) -> float | None:
    """Milliseconds of CPU per request between two readings (None: not known)."""
    if before is None or after is None or not done:
        return None
    return round((after - before) / done * 1000, 2)


def _request_bytes(port: int, token: str, path: str, payload: dict[str, Any]) -> bytes:
    """One HTTP/1.1 request, whole, as it goes on the wire."""
    data = json.dumps(payload).encode()
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {HOST}:{port}\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
    )
    return head.encode("latin-1") + data


class BadAnswer(Exception):
    """An answer that is not HTTP/1.1 with a ``Content-Length`` as the server sends."""


class _Connection(asyncio.Protocol):
    """One keep-alive connection that sends a request and reads its answer whole: the
    status line and headers, then exactly ``Content-Length`` bytes of body."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.answer: asyncio.Future[tuple[int, bytes]] | None = None
        self.body_at = -1
        self.length = 0
        self.status = 0
        self.closing = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def send(self, request: bytes) -> asyncio.Future[tuple[int, bytes]]:
        assert self.transport is not None
        self.answer = asyncio.get_running_loop().create_future()
        self.buffer.clear()
        self.body_at = -1
        self.transport.write(request)
        return self.answer

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if self.answer is None or self.answer.done():
            self._fail(BadAnswer("bytes that answer no request"))
            return
        if self.body_at < 0:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            try:
                self._head(bytes(self.buffer[:end]))
            except (BadAnswer, ValueError) as exc:
                self._fail(BadAnswer(str(exc)))
                return
            self.body_at = end + 4
        have = len(self.buffer) - self.body_at
        if have < self.length:
            return
        if have > self.length:
            self._fail(BadAnswer("more bytes than Content-Length"))
            return
        self.answer.set_result((self.status, bytes(self.buffer[self.body_at :])))

    def _head(self, head: bytes) -> None:
        lines = head.split(b"\r\n")
        version, status = lines[0].split(b" ", 2)[:2]
        if version != b"HTTP/1.1":
            raise BadAnswer(f"status line {lines[0]!r}")
        self.status = int(status)
        length = None
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"connection" and value.strip().lower() == b"close":
                self.closing = True
            elif name == b"transfer-encoding":
                raise BadAnswer("a body without Content-Length")
        if length is None:
            raise BadAnswer("no Content-Length")
        self.length = length

    def _fail(self, exc: Exception) -> None:
        if self.answer is not None and not self.answer.done():
            self.answer.set_exception(exc)
        self.closing = True
        if self.transport is not None:
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closing = True
        if self.answer is not None and not self.answer.done():
            self.answer.set_exception(exc or ConnectionResetError("closed by the server"))


def _asyncio_load(
    port: int,
    token: str,
    clients: int,
    requests: int,
    budget_s: float,
    body: Body,
    check: Check,
) -> Callable[[], tuple[list[float], int]]:
    """The load from one event loop: ``clients`` connections, the requests encoded
    here, before the clock starts, each answer parsed by its ``Content-Length``."""
    wire = [_request_bytes(port, token, *body(n)) for n in range(requests)]
    return lambda: asyncio.run(_asyncio_clients(port, clients, budget_s, wire, check))


async def _asyncio_clients(
    port: int, clients: int, budget_s: float, wire: Sequence[bytes], check: Check
) -> tuple[list[float], int]:
    loop = asyncio.get_running_loop()
    latencies: list[float] = []
    errors = 0
    counter = iter(enumerate(wire))
    deadline = time.monotonic() + budget_s

    async def client() -> None:
        nonlocal errors
        conn: _Connection | None = None
        while time.monotonic() < deadline:
            next_one = next(counter, None)
            if next_one is None:
                break
            n, request = next_one
            started = time.perf_counter()
            try:
                if conn is None or conn.closing:
                    conn = None
                    _, conn = await asyncio.wait_for(
                        loop.create_connection(_Connection, HOST, port), TIMEOUT_S
                    )
                assert conn is not None
                pending = conn.send(request)
                # a timer, not wait_for: one future less between the answer and the clock
                timer = loop.call_at(loop.time() + TIMEOUT_S, _time_out, pending)
                try:
                    status, answer = await pending
                finally:
                    timer.cancel()
                took = time.perf_counter() - started  # the check is the client's own work
                ok = status == 200 and check(n, answer)
            except (OSError, BadAnswer, TimeoutError):
                ok, took = False, 0.0
                if conn is not None and conn.transport is not None:
                    conn.transport.close()
                conn = None
            if ok:
                latencies.append(took)
            else:
                errors += 1
        if conn is not None and conn.transport is not None:
            conn.transport.close()

    await asyncio.gather(*(client() for _ in range(clients)))
    return latencies, errors


def _time_out(pending: asyncio.Future[tuple[int, bytes]]) -> None:
    if not pending.done():
        pending.set_exception(TimeoutError(f"no answer in {TIMEOUT_S:.0f} s"))


def _threads(
    port: int,
    token: str,
    clients: int,
    requests: int,
    budget_s: float,
    body: Body,
    check: Check,
) -> Callable[[], tuple[list[float], int]]:
    """The earlier client: a thread and an ``http.client`` connection per client."""
    return lambda: _thread_clients(port, token, clients, requests, budget_s, body, check)


def _thread_clients(
    port: int,
    token: str,
    clients: int,
    requests: int,
    budget_s: float,
    body: Body,
    check: Check,
) -> tuple[list[float], int]:
    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()
    counter = iter(range(requests))
    deadline = time.monotonic() + budget_s
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

    def client() -> None:
        conn = http.client.HTTPConnection(HOST, port, timeout=TIMEOUT_S)
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
                data = answer.read()  # whole, whatever the status: the connection goes on
                took = time.perf_counter() - started  # the check is the client's own work
                ok = answer.status == 200 and check(n, data)
            except (OSError, http.client.HTTPException):
                ok, took = False, 0.0
                conn.close()
                conn = http.client.HTTPConnection(HOST, port, timeout=TIMEOUT_S)
            with lock:
                if ok:
                    latencies.append(took)
                else:
                    errors[0] += 1
        conn.close()

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return latencies, errors[0]


def _load_average() -> float | None:
    """The machine's 1-minute load average: on a shared machine, what else was running."""
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


def run_serve(
    size: int,
    *,
    requests: int,
    clients: Sequence[int] = (1, 16, 64),
    budget_s: float = 60.0,
    settings: Settings | None = None,
    progress: Progress | None = None,
    workers: Sequence[int] = (1,),
    index: str | None = None,
    client: str = "asyncio",
) -> dict[str, Any]:
    """The server under load beside the in-process figures (see the module docstring):
    on the local workspace, then, with ``index`` ``postgres`` or ``postgres=URL``, on the
    PostgreSQL store of record; at each count of ``workers`` processes. ``client``: how
    the load is sent (:data:`CLIENTS`)."""
    from kronika.bench.postgres import postgres_site

    if client not in CLIENTS:
        raise ValueError(f"client must be one of {CLIENTS}, not {client!r}")

    say = progress or (lambda label, done, total: None)
    # every level asks questions of its own: none is asked twice in a run
    levels_count = (1 + len(workers) * len(clients)) * 2
    queries = synthetic_queries(max(requests * levels_count, 50))
    chosen = settings or Settings()
    runs = []
    with tempfile.TemporaryDirectory(prefix="kronika-bench-serve-") as tmp:
        home = Path(tmp) / "local"
        runs.append(
            _backend("local", home, chosen.with_overrides(home=home, database_url=""),
                     size, requests, clients, budget_s, workers, queries, say, client, None)
        )  # fmt: skip
        with postgres_site(index) as site:
            if site is not None:
                home = Path(tmp) / "postgres"
                with site.database() as url:
                    pg = chosen.with_overrides(home=home, database_url=url)
                    runs.append(
                        _backend("postgres", home, pg, size, requests, clients, budget_s,
                                 workers, queries, say, client, site.cpu_seconds)
                    )  # fmt: skip
    return _results(size, requests, chosen, runs, client)


def _backend(
    backend: str,
    home: Path,
    settings: Settings,
    size: int,
    requests: int,
    clients: Sequence[int],
    budget_s: float,
    workers: Sequence[int],
    queries: Sequence[str],
    say: Progress,
    client: str,
    database_cpu: Callable[[], float | None] | None,
) -> dict[str, Any]:
    """One backend's figures: in process, then served at each count of ``workers``;
    ``database_cpu``: the CPU time so far of the database server it runs on, when that
    server is on this machine (see :func:`_load`)."""
    from kronika import build_memory

    asked = iter(range(len(queries)))
    say(f"{backend}: building {size} items", 0, size)
    memory = build_memory(settings, create=True)
    _one_blas_thread()
    try:
        memory.import_sessions(settings.default_agent, _sessions(size))
        say(f"{backend}: in process", 0, 2)
        inproc = {
            "recall": _in_process(
                lambda n: memory.recall(queries[next(asked)], k=10), requests, budget_s
            ),
            "remember": _in_process(
                lambda n: memory.remember(f"bench fact {n}: {queries[n % len(queries)]}"),
                requests,
                budget_s,
            ),
        }
    finally:
        memory.close()
    token = _admin_token(home, settings)
    served = []
    for count in workers:
        server = _Server(home, settings, ["--workers", str(count)])
        levels: dict[str, list[dict[str, Any]]] = {"recall": [], "remember": []}
        try:
            server.wait_ready()
            agent = f"/v1/agents/{settings.default_agent}"
            for level in clients:
                start = next(asked)
                for _ in range(requests - 1):
                    next(asked)
                say(f"{backend}, {count} workers: recall at {level} clients", 0, 1)
                body = _recall_body(agent, queries, start)
                check = _recall_check(queries, start)
                levels["recall"].append(
                    _load(server, token, level, requests, budget_s, body, check, client,
                          database_cpu)
                )  # fmt: skip
            for level in clients:
                say(f"{backend}, {count} workers: remember at {level} clients", 0, 1)
                body = _remember_body(agent, queries, f"{count}.{level}")
                levels["remember"].append(
                    _load(server, token, level, requests, budget_s, body, _remember_check,
                          client, database_cpu)
                )  # fmt: skip
        finally:
            server.stop()
        served.append({"workers": count, **levels})
    return {"backend": backend, "in_process": inproc, "servers": served}


def _recall_body(agent: str, queries: Sequence[str], start: int) -> Body:
    return lambda n: (f"{agent}/recall", {"query": queries[start + n], "k": 10})


def _recall_check(queries: Sequence[str], start: int) -> Check:
    """A recall's answer: JSON naming the query asked, with its list of hits."""

    def check(n: int, answer: bytes) -> bool:
        found = _json(answer)
        return found.get("query") == queries[start + n] and isinstance(found.get("hits"), list)

    return check


def _remember_check(n: int, answer: bytes) -> bool:
    """A remember's answer: the receipt of a write that was applied."""
    return _json(answer).get("outcome") == "applied"


def _json(answer: bytes) -> dict[str, Any]:
    try:
        found = json.loads(answer)
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def _remember_body(agent: str, queries: Sequence[str], tag: str) -> Body:
    return lambda n: (
        f"{agent}/memories",
        {"content": f"served fact {tag}.{n}: {queries[n % len(queries)]}"},
    )


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
    load = _load_average()
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
        "load_average": load,
    }


def _results(
    size: int, requests: int, settings: Settings, runs: list[dict[str, Any]], client: str
) -> dict[str, Any]:
    rows = []
    headline: dict[str, Any] = {"items": size}
    errors = 0
    for run in runs:
        backend, inproc = run["backend"], run["in_process"]
        for op in ("recall", "remember"):
            base = inproc[op]
            rows.append(
                [op, backend, "in process", "-", "1", f"{base['p50_ms']}", f"{base['p99_ms']}",
                 f"{base['per_second']}", "0", "-", "-", "-", _shown(base.get("load_average"))]
            )  # fmt: skip
            for served in run["servers"]:
                for level in served[op]:
                    rows.append(
                        [op, backend, "server", str(served["workers"]), str(level["clients"]),
                         f"{level['p50_ms']}", f"{level['p99_ms']}", f"{level['per_second']}",
                         str(level["errors"]), _shown(level.get("server_cpu_ms")),
                         _shown(level.get("database_cpu_ms")), _shown(level.get("client_cpu_ms")),
                         _shown(level.get("load_average"))]
                    )  # fmt: skip
                    errors += level["errors"]
        one = [s for s in run["servers"] if s["workers"] == 1] or run["servers"][:1]
        for op in ("recall", "remember"):
            if one and one[0][op]:
                overhead = round(one[0][op][0]["p50_ms"] - inproc[op]["p50_ms"], 2)
                headline[f"{backend}_{op}_overhead_p50_ms"] = overhead
        headline[f"{backend}_recall_best_per_second"] = max(
            (lvl["per_second"] for s in run["servers"] for lvl in s["recall"]), default=0.0
        )
        headline[f"{backend}_recall_in_process_per_second"] = inproc["recall"]["per_second"]
    headline["errors"] = errors
    headline["peak_rss_mb_client"] = round(peak_rss_mb(), 1)
    return {
        "benchmark": "serve",
        "items": size,
        "requests_per_level": requests,
        "client": client,
        "settings": settings_summary(settings),
        "runs": runs,
        "headline": headline,
        "tables": [
            table(
                f"kronika serve on loopback, {size} items",
                [
                    "call",
                    "backend",
                    "where",
                    "workers",
                    "clients",
                    "p50 ms",
                    "p99 ms",
                    "per second",
                    "errors",
                    "server CPU ms/request",
                    "database CPU ms/request",
                    "client CPU ms/request",
                    "load average",
                ],
                rows,
            )  # fmt: skip
        ],
    }


def _shown(value: float | None) -> str:
    return "-" if value is None else f"{value}"
