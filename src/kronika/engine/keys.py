"""The keys of the user's facts, read for recall (:mod:`kronika.core.key_forms`).

"W jakiej firmie pracuje Zofia?" names the key ``firma`` in the locative; keyword search
looks for ``firma`` beside the question's words when the reader's memory holds a
current fact so keyed. The keys are those of the newest :data:`KEYS_READ` current keyed
facts the reader may see (the index reads no more, whatever the memory's size), kept
between recalls while the index's items stay as they were
(:class:`~kronika.engine.held.HeldPerReader`).
"""

from __future__ import annotations

from functools import lru_cache

from kronika.core.key_forms import KeyWords
from kronika.core.model import FACT_TYPES, RecallFilter
from kronika.engine.held import HeldPerReader, RecallMark, reader_scope
from kronika.ports import IndexReads

KEYS_READ = 1000
"""The newest current keyed facts whose keys are read."""


def keys_of_the_user(index: IndexReads, flt: RecallFilter) -> KeyWords:
    """The keys of the current keyed facts the reader of ``flt`` may see (the recall's
    agents, tenant, channel and reader; not its types, keys or times), filed for
    questions to find (:class:`~kronika.core.key_forms.KeyWords`). The index reads the
    keys alone, under the filter every read of the recall passes."""
    return _filed(tuple(index.list_keys(reader_scope(flt, types=FACT_TYPES), limit=KEYS_READ)))


@lru_cache(maxsize=16)
def _filed(keys: tuple[str, ...]) -> KeyWords:
    """``keys`` filed, once for the same keys: an index read at every recall (one with
    no mark of its items) gives the same keys until a fact with a new key is written."""
    return KeyWords(keys)


class UserKeys(HeldPerReader[KeyWords]):
    """:func:`keys_of_the_user` kept between recalls (:class:`HeldPerReader`)."""

    def __init__(self, index: IndexReads, mark: RecallMark | None = None) -> None:
        super().__init__(index, keys_of_the_user, mark)


__all__ = ["KEYS_READ", "UserKeys", "keys_of_the_user"]
