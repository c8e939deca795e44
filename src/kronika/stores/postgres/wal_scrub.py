"""Writing over the WAL that logged a forgotten value, with the server's settings as
they are (PostgreSQL 18).

The WAL logs every change, the forgotten text included (the inserts, and full-page
images of the pages that held it). A finished segment is not deleted at the checkpoint
that no longer needs it: with ``wal_recycle = on`` (the default) its file is renamed
to a future segment's name, bytes and all, and kept (up to ``min_wal_size`` of them on
a quiet server, up to ``max_wal_size`` on a busy one) until WAL is written into it
again. kronika does not change the server's settings, so it writes over those files
instead:

1. ``pg_switch_wal()`` closes the segment that logged the forget (the server fills
   the rest of it with zeroed pages), and ``CHECKPOINT`` then releases it and every
   older one: each is recycled into a future name or deleted. This round repeats
   until no segment file up to the forget's is left in ``pg_wal/``.
2. Every file then ahead of the insert point (the current one, whose tail still holds
   old bytes, and the recycled ones) is written through, one ``pg_switch_wal()`` +
   ``CHECKPOINT`` round each: a switched-from segment is written from its first page
   to its last with new WAL and zeroed padding. Files recycled meanwhile hold only WAL
   written after the forget.

The rounds are counted from ``pg_ls_waldir()``, which the role may call as a member
of ``pg_monitor``. Without it the WAL cannot be seen: the scrub runs as many rounds as
``min_wal_size`` keeps files (what a quiet server recycles) and says it is not
verified. What the server must keep — for a replication slot, ``wal_keep_size`` or an
archiver that has not copied a segment yet — is not released: the scrub says which
segment files still hold the bytes, and why they may be kept. Copies outside this
server's ``pg_wal/`` (an archive, a replica's own WAL, a base backup) are out of reach.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kronika.errors import IndexError_

log = logging.getLogger(__name__)

Run = Callable[[str], Sequence[tuple[Any, ...]]]
"""Runs one SQL statement on an autocommit connection; returns its rows ([] for none)."""

_SEGMENT_FILE = re.compile(r"^[0-9A-F]{24}$")
_RELEASE_TRIES = 3  # rounds that may pass before a kept segment is reported as kept
_SLACK = 3  # rounds beyond the files counted, in case the server pre-allocated more


@dataclass
class WalScrub:
    """What a scrub did: ``rounds`` of switch + checkpoint; ``clean`` when the listing
    of ``pg_wal/`` showed every file that held the value written over or removed;
    ``notes`` says what was not done, and why."""

    rounds: int = 0
    clean: bool = False
    notes: list[str] = field(default_factory=list)


def segment_number(name: str, segment_size: int) -> int:
    """The position of WAL segment file ``name`` (timeline, log, segment: 3 × 8 hex
    digits) in the WAL, whatever its timeline."""
    per_log = 0x1_0000_0000 // segment_size
    return int(name[8:16], 16) * per_log + int(name[16:24], 16)


def scrub_wal(run: Run) -> WalScrub:
    """Write over every ``pg_wal/`` file that may hold what was written before this
    call; see the module's text. Needs ``pg_checkpoint`` and ``EXECUTE`` on
    ``pg_switch_wal`` (else nothing is done and a note says so), and ``pg_monitor``
    to verify."""
    done = WalScrub()
    size = int(_setting(run, "wal_segment_size"))
    dirty_end = _insert_segment(run, size)  # every segment up to this may hold it

    def round_() -> bool:
        for step in ("SELECT pg_switch_wal()", "CHECKPOINT"):
            try:
                run(step)
            except IndexError_ as exc:
                done.notes.append(f"WAL not written over ({step}): {exc}")
                return False
        done.rounds += 1
        return True

    # 1. leave the segments that logged it, and have the server let go of them
    files: list[int] | None = None
    for attempt in range(_RELEASE_TRIES):
        if not round_():
            return done
        files = _listing(run, size)
        if files is None or not [f for f in files if f <= dirty_end]:
            break
        time.sleep(0.5 * (attempt + 1))  # an archiver copying the segment: let it finish
    if files is not None and (kept := [f for f in files if f <= dirty_end]):
        done.notes.append(
            f"{len(kept)} WAL segment file(s) the server still keeps hold the forgotten"
            f" bytes ({_why_kept(run)}); they go when the server releases them"
        )
        return done

    # 2. write through every file ahead of the insert point
    current = _insert_segment(run, size)
    if files is None:
        last = current + max(1, int(_setting(run, "min_wal_size")) * 1024 * 1024 // size)
        done.notes.append(
            "WAL written over without seeing it: the role may not list pg_wal"
            " (pg_ls_waldir, granted to pg_monitor); rounds enough for the files a"
            " server keeps at min_wal_size, not for more (a busy server keeps up to"
            " max_wal_size)"
        )
    else:
        last = max([current, *files])
    while current <= last and done.rounds < last - dirty_end + _RELEASE_TRIES + _SLACK:
        if not round_():
            return done
        current = _insert_segment(run, size)
    if files is not None:
        done.clean = current > last
        if not done.clean:
            done.notes.append(f"WAL segment files up to {last} not all written over")
    return done


def _setting(run: Run, name: str) -> str:
    rows = run(f"SELECT setting FROM pg_settings WHERE name = '{name}'")
    return str(rows[0][0])


def _insert_segment(run: Run, size: int) -> int:
    rows = run("SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')")
    return int(rows[0][0]) // size


def _listing(run: Run, size: int) -> list[int] | None:
    """The segment files in ``pg_wal/`` (``None``: the role may not list them)."""
    try:
        rows = run("SELECT name FROM pg_ls_waldir()")
    except IndexError_:
        return None
    return sorted(segment_number(n, size) for (n,) in rows if _SEGMENT_FILE.match(str(n)))


def _why_kept(run: Run) -> str:
    """The settings and slots that may keep old segments."""
    reasons = []
    slots = [str(r[0]) for r in run("SELECT slot_name FROM pg_replication_slots")]
    if slots:
        reasons.append(f"replication slot(s) {', '.join(sorted(slots))}")
    if _setting(run, "wal_keep_size") != "0":
        reasons.append("wal_keep_size")
    if _setting(run, "archive_mode") != "off":
        reasons.append("archive_mode: a segment not yet archived is kept")
    return "; ".join(reasons) or "the server did not say why"
