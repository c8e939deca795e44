"""Recall's per-candidate reads answered from the in-memory columns of the BM25 snapshot.

:meth:`SqliteIndex.score_features` and :meth:`SqliteIndex.neighbours` read a few
columns of a few hundred candidates per recall. Once the BM25 snapshot is loaded it
holds one row per item in rowid order (:class:`ItemColumns` for the filters,
:class:`ContextColumns` for the rest), so both are answered here with array lookups
instead of SQL; usage statistics, which change with every recall, still come from
SQLite. The results equal the SQL versions kept in :mod:`.index` (the tests compare
both after every kind of write).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from kronika.ports import ScoreFeatures, Usage, usage_columns
from kronika.stores.sqlite.columns import Codes, ContextColumns, ItemColumns, Mask

MESSAGE = "message"


def score_features(
    cols: ItemColumns,
    context: ContextColumns,
    ids: Sequence[str],
    rows: npt.NDArray[np.int64],
    usage: Usage | None,
) -> ScoreFeatures:
    """Features of ``ids`` at live ``rows`` (−1: unknown, left out), in the order of ``ids``
    (``usage`` None: its columns left unread, ``usage_read`` False)."""
    known = rows >= 0
    at = rows[known]
    found = tuple(np.asarray(ids, dtype=object)[known].tolist())
    accessed, count = usage_columns(found, usage or {})
    speakers, sessions = context.speaker.values(), context.session.values()
    return ScoreFeatures(
        ids=found,
        importance=context.importance[at],
        created_at=cols.created_at[at],
        last_accessed_at=accessed,
        access_count=count,
        speaker=tuple(speakers[c] for c in context.speaker.codes[at].tolist()),
        session_id=tuple(sessions[c] for c in context.session.codes[at].tolist()),
        usage_read=usage is not None,
    )


def neighbours(
    cols: ItemColumns,
    context: ContextColumns,
    ids: Sequence[str],
    rows: npt.NDArray[np.int64],
    keep: Mask | None,
    window: int,
) -> dict[str, list[tuple[str, int]]] | None:
    """:meth:`SqliteIndex.neighbours` over the columns; ``None`` when they cannot
    place the rows (:meth:`ContextColumns.at_places`): ask SQLite.

    ``rows`` are the live rows of ``ids`` (−1 for unknown ids); ``keep`` the rows a
    neighbour may come from (the filter, live rows only; ``None``: all). Seeds are
    taken in id order and each one's neighbours in file order, as the SQL does.
    """
    found: dict[str, list[tuple[str, int]]] = {}
    message = cols.type.code(MESSAGE)
    if window < 1 or message < 0:
        return found
    known = rows >= 0
    seeds = rows[known]
    seed_ids = np.asarray(ids, dtype=object)[known]
    is_message = cols.type.codes[seeds] == message
    seeds, seed_ids = seeds[is_message], seed_ids[is_message]
    if seeds.size == 0:
        return found
    by_id = np.asarray(sorted(range(seeds.size), key=seed_ids.__getitem__), dtype=np.int64)
    seeds, seed_ids = seeds[by_id], seed_ids[by_id]
    offsets = np.concatenate([np.arange(-window, 0), np.arange(1, window + 1)]).astype(np.int64)
    near = context.at_places(seeds, offsets)
    if near is None:
        return None
    ok = near >= 0
    at = np.where(ok, near, 0)
    if keep is not None:
        ok &= keep[at]
    ok &= cols.type.codes[at] == message
    ok &= _same(context.source_agent.codes, seeds, at)
    ok &= _same(context.source_path.codes, seeds, at)
    no_session = context.session.code(None)
    ok &= (
        _same(context.session.codes, seeds, at)
        & (context.session.codes[seeds] != no_session)[:, None]
    )
    # coalesce(speaker_norm, '') differs: no speaker and an empty one are the same
    speaker = cols.speaker.codes
    empty, none = cols.speaker.code(""), cols.speaker.code(None)
    seed_speaker, near_speaker = speaker[seeds], speaker[at]
    if empty >= 0 and none >= 0:
        seed_speaker = np.where(seed_speaker == none, empty, seed_speaker)
        near_speaker = np.where(near_speaker == none, empty, near_speaker)
    ok &= near_speaker != seed_speaker[:, None]
    seed_of, which = np.nonzero(ok)  # row-major: seeds in id order, offsets ascending
    item_ids = cols.ids
    for n, other, offset in zip(
        seed_ids[seed_of].tolist(),
        item_ids[at[seed_of, which]].tolist(),
        offsets[which].tolist(),
        strict=True,
    ):
        found.setdefault(n, []).append((other, offset))
    return found


def _same(codes: Codes, seeds: npt.NDArray[np.int64], at: npt.NDArray[np.int64]) -> Mask:
    """Whether the row at each ``at[i, j]`` has the code of ``seeds[i]``."""
    same: Mask = codes[at] == codes[seeds][:, None]
    return same
