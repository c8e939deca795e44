"""A call run in a thread of its own, for tests of writers that wait for each other."""

from __future__ import annotations

import threading
from collections.abc import Callable

WAIT_S = 60.0  # a step that is not held up finishes well within this
HELD_S = 1.5  # how long a step held up is watched to stay waiting


def in_thread(call: Callable[[], object]) -> tuple[threading.Thread, list[BaseException]]:
    """``call()`` started in a daemon thread; the list gets what it raised."""
    errors: list[BaseException] = []

    def run() -> None:
        try:
            call()
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, errors
