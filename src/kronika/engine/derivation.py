"""Which way of reading the Markdown built an index, and a rebuild when it was an older one.

The index is derived from the Markdown: what each line becomes — its type, its layer,
its audience — is decided when the file is read. A file that has not changed since it
was indexed is not read again (:mod:`kronika.engine.indexer`), so an index built by an
older kronika would keep what the older reading gave its items: a profile fact indexed
as ``fact``, a world note as ``note``, an L1 summary as ``summary``.

The index therefore keeps the version of the reading that built it
(:data:`DERIVATION_KEY` in its meta). When a memory opens an index built by another
version, it rebuilds it from the Markdown (:meth:`kronika.Memory.reindex`: always
safe, and unchanged texts keep their embeddings, so nothing is embedded again). An
empty index is simply stamped.

Versions (raise :data:`DERIVATION` whenever the reading of a file changes what the
index would hold for it):

1. before the stamp: every index without one;
2. Brain facts about the user are ``profile``, world notes ``semantic``, L1/L2
   summaries ``episodic``; lessons carry their audience and their agent's tenant.
3. Keyword search reads a keyed fact's value as its content and its key in words
   (``ulubiony_kolor`` → ``ulubiony kolor``, also what is embedded), and no turn's
   speaker as a word of it.
4. A keyed profile fact (User, Preferences) is embedded as a statement of the user,
   ``my {key words} is {value}`` (:func:`kronika.core.text.embedding_text`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from kronika.engine.indexer import Progress
    from kronika.ports import IndexUpkeep, ItemIndex

log = logging.getLogger("kronika")

DERIVATION = "4"
DERIVATION_KEY = "derivation"


def built_by(index: IndexUpkeep) -> str | None:
    """The version of the reading that built ``index`` (``None``: before the stamp)."""
    return index.meta_value(DERIVATION_KEY)


def mark_current(index: IndexUpkeep) -> None:
    """Stamp ``index`` as built by this version (after a rebuild, or while empty)."""
    if built_by(index) != DERIVATION:
        index.set_meta_value(DERIVATION_KEY, DERIVATION)


def rederive_if_stale(
    index: ItemIndex,
    reindex: Callable[[Progress | None], object],
    progress: Progress | None = None,
) -> bool:
    """Rebuild ``index`` with ``reindex`` (a memory's, which stamps it) when an older
    (or newer) reading built it; whether it did. ``progress(done, total)`` follows the
    files of the rebuild."""
    found = built_by(index)
    if found == DERIVATION:
        return False
    if not index.agents():  # nothing indexed yet: whatever comes is read this way
        mark_current(index)
        return False
    log.warning(
        "the index was built by an older reading of the Markdown (version %s, now %s):"
        " rebuilding it so every item has its current type",
        found or "1",
        DERIVATION,
    )
    reindex(progress)  # stamps it
    return True
