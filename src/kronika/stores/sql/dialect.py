"""What differs between the SQL dialects the indexes speak, and nothing else.

A backend gives one :class:`Dialect` (:data:`kronika.stores.sqlite.dialect.SQLITE`,
:data:`kronika.stores.postgres.dialect.POSTGRES`); the shared SQL of
:mod:`kronika.stores.sql` asks it for placeholders, list tests, table and column names,
the UTC day of an epoch and how lists are stored.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence


class Dialect(ABC):
    """One SQL dialect: the pieces of SQL and the value encodings that differ."""

    mark: str
    """The placeholder of one parameter."""
    true: str
    false: str
    items: str
    """The table of items (aliased where it is read)."""
    sources: str
    """The table of the states of indexed sources (``agent``, ``path``, …)."""
    usage: str
    """The table of usage statistics, by ``item_id``."""
    user: str
    """The column of an item's (and a recall's) user."""

    @abstractmethod
    def one_of(self, column: str, values: Sequence[object]) -> tuple[str, list[object]]:
        """``column`` is one of ``values`` (none: false), and its parameters."""

    @abstractmethod
    def has_entity(self, alias: str, forms: Sequence[str]) -> tuple[str, list[object]]:
        """One of the item ``alias``'s normalised entities is among ``forms``."""

    @abstractmethod
    def same(self, column: str) -> str:
        """``column`` equals the parameter, ``NULL`` equal to ``NULL``."""

    @abstractmethod
    def utc_day(self, epoch: str) -> str:
        """The UTC day (``YYYY-MM-DD``) of the epoch seconds ``epoch``."""

    @abstractmethod
    def ordered_ids(self, query: str) -> str:
        """An expression of the ``item_id`` column of ``query``'s rows, in their order
        (:meth:`split_ids` reads it back)."""

    @abstractmethod
    def split_ids(self, value: object) -> tuple[str, ...]:
        """The ids of an :meth:`ordered_ids` value."""

    @abstractmethod
    def encode_list(self, values: Sequence[str]) -> object:
        """A list of strings as the dialect stores it."""

    @abstractmethod
    def decode_list(self, value: object) -> tuple[str, ...]:
        """A list read back (:meth:`encode_list`)."""

    @abstractmethod
    def encode_bool(self, value: bool) -> object:
        """A boolean as the dialect stores it."""
