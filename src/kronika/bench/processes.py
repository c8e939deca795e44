"""The CPU time of a process and its children, as ``/proc`` tells it (Linux): what
``kronika bench serve`` reads of the server it measures and of the database beside."""

from __future__ import annotations

import os
from pathlib import Path


def tree_cpu_seconds(pid: int, *, reaped: bool = False) -> float | None:
    """CPU time (user + system) so far of process ``pid`` and its live children; with
    ``reaped``, also of the children it has waited for (a server's connections that
    ended meanwhile: their time moves to their parent's count as they end; one that
    ends between the parent's reading and its own is missed by that reading). ``None``
    where ``/proc`` cannot tell (not Linux, the process gone)."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        total = 0
        for one in [pid, *map(int, children)]:
            try:
                fields = Path(f"/proc/{one}/stat").read_text().rsplit(")", 1)[1].split()
            except FileNotFoundError:
                if one == pid:
                    raise
                continue  # a child that ended since the listing: counted as reaped
            total += int(fields[11]) + int(fields[12])
            if reaped and one == pid:
                total += int(fields[13]) + int(fields[14])
    except (OSError, ValueError, IndexError):
        return None
    return total / os.sysconf("SC_CLK_TCK")
