"""Fact history in recall: the value true then, and the value before or after another.

A recall without ``as_of`` searches current facts only. When the question names a
period ("where did she live in June?", "w czerwcu", "last spring") or says "before X" /
"after X" ("where did she work before Google?", "przed Warszawą", "antes de Madrid",
"до Варшави"), this step also searches the keyed facts with their history, under the
recall's other filters, and reads the best of them (:data:`READ`):

* **a named period**: a past value that was true during the period is a candidate with
  its own keyword and vector scores, as ``as_of`` would give it; for the time focus a
  keyed value counts as "in the period" when it was *true* then (not when it was said),
  so the value true then keeps its relevance and one that was not is divided by
  ``1 + time_focus`` like anything else outside the period;
* **"before X" / "after X"**: when X names a value of a key (a word of it that the
  key's other values do not share, in any of its forms), the value before (after)
  that one in the key's history takes the best relevance among the key's values, and
  the others are divided by ``1 + time_focus``. "Before bed" names no value: nothing
  changes;
* **"before" alone** ("Where did I live before?", "Where did I use to work?",
  "wcześniej", "antes", "раніше"): of each key the question names (by its words or a
  topic), the value before the current one, the same way.

Each past value brought in carries the reason, shown by ``--explain`` and ``--json``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

from kronika.core.fusion import with_preference
from kronika.core.keywords import FUNCTION_WORDS
from kronika.core.model import FACT_TYPES, MemoryItem, RecallFilter, Status
from kronika.core.ranking import joined
from kronika.core.subjects import capitalised, names_every
from kronika.core.text import folded_words, key_words
from kronika.core.topics import topic_words
from kronika.core.versions import (
    OrderPhrase,
    during_phrases,
    matching_version,
    order_phrases,
    previous_phrases,
    same_word,
    true_during,
    validity,
    value_words,
)
from kronika.engine.moves import home_histories, key_versions, latest_move
from kronika.engine.searches import Searches
from kronika.ports import IndexReads, ItemIndex, Vector

READ = 20
"""Keyed facts read from each search of the history (the best by its score)."""
KEYS = 10
"""Keys whose whole history is read for a "before X" / "after X" question."""
_INSTANT = timedelta(microseconds=1)
_FOREVER = datetime.max.replace(tzinfo=UTC)


@dataclass(slots=True)
class HistoryReading:
    """What the history adds to one recall."""

    lexical: list[tuple[str, float]] = field(default_factory=list)
    dense: list[tuple[str, float]] = field(default_factory=list)
    placed: dict[str, float] = field(default_factory=dict)
    """Keyed values read, for the time focus: the period's start when true then, else
    never (``-inf``)."""
    lifted: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """A value true then, or chosen by "before X" / "after X", and the values of its key
    it takes the best relevance of."""
    lowered: set[str] = field(default_factory=set)
    """Values of a key whose neighbour "before X" / "after X" chose."""
    answers: set[str] = field(default_factory=set)
    """Values chosen for a key the question asks about by name or topic, at a moment its
    history pins down: they take the best relevance of every candidate."""
    reasons: dict[str, str] = field(default_factory=dict)

    def merged(
        self, lexical: list[tuple[str, float]] | None, dense: list[tuple[str, float]] | None
    ) -> tuple[list[tuple[str, float]] | None, list[tuple[str, float]] | None]:
        """The searches' results with the past values true then, best first."""

        return joined(lexical, self.lexical), joined(dense, self.dense)

    def ordered(self, relevance: Mapping[str, float], *, focus: float) -> dict[str, float]:
        """``relevance`` with each value true then or chosen by "before X" / "after X"
        given its key's best relevance (the versions of one key are one answer to the
        question, the time decides which), and the other values of a key "before X" /
        "after X" chose in divided by ``1 + focus``."""
        out = dict(relevance)
        best = {
            chosen: max((out[i] for i in chain if i in out), default=0.0)
            for chosen, chain in self.lifted.items()
        }
        lowered = [i for i in self.lowered if i in out and i not in best]
        out |= with_preference({i: out[i] for i in lowered}, (), focus=focus)
        top = max(relevance.values(), default=0.0)  # before any value was lowered
        return out | best | {i: top for i in self.answers if i in out}


