"""A TCP proxy in front of a database server that counts the times a client waits for
it, and can make the server seem further away.

Every answer of the server is held back :attr:`RoundTripProxy.hold_s` before it is
passed on. A *round trip* is counted each time the client sends again after an answer
reached it. With answers held long enough (20 ms is plenty), a client that sends
several statements without waiting sends them all before any answer comes back, and
the count is the number of times it waited; held 1 ms, the server is as a database
1 ms away (in another building of one data centre) is to every call.

>>> proxy = RoundTripProxy("postgresql://me@127.0.0.1:5432/db")  # doctest: +SKIP
>>> memory = build_memory(settings_with(database_url=proxy.url))  # doctest: +SKIP
>>> with proxy.counting() as made:  # doctest: +SKIP
...     memory.recall("where did I park?")
>>> made[0]  # doctest: +SKIP
6
"""

from __future__ import annotations

import contextlib
import queue
import socket
import threading
import time
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit

COUNTING_HOLD_S = 0.02
"""How long answers are held to count waits: longer than a client's pauses between
statements it sends together."""


class RoundTripProxy:
    """Listening on 127.0.0.1 for the server of ``url``; :attr:`url` goes through it."""

    def __init__(self, url: str, hold_s: float = COUNTING_HOLD_S) -> None:
        parts = urlsplit(url)
        self._target = (parts.hostname or "127.0.0.1", parts.port or 5432)
        self.hold_s = hold_s
        self._lock = threading.Lock()
        self._count = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        port = self._listener.getsockname()[1]
        user, at, _ = parts.netloc.rpartition("@")
        self.url = urlunsplit(parts._replace(netloc=f"{user}{at}127.0.0.1:{port}"))
        self._closed = False
        self._open: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def count(self) -> int:
        """Round trips made through the proxy so far, by every connection."""
        with self._lock:
            return self._count

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
                server = socket.create_connection(self._target)
            except OSError:
                return
            self._open += (client, server)
            for sock in (client, server):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            answered = [True]  # the server spoke last (its greeting follows the start)
            for pump, pair in ((self._up, (client, server)), (self._down, (server, client))):
                threading.Thread(target=pump, args=(*pair, answered), daemon=True).start()

    def _up(self, src: socket.socket, dst: socket.socket, answered: list[bool]) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                with self._lock:
                    if answered[0]:
                        self._count += 1
                        answered[0] = False
                dst.sendall(data)
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)

    def _down(self, src: socket.socket, dst: socket.socket, answered: list[bool]) -> None:
        held: queue.Queue[tuple[float, bytes]] = queue.Queue()

        def deliver() -> None:
            with contextlib.suppress(OSError):
                while True:
                    came, data = held.get()
                    if not data:
                        break
                    time.sleep(max(0.0, came + self.hold_s - time.monotonic()))
                    with self._lock:
                        answered[0] = True
                    dst.sendall(data)
            for sock in (dst, src):  # the server is done: the pair is closed
                sock.close()

        threading.Thread(target=deliver, daemon=True).start()
        data = b"-"
        with contextlib.suppress(OSError):
            while data:
                data = src.recv(65536)
                held.put((time.monotonic(), data))
        held.put((time.monotonic(), b""))

    @contextlib.contextmanager
    def counting(self) -> Iterator[list[int]]:
        """The round trips made inside the block: ``[n]`` once it ends (answers still
        on their way as it begins and ends are let through first)."""
        result: list[int] = []
        time.sleep(2 * self.hold_s)
        before = self.count
        yield result
        time.sleep(2 * self.hold_s)
        result.append(self.count - before)

    def close(self) -> None:
        self._closed = True
        self._listener.close()
        for sock in self._open:
            sock.close()

    def __enter__(self) -> RoundTripProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
