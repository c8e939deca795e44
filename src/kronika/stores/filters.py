"""Which items a :class:`RecallFilter` selects, as predicate objects every index renders.

:func:`recall_predicate` says a filter once, :func:`visibility` says
:func:`kronika.core.visibility.visible` once; the SQL indexes render the objects with
:func:`kronika.stores.sql.where.render` (over their dialect), the Qdrant index with
:func:`kronika.stores.qdrant.payload.recall_filter`. So every index answers a filter
over the same rules, and a new index implements five kinds of predicate, not the rules.

Fields are named for what they hold, not for a column (:data:`FIELDS`): ``key``,
``speaker`` and ``entities`` hold :func:`normalise_name` forms, times are epoch seconds,
``valid_start`` is ``valid_from`` or else ``created_at``, ``entities`` holds several
values and matches when one of them does. Nothing here touches storage.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache

from kronika.core.entities import normalize_entity
from kronika.core.model import Reader, RecallFilter, Scope, Status

FIELDS = frozenset(
    ("agent", "tenant", "scope", "type", "key", "speaker", "entities", "channel", "user")
    + ("team", "created_at", "valid_start", "valid_to", "status")
)
"""The fields a predicate names."""


@dataclass(frozen=True, slots=True)
class Equals:
    """``field = value``; ``value`` ``None``: the field has no value."""

    field: str
    value: str | None


@dataclass(frozen=True, slots=True)
class OneOf:
    """``field`` is one of ``values`` (none: no item); on ``entities``, one of the item's is."""

    field: str
    values: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Range:
    """``gte <= field <= lte`` and ``gt < field``, each bound only when given."""

    field: str
    gte: float | None = None
    lte: float | None = None
    gt: float | None = None


@dataclass(frozen=True, slots=True)
class Not:
    part: Predicate


@dataclass(frozen=True, slots=True)
class All:
    """Every part holds (no part: every item)."""

    parts: tuple[Predicate, ...]


@dataclass(frozen=True, slots=True)
class AnyOf:
    """One of the parts holds (no part: no item)."""

    parts: tuple[Predicate, ...]


Predicate = Equals | OneOf | Range | Not | All | AnyOf


def normalise_name(name: str) -> str:
    """Key used for case-insensitive equality of keys, entities and speakers: ``casefold``."""
    return name.strip().casefold()


def entity_forms(name: str) -> tuple[str, ...]:
    """The stored forms an entity filter matches: ``Peter``, ``@Peter`` and ``peter``
    find the same entity, whether it was stored as a mention or a plain name.

    ``@`` marks a mention in text only (the extractor stores the name without it),
    but names given with ``entities=`` are stored as written, so both are matched.
    """
    bare = normalize_entity(name).lstrip("@").strip()
    return (bare, f"@{bare}") if bare else ()


def to_epoch(value: datetime) -> float:
    """Seconds since the Unix epoch; a naive datetime is taken to be UTC."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.timestamp()


def from_epoch(value: float | None) -> datetime | None:
    return None if value is None else datetime.fromtimestamp(value, tz=UTC)


def excluded_statuses(flt: RecallFilter) -> Sequence[str]:
    """Statuses ``flt`` hides: superseded (unless asked for or ``as_of`` is set), archived."""
    excluded: list[str] = []
    if flt.as_of is None and not flt.include_superseded:
        excluded.append(Status.SUPERSEDED.value)
    if not flt.include_archived:
        excluded.append(Status.ARCHIVED.value)
    return excluded


HANDLED_FIELDS = frozenset(
    ("agents", "tenant", "scopes", "types", "keys", "entities", "speakers", "channel")
    + ("since", "until", "as_of", "include_superseded", "include_archived", "reader")
)
"""The :class:`RecallFilter` fields :func:`recall_predicate` applies (a test checks that
no field is left out)."""


def _one_of(field: str, values: set[str]) -> OneOf:
    return OneOf(field, tuple(sorted(values)))


@lru_cache(maxsize=64)
def _names_one_of(field: str, names: tuple[str, ...]) -> OneOf:
    """:func:`_one_of` the :func:`normalise_name` forms of ``names``, made once for the
    names a filter gives again and again (recall reads the user's names by 700 keys)."""
    return _one_of(field, {normalise_name(n) for n in names})


def recall_predicate(flt: RecallFilter) -> All:
    """Every restriction of ``flt``:

    * ``as_of``: ``valid_start <= as_of < coalesce(valid_to, +inf)``; superseded items
      are then included whatever ``include_superseded`` says.
    * ``since`` / ``until`` bound ``created_at`` inclusively.
    * keys and speakers compare :func:`normalise_name` forms, entities
      :func:`entity_forms` (with or without ``@``).
    * ``reader``: :func:`visibility`.
    """
    parts: list[Predicate] = []
    if flt.agents:
        parts.append(_one_of("agent", set(flt.agents)))
    if flt.tenant is not None:
        parts.append(Equals("tenant", flt.tenant))
    if flt.scopes:
        parts.append(_one_of("scope", {s.value for s in flt.scopes}))
    if flt.types:
        parts.append(_one_of("type", {t.value for t in flt.types}))
    if flt.keys:
        parts.append(_names_one_of("key", tuple(flt.keys)))
    if flt.speakers:
        parts.append(_names_one_of("speaker", tuple(flt.speakers)))
    if flt.entities:
        parts.append(_one_of("entities", {f for e in flt.entities for f in entity_forms(e)}))
    if flt.channel is not None:
        parts.append(Equals("channel", flt.channel))
    if flt.since is not None or flt.until is not None:
        since = None if flt.since is None else to_epoch(flt.since)
        until = None if flt.until is None else to_epoch(flt.until)
        parts.append(Range("created_at", gte=since, lte=until))
    if flt.as_of is not None:
        moment = to_epoch(flt.as_of)
        parts.append(Range("valid_start", lte=moment))
        parts.append(AnyOf((Equals("valid_to", None), Range("valid_to", gt=moment))))
    excluded = excluded_statuses(flt)
    if excluded:
        parts.append(Not(_one_of("status", set(excluded))))
    if flt.reader is not None:
        parts.append(visibility(flt.reader))
    return All(tuple(parts))


def visibility(reader: Reader) -> All:
    """:func:`kronika.core.visibility.visible` as a predicate::

        tenant = T AND (scope = global
                        OR (scope = team AND team IN Ts)
                        OR (scope = channel AND channel = C)
                        OR (scope = personal AND user = U))

    The team branch is left out for a reader in no team, the channel branch for a
    reader outside any channel; ``user = None`` makes an item without a user the
    unnamed reader's own.
    """
    branches: list[Predicate] = [Equals("scope", Scope.GLOBAL.value)]
    if reader.teams:
        team = _one_of("team", set(reader.teams))
        branches.append(All((Equals("scope", Scope.TEAM.value), team)))
    if reader.channel is not None:
        channel = Equals("channel", reader.channel)
        branches.append(All((Equals("scope", Scope.CHANNEL.value), channel)))
    own = Equals("user", reader.user)
    branches.append(All((Equals("scope", Scope.PERSONAL.value), own)))
    return All((Equals("tenant", reader.tenant), AnyOf(tuple(branches))))