def read_history(
    index: ItemIndex,
    flt: RecallFilter,
    *,
    query: str,
    period: tuple[datetime, datetime] | None,
    words: str | None,
    whole_phrase: bool,
    vector: Vector | None,
    limit: int,
    keyed: bool = True,
) -> HistoryReading | None:
    """The history this question asks for, or ``None`` when it asks for none (no period,
    no "before X" / "after X", no past value named, an explicit ``as_of``, history
    already included, or a filter that leaves out facts). ``keyed``: whether the reader
    keeps any keyed fact (else no past value can be named, and none is looked for)."""
    if flt.as_of is not None or flt.include_superseded:
        return None
    phrases = [*order_phrases(query), *during_phrases(query)] or previous_phrases(query)
    types = tuple(t for t in flt.types if t in FACT_TYPES) if flt.types else FACT_TYPES
    if not types:
        return None
    wide = replace(flt, types=types, include_superseded=True)
    if period is None and not phrases:
        return _past_values_named(index, wide, query) if keyed else None
    found = Searches(index).run(words or None, vector, wide, limit, whole_phrase=whole_phrase)
    lexical, dense = found[0] or [], found[1] or []
    wanted = list(dict.fromkeys(i for i, _ in [*lexical[:READ], *dense[:READ]]))
    read = [item for item in index.get_items(wanted) if item.key and not item.multi]
    if not read:
        return None
    reading = HistoryReading()
    if period is not None:
        _true_then(reading, read, period, dict(lexical), dict(dense))
    if phrases:
        said = list(folded_words(query))
        _before_after(reading, index, flt, read, phrases, dict(lexical), dict(dense), said)
    return reading


def _past_values_named(index: ItemIndex, wide: RecallFilter, query: str) -> HistoryReading | None:
    """ "When did I work at Monzo?": a question that names a past value of a keyed fact
    by a word written with a capital letter, as values often are (a place, a company),
    and names no period and no "before X". Those words alone are looked for among the
    keyed facts with their history (one keyword search), and each past value one of
    them names (a word of its value, in some form) is a candidate with its own keyword
    score, and says why. ``None`` when the question has no such word or none names a
    past value."""
    if not _is_a_question(query):
        return None  # "Kyiv" alone looks the word up: current memories, as ever
    named = [w for w in dict.fromkeys(folded_words(" ".join(capitalised(query))))]
    named = [w for w in named if w not in FUNCTION_WORDS]
    if not named:
        return None
    lexical = Searches(index).run(" ".join(named), None, wide, READ, whole_phrase=False)[0]
    if not lexical:
        return None
    scores = dict(lexical)
    reading = HistoryReading()
    for item in index.get_items(list(scores)):
        if item.status is not Status.SUPERSEDED or not item.key or item.multi:
            continue
        if any(same_word(w, v) for w in named for v in value_words(item)):
            reading.lexical.append((item.id, scores[item.id]))
            reading.reasons[item.id] = f"a past value the question names ({validity(item)})"
    return reading if reading.lexical else None


_QUESTION_OPENERS = frozenset(
    folded_words(
        "when where what which who whom whose why how did do does is are was were can "
        "could have has had kiedy gdzie co czy jak jaki jaka jakie który która które kto "
        "dlaczego ile cuándo dónde qué cuál cuáles quién quiénes cómo cuánto cuánta "
        "коли де що чи як який яка яке які хто чому скільки"
    )
)
"""Words that open a question in English, Polish, Spanish and Ukrainian (folded)."""


