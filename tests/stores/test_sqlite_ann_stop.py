"""A vector graph being built when its index closes: the build ends with it, so a
process that closes and ends mid-build exits cleanly instead of aborting in the middle
of the graph library's threads ("terminate called without an active exception")."""

from __future__ import annotations

import subprocess
import sys
import textwrap

BUILD_AND_STOP = textwrap.dedent(
    """
    import time

    import numpy as np

    from kronika.stores.sqlite.ann import AnnCache

    rows = np.random.default_rng(1).standard_normal((200_000, 48)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    cache = AnnCache(1, None, "model", 48, identity="index")
    cache._start_build(np.arange(1, len(rows) + 1, dtype=np.int64), rows, None, (0, 0, 0))
    time.sleep(0.5)
    print("building" if cache.building else "built already")
    cache.stop()
    print("stopped" if not cache.building and cache.wait(0) else "still building")
    """
)


def test_a_graph_build_under_way_ends_when_stopped_and_the_process_exits_cleanly() -> None:
    done = subprocess.run(
        [sys.executable, "-c", BUILD_AND_STOP], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["building", "stopped"], done.stdout
