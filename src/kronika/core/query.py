"""What a recall asks: :class:`RecallQuery`, every option of
:meth:`kronika.Memory.recall` with its default, its meaning and its bounds, checked
once when the query is made.

Every interface builds one from its own input (the CLI from its options, REST from
the request body, MCP from the tool's arguments, :class:`kronika.client.Client` into
its request body), so an option is added, bounded and explained here, in one place.
What is not a question but the asker's context stays beside the query, as arguments
of :meth:`~kronika.Memory.recall`: who reads (``reader``), the moment taken as now
(``now``) and a query vector computed ahead (``query_vector``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from typing import Any, Literal

from kronika.core import checks
from kronika.core.model import ItemType, Reader, RecallFilter, Scope
from kronika.core.text import normalize_key
from kronika.core.timeexpr import parse_since, parse_until
from kronika.errors import InvalidQuery

Mode = Literal["hybrid", "lexical", "vector"]
"""How candidates are found: both indexes fused (``hybrid``), words only
(``lexical``, no embedder needed) or meaning only (``vector``)."""
MODES: tuple[Mode, ...] = ("hybrid", "lexical", "vector")


@dataclass(frozen=True, slots=True)
class RecallQuery:
    """One recall's question and its options (SPEC R1-R3; docs/python-api.md).

    Made as ``RecallQuery("what does he drink?", k=5, since="30d")``; anything out
    of bounds or of the wrong type raises :class:`~kronika.errors.InvalidQuery` right
    there. Lists may be given as any sequence of text; the query keeps them as
    tuples (``types`` as :class:`ItemType`, ``scopes`` as :class:`Scope`), so it is
    hashable and can be kept, compared and re-run.
    """

    query: str
    """What to look for, in words. A blank query finds nothing."""
    agent: str | None = None
    """Whose memory to search (none: the memory's default agent)."""
    all_agents: bool = False
    """Search every agent's memory instead (readers bound to one agent may not)."""
    k: int | None = None
    """How many hits at most, 1 to 10 000 (none: the ``recall_k`` setting)."""
    mode: Mode = "hybrid"
    """``hybrid``, ``lexical`` or ``vector`` (see :data:`Mode`)."""
    since: str | datetime | None = None
    """Only what happened since then: ``30d``, ``2w``, ``2025-11-01``, ``yesterday``,
    ``last week``… or an aware ``datetime`` (a date means its start)."""
    until: str | datetime | None = None
    """Only what happened until then, in the same forms (a date means its end)."""
    as_of: str | datetime | None = None
    """Only what was true at that time: each fact's value then (its history)."""
    types: Sequence[ItemType | str] = ()
    """Only items of these types (none: every type)."""
    keys: Sequence[str] = ()
    """Only facts under these keys (compared as :func:`~kronika.core.text.normalize_key`)."""
    entities: Sequence[str] = ()
    """Only items that mention one of these entities."""
    speakers: Sequence[str] = ()
    """Only conversation turns of these speakers."""
    scopes: Sequence[Scope | str] = ()
    """Only items of these scopes: ``personal``, ``channel``, ``team``, ``global``."""
    channel: str | None = None
    """Only items of this channel."""
    include_superseded: bool = False
    """Also the values a fact had before (kept as history)."""
    budget_tokens: int | None = None
    """Pack the hits into this many tokens, 1 to 10 000 000 (none: no budget)."""
    record_access: bool = True
    """Count this recall as an access (it refreshes what it finds, and is logged);
    automatic reads pass ``False``."""

    def __post_init__(self) -> None:
        def put(name: str, value: object) -> None:
            object.__setattr__(self, name, value)

        checks.text(self.query, what="the query", error=InvalidQuery)
        checks.optional_text(self.agent, what="the agent", error=InvalidQuery)
        checks.optional_count(self.k, what="k", low=1, high=checks.MAX_K, error=InvalidQuery)
        checks.optional_count(
            self.budget_tokens,
            what="the token budget",
            low=1,
            high=checks.MAX_BUDGET_TOKENS,
            error=InvalidQuery,
        )
        if self.mode not in MODES:
            raise InvalidQuery(
                f"unknown recall mode {self.mode!r}; choose one of {', '.join(MODES)}"
            )
        for name in ("since", "until", "as_of"):
            value = getattr(self, name)
            checks.moment_or_text(value, what=name, error=InvalidQuery)
            checks.aware(value, what=name, error=InvalidQuery)
        for name in ("keys", "entities", "speakers"):
            put(name, checks.texts(getattr(self, name), what=name, error=InvalidQuery))
        checks.optional_text(self.channel, what="the channel", error=InvalidQuery)
        for name in ("all_agents", "include_superseded", "record_access"):
            if not isinstance(getattr(self, name), bool):
                raise InvalidQuery(
                    f"{name} must be True or False, not {type(getattr(self, name)).__name__}"
                )
        try:
            types = checks.texts(self.types, what="types", error=InvalidQuery)
            scopes = checks.texts(self.scopes, what="scopes", error=InvalidQuery)
            put("types", tuple(ItemType(t) for t in types))
            put("scopes", tuple(Scope(s) for s in scopes))
        except ValueError as exc:
            raise InvalidQuery(str(exc)) from exc

    @classmethod
    def from_call(cls, query: str | RecallQuery, arguments: Mapping[str, Any]) -> RecallQuery:
        """The query a call such as ``Memory.recall(query, k=5, since="30d")`` asks.

        ``arguments`` are the call's arguments by name (its ``locals()``), holding every
        option of a query; other names are left alone. ``query`` is the text to look
        for, made into a query with those options, or a whole :class:`RecallQuery`,
        taken as it is when no option beside it differs from its default
        (:class:`~kronika.errors.InvalidQuery` names the options given beside it)."""
        missing = [name for name in OPTIONS[1:] if name not in arguments]
        if missing:
            raise TypeError(f"the call does not take the options {', '.join(missing)}")
        options = {name: arguments[name] for name in OPTIONS[1:]}
        keywords = cls(query if not isinstance(query, RecallQuery) else "", **options)
        return one_query(query, keywords)

    def recall_filter(
        self,
        *,
        agents: tuple[str, ...],
        now: datetime,
        tenant: str | None = None,
        reader: Reader | None = None,
    ) -> RecallFilter:
        """The filter this query asks for among ``agents`` (empty: any agent), its times
        read as of ``now``; :class:`InvalidQuery` for a time it cannot read."""
        try:
            return RecallFilter(
                agents=agents,
                tenant=tenant,
                scopes=tuple(Scope(s) for s in self.scopes),
                types=tuple(ItemType(t) for t in self.types),
                keys=tuple(normalize_key(key) for key in self.keys),
                entities=tuple(self.entities),
                speakers=tuple(self.speakers),
                channel=self.channel,
                since=_when(self.since, now, parse_since),
                until=_when(self.until, now, parse_until),
                as_of=_when(self.as_of, now, parse_until),
                include_superseded=self.include_superseded,
                reader=reader,
            )
        except ValueError as exc:
            raise InvalidQuery(str(exc)) from exc
        except OverflowError as exc:
            raise InvalidQuery(f"that time is outside the years 1 to 9999 ({exc})") from exc

    def as_json(self) -> dict[str, Any]:
        """Every option by name as JSON: lists as lists, times as ISO 8601 text in UTC
        to the microsecond (``2025-11-30T10:30:00.250000Z``), the form the REST API's
        document gives its time fields (the body of ``POST /v1/agents/{agent}/recall``,
        which takes ``agent`` from its path)."""
        found: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, tuple):
                value = [str(v) for v in value]
            elif isinstance(value, datetime):
                value = _utc_text(value)
            found[f.name] = value
        return found


def one_query(given: str | RecallQuery, keywords: RecallQuery) -> RecallQuery:
    """The query of a call that takes a :class:`RecallQuery` or the text with its
    options as keywords (``keywords``, made of the text or of ``""``): ``given`` when it
    is a query and no keyword option was set beside it, else ``keywords``."""
    if not isinstance(given, RecallQuery):
        return keywords
    beside = [
        f.name
        for f in fields(keywords)
        if f.name != "query" and getattr(keywords, f.name) != f.default
    ]
    if beside:
        raise InvalidQuery(f"give {', '.join(beside)} in the RecallQuery, not beside it")
    return given


OPTIONS: tuple[str, ...] = tuple(f.name for f in fields(RecallQuery))
"""The names of a recall's options, the query text first (what every interface takes)."""


def _when(
    value: str | datetime | None,
    now: datetime,
    parse: Callable[[str, datetime], datetime],
) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    return parse(value, now)


def _utc_text(moment: datetime) -> str:
    """``moment`` (aware) as ISO 8601 text in UTC; as given when UTC would run past the
    year 9999."""
    try:
        utc = moment.astimezone(UTC)
    except OverflowError:
        return moment.isoformat()
    return utc.replace(tzinfo=None).isoformat() + "Z"