def _is_a_question(query: str) -> bool:
    """Whether ``query`` asks (a question mark, or a question word first): a recall of
    a bare word or name ("Kyiv") looks it up among current memories only."""
    if "?" in query or "？" in query:
        return True
    first = next(iter(folded_words(query)), None)
    return first in _QUESTION_OPENERS


def _true_then(
    reading: HistoryReading,
    read: list[MemoryItem],
    period: tuple[datetime, datetime],
    lexical: Mapping[str, float],
    dense: Mapping[str, float],
) -> None:
    start, end = period
    versions: dict[tuple[str, str | None], int] = {}
    for item in read:
        versions[item.agent, item.key] = versions.get((item.agent, item.key), 0) + 1
    for item in read:
        if versions[item.agent, item.key] < 2:
            continue  # one value: nothing for the period to choose, placed by when it was said
        then = true_during(item, start, end)
        reading.placed[item.id] = start.timestamp() if then else -math.inf
        if then:
            reading.lifted[item.id] = tuple(
                other.id for other in read if (other.agent, other.key) == (item.agent, item.key)
            )
        if then and item.status is Status.SUPERSEDED:
            reading.reasons[item.id] = (
                f"true then ({validity(item)}), in {start.date()} … {end.date()}"
            )
            _candidate(reading, item, lexical, dense)


def _before_after(
    reading: HistoryReading,
    index: IndexReads,
    flt: RecallFilter,
    read: list[MemoryItem],
    phrases: list[OrderPhrase],
    lexical: Mapping[str, float],
    dense: Mapping[str, float],
    said: Sequence[str],
) -> None:
    keys = list(dict.fromkeys((item.agent, item.key) for item in read if item.key))[:KEYS]
    chains: dict[tuple[str, str], list[MemoryItem]] = {}
    for agent, key in keys:
        assert key is not None
        chains[agent, key] = key_versions(index, flt, key, (agent,))
    for phrase in phrases:
        if phrase.previous:  # "Where did I live before?": before the current value
            asked = [*said, *topic_words(said)]
            for owner, versions in chains.items():
                if len(versions) > 1 and _asks(asked, owner[1]):
                    before = _neighbour_of(
                        reading, versions, len(versions) - 1, phrase, lexical, dense
                    )
                    reading.answers.update([before] if before else [])
            continue
        anchor = next(
            (
                (owner, place)
                for owner, versions in chains.items()
                if (place := matching_version(phrase, versions)) is not None
            ),
            None,
        )
        if anchor is None and phrase.moved:  # "before I moved": the latest move
            homes = home_histories(index, flt)
            anchor = latest_move(homes)
            chains = {**homes, **chains}
        if anchor is None:
            continue
        owner, place = anchor
        # the keys the question asks about: named by its words outside the phrase, in
        # any form, or by a topic they name by a verb ("work": employer, job, firma…)
        rest = [w for w in said if w not in phrase.words]
        asked = [*rest, *topic_words(rest)]
        others = [
            other
            for other in chains
            if other != owner and other[0] == owner[0] and _asks(asked, other[1])
        ]
        if others and not _asks(asked, owner[1]):
            _then_of_another(reading, chains, owner, place, others, phrase, lexical, dense)
        elif not phrase.during:  # "when X" of X's own key asks nothing of its history
            chosen = _neighbour_of(reading, chains[owner], place, phrase, lexical, dense)
            if chosen is not None and _asks(asked, owner[1]):
                reading.answers.add(chosen)


def _asks(asked: Sequence[str], key: str) -> bool:
    """Whether the question's words (``asked``, folded, with its topics' words) name
    every word of ``key``."""
    return names_every(asked, list(folded_words(key_words(key))))


