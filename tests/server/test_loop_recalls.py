"""Which recalls the server runs on its event loop (kronika.server.loop_recalls): only
one whose memory's last recall, since the last write, was quick."""

from __future__ import annotations

from kronika import build_memory
from kronika.server.loop_recalls import LOOP_BUDGET_S, LoopRecalls
from kronika.settings import Settings


class Ticks:
    """A clock the test moves: each reading is the next of ``times``."""

    def __init__(self, *times: float) -> None:
        self.times = list(times)

    def __call__(self) -> float:
        return self.times.pop(0)


def test_a_recall_runs_on_the_loop_only_after_a_quick_one_since_the_last_write(
    settings: Settings,
) -> None:
    quick, slow = LOOP_BUDGET_S / 2, LOOP_BUDGET_S * 20
    with build_memory(settings, create=True) as memory:
        memory.remember("Kyiv", key="city")
        loops = LoopRecalls(clock=Ticks(0.0, quick, 10.0, 10.0 + slow, 20.0, 20.0 + quick))
        mark = memory.admin.items_mark()
        assert mark is not None
        assert not loops.on_loop(memory, mark)  # nothing measured yet: a thread
        with loops.timed(memory, mark):
            memory.recall("where do I live?")
        assert loops.on_loop(memory, mark)
        # a write changes the mark: the next recall is measured again, in a thread
        memory.remember("Lviv", key="city")
        changed = memory.admin.items_mark()
        assert changed != mark and not loops.on_loop(memory, changed)
        # a slow recall (huge items to count) sends the next ones to threads
        with loops.timed(memory, changed):
            memory.recall("where do I live?")
        assert not loops.on_loop(memory, changed)
        with loops.timed(memory, changed):
            memory.recall("where do I live?")
        assert loops.on_loop(memory, changed)
        assert not loops.on_loop(memory, None)  # an index that cannot say: a thread


def test_recalls_arriving_while_one_is_measured_wait_for_it_then_run_on_the_loop(
    settings: Settings,
) -> None:
    import asyncio

    with build_memory(settings, create=True) as memory:
        memory.remember("Kyiv", key="city")
        memory.recall("where do I live?")  # the first of a process loads the token counter
        loops = LoopRecalls()
        mark = memory.admin.items_mark()
        order: list[str] = []

        async def measured_one() -> None:
            with loops.measuring(memory):
                order.append("measuring")
                await asyncio.sleep(0.05)  # the recall, in a thread
                with loops.timed(memory, mark):
                    memory.recall("where do I live?")
                order.append("measured")

        async def arriving() -> bool:
            await asyncio.sleep(0)  # arrives once the first is being measured
            found, quick = await loops.measured(memory, mark)
            order.append("decided")
            return quick and loops.on_loop(memory, found)

        async def both() -> bool:
            _, on_loop = await asyncio.gather(measured_one(), arriving())
            return on_loop

        assert asyncio.run(both())
        assert order == ["measuring", "measured", "decided"]
