"""Which recalls run on the server's event loop (:meth:`Service.recall_batched`).

A recall with nothing to wait for (a local workspace) costs this process's CPU alone,
and handing it to a worker thread only passes the interpreter back and forth with the
loop: 27–30% more CPU per recall at 64 clients (docs/benchmarks-log.md). But a recall
on the loop keeps every other request waiting while it runs, ``/healthz`` included, and
some recalls are long: the first over items just written (their texts embedded, their
tokens counted), or one whose results are pasted logs of 100,000 characters (a second
or more of token counting). A liveness probe that waits a second behind it fails.

So a recall runs on the loop only when the last recall of its memory, at the same mark
of the index's items (:meth:`~kronika.memory.admin.Admin.items_mark`: any write
changes it), took at most :data:`LOOP_BUDGET_S` of its thread's CPU. The first recall
after a write, and the one after a slow recall, run in a worker thread and say, by
their time, whether the next may run on the loop. A recall that turns out long on the
loop sends the next ones to threads, so one such recall at most keeps the loop, and
only until its texts are counted once.

One recall of a memory is measured at a time: the recalls that arrive meanwhile wait
for it (:meth:`LoopRecalls.measured`) and then decide. Sent to threads all at once, 64
recalls arriving together would queue on the memory's lock, and each recall arriving
later would find the lock taken and join that queue: under steady load no recall would
run on the loop again."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager

from kronika.memory import Memory

LOOP_BUDGET_S = 0.05
"""The most CPU time of its thread a recall may take for the next recall of its memory
to run on the loop: a recall over 100,000 items takes about 15 ms, over a million about
30. CPU time, not time passed: on a busy machine a quick recall waits for a core, and
waiting keeps the loop no more than the recall's own work does."""


class LoopRecalls:
    """Per memory (by its index), the mark of the index's items at which its last recall
    was quick, if it was."""

    def __init__(
        self, *, budget_s: float = LOOP_BUDGET_S, clock: Callable[[], float] = time.thread_time
    ) -> None:
        self._budget = budget_s
        self._clock = clock
        self._quick_at: dict[int, Hashable] = {}
        self._lock = threading.Lock()
        self._measuring: dict[int, asyncio.Future[None]] = {}  # on the loop alone

    def on_loop(self, memory: Memory, mark: Hashable | None) -> bool:
        """Whether ``memory``'s next recall may run on the loop, its index's items at
        ``mark`` (:meth:`~kronika.memory.admin.Admin.items_mark`, asked as the recall
        arrived): its last recall, at that mark, was quick, and no written text waits
        to be embedded."""
        with self._lock:
            quick_at = self._quick_at.get(id(memory.index))
        return mark is not None and quick_at == mark and not memory.admin.vectors_waiting()

    @contextmanager
    def timed(self, memory: Memory, mark: Hashable | None) -> Iterator[None]:
        """Time the recall of ``memory`` run in the block and keep whether it was quick,
        at ``mark``, the index's as the recall arrived (a write since makes the next
        recall measure again)."""
        began = self._clock()
        try:
            yield
        finally:
            took = self._clock() - began
            key = id(memory.index)
            with self._lock:
                if mark is not None and took <= self._budget:
                    self._quick_at[key] = mark
                else:
                    self._quick_at.pop(key, None)

    async def measured(self, memory: Memory, mark: Hashable | None) -> tuple[Hashable | None, bool]:
        """Wait, on the event loop, while another recall of ``memory`` is measured
        (:meth:`measuring`) and this one could not run on the loop at ``mark``; then the
        index's mark (asked again after each wait: a write may have come) and whether
        the recall may run on the loop at it (:meth:`on_loop`)."""
        key = id(memory.index)
        while not (quick := self.on_loop(memory, mark)) and (running := self._measuring.get(key)):
            await asyncio.shield(running)
            mark = memory.admin.items_mark()
        return mark, quick

    @contextmanager
    def measuring(self, memory: Memory) -> Iterator[None]:
        """Mark the block, on the event loop, as the measuring recall of ``memory``: the
        recalls of ``memory`` that arrive meanwhile wait for its end (:meth:`measured`).
        Nested in another measuring recall of ``memory`` (none is when it starts), it
        marks nothing."""
        key = id(memory.index)
        if key in self._measuring:
            yield
            return
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._measuring[key] = done
        try:
            yield
        finally:
            del self._measuring[key]
            done.set_result(None)
