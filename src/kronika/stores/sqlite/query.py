"""Turning user input into safe SQL: text folding, FTS5 MATCH expressions, filter clauses.

Nothing here touches a connection; every function is pure so it can be tested alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

from kronika.core.entities import normalize_entity
from kronika.core.model import Reader, RecallFilter, Scope, Status
from kronika.core.text import folded_words

MAX_QUERY_TERMS = 64
"""Longer queries keep their first terms: a pasted document must not become a huge MATCH."""


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


def query_terms(query: str) -> list[str]:
    """The distinct folded words of ``query`` in order of first appearance (at most 64)."""
    seen: dict[str, None] = {}
    for word in folded_words(query):
        seen.setdefault(word, None)
        if len(seen) >= MAX_QUERY_TERMS:
            break
    return list(seen)


def match_expression(query: str, *, whole_phrase: bool = True) -> str | None:
    """An FTS5 MATCH expression for arbitrary user text, or ``None`` when it has no words.

    Every word becomes a quoted string (so ``AND``, ``NEAR``, ``*``, ``-``, ``:``
    and parentheses are plain text) and the words are OR-ed; BM25 then ranks
    rarer and repeated terms higher. With two or more words (and ``whole_phrase``)
    the whole phrase is OR-ed in as well, which adds its own BM25 term to documents
    containing the exact phrase.
    """
    terms = query_terms(query)
    if not terms:
        return None
    quoted = [quote(t) for t in terms]
    if len(terms) > 1 and whole_phrase:
        quoted.insert(0, quote(" ".join(terms)))
    return " OR ".join(quoted)


def quote(text: str) -> str:
    """``text`` as one FTS5 string (a phrase): double quotes doubled."""
    return '"' + text.replace('"', '""') + '"'


def to_epoch(value: datetime) -> float:
    """Seconds since the Unix epoch; a naive datetime is taken to be UTC."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.timestamp()


def from_epoch(value: float | None) -> datetime | None:
    return None if value is None else datetime.fromtimestamp(value, tz=UTC)


def filter_clause(flt: RecallFilter, alias: str = "i") -> tuple[str, list[object]]:
    """A SQL boolean expression over ``items AS <alias>`` implementing ``flt``, and its parameters.

    * ``as_of``: ``coalesce(valid_from, created_at) <= as_of < coalesce(valid_to, +inf)``;
      superseded items are then included whatever ``include_superseded`` says.
    * ``since`` / ``until`` bound ``created_at`` inclusively.
    * keys and speakers compare :func:`normalise_name` forms, entities
      :func:`entity_forms` (with or without ``@``).
    * ``reader``: :func:`visibility_clause`.
    """
    a = alias
    parts: list[str] = []
    params: list[object] = []

    def one_of(column: str, values: Iterable[object]) -> None:
        values = list(values)
        parts.append(f"{column} IN ({', '.join('?' * len(values))})")
        params.extend(values)

    if flt.agents:
        one_of(f"{a}.agent", flt.agents)
    if flt.tenant is not None:
        parts.append(f"{a}.tenant = ?")
        params.append(flt.tenant)
    if flt.scopes:
        one_of(f"{a}.scope", (str(s) for s in flt.scopes))
    if flt.types:
        one_of(f"{a}.type", (str(t) for t in flt.types))
    if flt.keys:
        one_of(f"{a}.key_norm", {normalise_name(k) for k in flt.keys})
    if flt.speakers:
        one_of(f"{a}.speaker_norm", {normalise_name(s) for s in flt.speakers})
    if flt.entities:
        names = sorted({form for e in flt.entities for form in entity_forms(e)})
        parts.append(
            f"{a}.rowid IN (SELECT item_rowid FROM item_entities"
            f" WHERE entity_norm IN ({', '.join('?' * len(names))}))"
        )
        params.extend(names)
    if flt.channel is not None:
        parts.append(f"{a}.channel = ?")
        params.append(flt.channel)
    if flt.since is not None:
        parts.append(f"{a}.created_at >= ?")
        params.append(to_epoch(flt.since))
    if flt.until is not None:
        parts.append(f"{a}.created_at <= ?")
        params.append(to_epoch(flt.until))
    if flt.as_of is not None:
        moment = to_epoch(flt.as_of)
        parts.append(
            f"coalesce({a}.valid_from, {a}.created_at) <= ?"
            f" AND ({a}.valid_to IS NULL OR {a}.valid_to > ?)"
        )
        params.extend((moment, moment))
    excluded = excluded_statuses(flt)
    if excluded:
        parts.append(f"{a}.status NOT IN ({', '.join('?' * len(excluded))})")
        params.extend(excluded)
    if flt.reader is not None:
        clause, values = visibility_clause(flt.reader, alias)
        parts.append(clause)
        params.extend(values)
    return (" AND ".join(parts) or "1"), params


def visibility_clause(reader: Reader, alias: str = "i") -> tuple[str, list[object]]:
    """:func:`kronika.core.visibility.visible` as SQL over ``items AS <alias>``::

        tenant = T AND (scope = 'global'
                        OR (scope = 'team' AND team IN (Ts))
                        OR (scope = 'channel' AND channel = C)
                        OR (scope NOT IN ('global', 'team', 'channel') AND user IS U))

    The team branch is left out for a reader in no team, the channel branch for a
    reader outside any channel; ``IS`` makes an item without a user the unnamed
    reader's own. Other SQL backends mirror this clause.
    """
    a = alias
    branches = [f"{a}.scope = ?"]
    params: list[object] = [reader.tenant, Scope.GLOBAL.value]
    if reader.teams:
        teams = sorted(set(reader.teams))
        branches.append(f"({a}.scope = ? AND {a}.team IN ({', '.join('?' * len(teams))}))")
        params += [Scope.TEAM.value, *teams]
    if reader.channel is not None:
        branches.append(f"({a}.scope = ? AND {a}.channel = ?)")
        params += [Scope.CHANNEL.value, reader.channel]
    branches.append(f"({a}.scope NOT IN (?, ?, ?) AND {a}.user IS ?)")
    params += [Scope.GLOBAL.value, Scope.TEAM.value, Scope.CHANNEL.value, reader.user]
    return f"({a}.tenant = ? AND ({' OR '.join(branches)}))", params


def excluded_statuses(flt: RecallFilter) -> Sequence[str]:
    """Statuses ``flt`` hides: superseded (unless asked for or ``as_of`` is set), archived."""
    excluded: list[str] = []
    if flt.as_of is None and not flt.include_superseded:
        excluded.append(Status.SUPERSEDED.value)
    if not flt.include_archived:
        excluded.append(Status.ARCHIVED.value)
    return excluded