def _neighbour_of(
    reading: HistoryReading,
    versions: list[MemoryItem],
    place: int,
    phrase: OrderPhrase,
    lexical: Mapping[str, float],
    dense: Mapping[str, float],
) -> str | None:
    """ "Where did I work before Google?": the value of the key before (after) the one
    the phrase names takes the key's best relevance; its id, or ``None`` when the named
    value has no neighbour on that side."""
    other = place + 1 if phrase.after else place - 1
    if not 0 <= other < len(versions):
        return None
    chosen, named = versions[other], versions[place]
    side = "after" if phrase.after else "before"
    reading.lifted[chosen.id] = tuple(v.id for v in versions)
    reading.lowered.update(v.id for v in versions if v.id != chosen.id)
    # the value the question names is a candidate: how well it matches is how
    # well the key does ("before Apple" matches Apple, not what came before)
    _candidate(reading, named, lexical, dense)
    if named.status is Status.SUPERSEDED:
        reading.reasons.setdefault(named.id, f"the value the question names ({validity(named)})")
    reading.reasons[chosen.id] = (
        f"the value {side} {named.value or named.content!r} ({validity(chosen)})"
    )
    return chosen.id


def _then_of_another(
    reading: HistoryReading,
    chains: Mapping[tuple[str, str], list[MemoryItem]],
    owner: tuple[str, str],
    place: int,
    asked: Sequence[tuple[str, str]],
    phrase: OrderPhrase,
    lexical: Mapping[str, float],
    dense: Mapping[str, float],
) -> None:
    """ "Where did I work before I moved to Bristol?": the phrase names a value of one key
    (``city: Bristol``) and the question asks about another (``employer``). The moment
    the named value became true is the boundary: of each key asked about, the value true
    just before it ("after": at it) takes the best relevance of its key's values and of
    the named key's, and the key the phrase named answers nothing (its values are
    lowered)."""
    named = chains[owner][place]
    began = named.valid_from or named.created_at
    moment = began if phrase.after else began - _INSTANT
    side = "after" if phrase.after else "before"
    for key in asked:
        versions = chains[key]
        if phrase.during:
            chosen = _longest_during(versions, began, named.valid_to)
        else:
            chosen = next((v for v in reversed(versions) if true_during(v, moment, moment)), None)
        if chosen is None:
            continue
        # how well the question matched the named value is how well it matches the
        # answer: the chosen value takes the best relevance of both keys' values
        reading.lifted[chosen.id] = tuple(v.id for v in (*versions, *chains[owner]))
        reading.lowered.update(v.id for v in versions if v.id != chosen.id)
        reading.answers.add(chosen.id)
        _candidate(reading, chosen, lexical, dense)
        reading.reasons[chosen.id] = (
            f"the value while {named.value or named.content!r} was true"
            f" ({validity(named)}): {validity(chosen)}"
            if phrase.during
            else f"the value {side} {named.value or named.content!r} became true"
            f" on {began.date()} ({validity(chosen)})"
        )
    reading.lowered.update(v.id for v in chains[owner])


def _longest_during(
    versions: Sequence[MemoryItem], start: datetime, end: datetime | None
) -> MemoryItem | None:
    """Of one key's ``versions``, the one true for longest within ``[start, end)``;
    ``None`` when none was true then. Ties go to the earlier. An open ``end`` (the named
    value is still true) lasts on, so a version still true is true for longest."""
    until = end if end is not None else _FOREVER

    def overlap(v: MemoryItem) -> timedelta:
        since = max(v.valid_from or v.created_at, start)
        to = min(v.valid_to or until, until)
        return to - since

    best = max(versions, key=overlap, default=None)
    return best if best is not None and overlap(best) > timedelta(0) else None


def _candidate(
    reading: HistoryReading,
    item: MemoryItem,
    lexical: Mapping[str, float],
    dense: Mapping[str, float],
) -> None:
    """``item`` (a value of a key's history) with its scores among recall's candidates."""
    if item.id in lexical:
        reading.lexical.append((item.id, lexical[item.id]))
    if item.id in dense:
        reading.dense.append((item.id, dense[item.id]))
