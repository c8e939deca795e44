"""``kronika serve --workers N``: N server processes on one address.

The parent claims the address (binds it, so a port in use fails at once), then forks N
workers; each builds its own memory (its own index connection, its own copy of the
model) and runs uvicorn on a listening socket of its own on that address
(``SO_REUSEPORT``), so the kernel spreads new connections evenly over the workers. The
parent only watches: a worker that dies is started again (at most once a second), and
SIGTERM or SIGINT stops them all. Forking (not spawning) hands each worker the parent's
settings as they are, and the parent has loaded nothing heavy by then.

What several workers share is what the store shares: on PostgreSQL the database; on a
local workspace the Markdown files, the index and the workspace lock, which orders
writers across processes (tests/server/test_workers.py writes through two workers at
once and finds every write, read back through either worker). Job records are in the
shared job book (:mod:`kronika.server.jobbook`), so any worker answers for any job.
Each worker has its own rate limiter: a key may send up to N times ``--rate``.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import socket
import sys
import time
from collections.abc import Callable
from multiprocessing.connection import wait
from multiprocessing.process import BaseProcess
from types import FrameType

from kronika.errors import ConfigError, KronikaError

MAX_WORKERS = 64
_RESTART_PAUSE_S = 1.0
_EARLY_S = 10.0
"""A worker that ends sooner than this after its start failed to start."""
_EARLY_DEATHS = 3
"""Failed starts in a row after which the server gives up (a broken workspace, a bad
setting): starting again would fail the same way forever."""


def bind(host: str, port: int) -> socket.socket:
    """The address, claimed for the workers (IPv6 when ``host`` is an IPv6 address):
    bound, so a port in use fails here, but not listening; each worker listens on a
    socket of its own on the same address (:func:`listener`)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # first without SO_REUSEPORT, which would let this bind beside another server's
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind((host, port))
        port = probe.getsockname()[1]
    sock = _tcp_socket(family)
    sock.bind((host, port))
    return sock


def listener(claimed: socket.socket) -> socket.socket:
    """A worker's own listening socket on ``claimed``'s address.

    Each worker listens on its own socket (``SO_REUSEPORT``) and the kernel spreads new
    connections over them. One socket shared by every worker handed a burst of
    connections to whichever worker woke first, which accepted them all: 63 of 64
    clients' kept connections ended in one worker while the other idled.
    """
    sock = _tcp_socket(claimed.family)
    sock.bind(claimed.getsockname())
    sock.listen(2048)
    return sock


def _tcp_socket(family: socket.AddressFamily) -> socket.socket:
    # Named TCP, not protocol 0: asyncio turns Nagle's algorithm off (TCP_NODELAY) only on
    # connections whose socket says IPPROTO_TCP. Without it a response's body waited for
    # the client's delayed acknowledgement of its headers: some 40 ms on every request.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    return sock


def supervise(count: int, sock: socket.socket, run_worker: Callable[[socket.socket], None]) -> int:
    """Run ``count`` forked workers of ``run_worker(sock)`` until SIGTERM or SIGINT,
    starting again any that dies; returns the exit status for the command."""
    context = multiprocessing.get_context("fork")
    stopping = False

    def stop(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True

    started: dict[int, float] = {}

    def start() -> BaseProcess:
        process = context.Process(target=_child, args=(run_worker, sock), daemon=False)
        process.start()
        started[id(process)] = time.monotonic()
        return process

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    workers = [start() for _ in range(count)]
    early = 0
    status = 0
    try:
        while not stopping:
            ended = wait([w.sentinel for w in workers], timeout=0.5)
            if not ended or stopping:
                continue
            dead = [w for w in workers if not w.is_alive()]
            if any(time.monotonic() - started[id(w)] < _EARLY_S for w in dead):
                early += 1
            else:
                early = 0
            if early >= _EARLY_DEATHS:
                status = 1
                break
            time.sleep(_RESTART_PAUSE_S)  # a worker that cannot start must not spin
            workers = [w if w.is_alive() else start() for w in workers]
    finally:
        for worker in workers:
            if worker.is_alive() and worker.pid is not None:
                os.kill(worker.pid, signal.SIGTERM)
        for worker in workers:
            worker.join(30)
            if worker.is_alive():
                worker.kill()
                worker.join(5)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        sock.close()
    if status:
        raise ConfigError("the server's workers stopped as they started; see their messages above")
    return status


def _child(run_worker: Callable[[socket.socket], None], sock: socket.socket) -> None:
    # the parent's handlers only set its flag; a worker stops as uvicorn does
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    try:
        own = listener(sock)
    except OSError as exc:
        print(f"kronika serve: cannot listen: {exc.strerror or exc}", file=sys.stderr)
        sys.exit(2)
    try:
        run_worker(own)
    except KronikaError as exc:  # said once, plainly, as the command would say it
        print(f"kronika serve: {type(exc).__name__}: {exc}", file=sys.stderr)
        sys.exit(2)
