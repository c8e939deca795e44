"""Turning lexical and vector results into one relevance in [0, 1].

Relevance must say how *well* an item matches, not only where it ranks: the R3
score adds importance and recency to it, and a merely recent fact must not beat
a clearly matching memory. So each retriever's scores are normalised per query
and combined convexly (Bruch et al., 2023, "An Analysis of Fusion Functions for
Hybrid Retrieval"). Two normalisations are offered (setting ``fusion``):

``zscore`` (default): standard scores over each retriever's best ``depth``::

    z_i       = (s_i − mean) / sd                 (BM25: non-matches score 0)
    b(z)      = c · tanh(z / c)                   c = fusion_z_ceiling (0: b(z) = z)
    Z_i       = w · b(z_lexical_i) + (1 − w) · b(z_vector_i)    w = lexical_weight (0.5)
    relevance = (Z_i − min Z) / (max Z − min Z)

``minmax``::

    lexical_i = bm25_i / max(bm25)                       (0 when not matched)
    vector_i  = (cos_i − min(cos)) / (max(cos) − min(cos))
    relevance = w · lexical_i + (1 − w) · vector_i

Both make the vector part embedder-agnostic: what a model calls "unrelated" differs
(~0.1 for one model, ~0.75 for another). Standard scores also weigh how far a hit
stands above the rest of its list, so a near-tie in one retriever is decided by the
other. A standard score can be bounded near a ceiling (:func:`bounded`; off by
default, :data:`Z_CEILING` when asked for): a keyword match among a hundred non-matches
stands up to ~10 deviations above them, so between two matches the rarer word alone
decides ("What is the name of my dog?": the fact keyed ``name`` over the fact about the
dog), whatever the embedding says; bounded, a lead beyond three deviations is clear
either way and no longer grows. It helps the agent-memory benchmark and costs LoCoMo
and LongMemEval about a point (docs/benchmarks-recall-quality.md), hence off.
Lexical evidence (shared rare words) is precise where the embedding is fuzzy, hence a
weight above one half.
Measured on LoCoMo and LongMemEval (dev) against min-max at 0.5/0.6/0.7 and RRF (k =
10, 30, 60); see ``docs/benchmarks.md``. With one retriever only, its min-max
normalised score is the relevance.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from kronika.core.model import ASSISTANT_SPEAKER
from kronika.core.ranking import best_first
from kronika.core.roles import names_the_assistant
from kronika.core.text import folded_words, said_alike


def normalise_lexical(results: Sequence[tuple[str, float]]) -> dict[str, float]:
    """``score / max score`` for positive scores; ``{}`` for no results."""
    if not results:
        return {}
    best = max(score for _, score in results)
    if best <= 0:
        return {item_id: 1.0 for item_id, _ in results}
    return {item_id: max(0.0, score) / best for item_id, score in results}


def normalise_vector(
    results: Sequence[tuple[str, float]], *, depth: int | None = None
) -> dict[str, float]:
    """Cosines rescaled so the weakest candidate maps to 0 and the best to 1.

    With ``depth`` the floor is the ``depth``-th best cosine and anything below it
    maps to 0, so asking for more results than ``depth`` (a long list to page
    through) does not change how the best ones are scored.
    """
    if not results:
        return {}
    scores = sorted((score for _, score in results), reverse=True)
    floor = scores[min(len(scores), depth or len(scores)) - 1]
    spread = max(score for _, score in results) - floor
    if spread <= 1e-12:
        return {item_id: 1.0 for item_id, _ in results}
    return {item_id: min(1.0, max(0.0, (score - floor) / spread)) for item_id, score in results}


FUSIONS = ("minmax", "zscore")
"""How hybrid recall puts the two retrievers' scores on one scale (:func:`fuse`)."""


def standard_scores(
    results: Sequence[tuple[str, float]], *, depth: int | None = None, pad: float | None = None
) -> tuple[dict[str, float], float]:
    """Each score as standard deviations above the mean of the best ``depth`` scores.

    Returns the scores and the value of anything not among the best ``depth`` (the
    ``depth``-th score's). With ``pad`` a list shorter than ``depth`` is filled up with
    that score first: BM25 gives 0 to every item that does not match, so a query
    matching one item makes it stand far above the rest, not sit at the mean.

    A retriever whose best hits stand far above the rest gets large values for them;
    one that ranks everything alike gets values near 0 for all.
    """
    ranked = sorted((score for _, score in results), reverse=True)
    size = depth or len(ranked)
    top = ranked[:size]
    if pad is not None and len(top) < size:
        top += [pad] * (size - len(top))
    if not top:
        return {}, 0.0
    mean = sum(top) / len(top)
    spread = (sum((s - mean) ** 2 for s in top) / len(top)) ** 0.5
    scale = spread if spread > 1e-12 else 1.0
    floor = (top[-1] - mean) / scale
    return {item_id: max(floor, (score - mean) / scale) for item_id, score in results}, floor


Z_CEILING = 3.0
"""The ceiling to bound standard scores at when bounding is wanted (setting
``fusion_z_ceiling``; the three-sigma convention for "well above the rest")."""


def bounded(z: float, ceiling: float = Z_CEILING) -> float:
    """``ceiling · tanh(z / ceiling)``: about ``z`` near the mean, never past ``±ceiling``,
    in the same order as ``z``.

    >>> round(bounded(1.0), 3), round(bounded(10.0), 3)
    (0.965, 2.992)
    """
    return ceiling * math.tanh(z / ceiling)


def _zscore_fusion(
    lexical: Sequence[tuple[str, float]],
    vector: Sequence[tuple[str, float]],
    w: float,
    depth: int | None,
    ceiling: float,
) -> dict[str, float]:
    """``w·z_lexical + (1 − w)·z_vector``, rescaled to [0, 1] (see :func:`fuse`)."""
    matched = [(item_id, score) for item_id, score in lexical if score > 0]
    size = depth or max(len(matched), len(vector))
    # Only the best `size` of each list count; anything else is as if not returned
    # (a longer list, k above depth, then changes nothing for the best ones).
    lex, lex_floor = standard_scores(matched, depth=size, pad=0.0)
    vec, vec_floor = standard_scores(vector, depth=size)
    if ceiling > 0:
        lex, lex_floor = _bounded_scores(lex, lex_floor, ceiling)
        vec, vec_floor = _bounded_scores(vec, vec_floor, ceiling)
    combined = {
        item_id: w * lex.get(item_id, lex_floor) + (1.0 - w) * vec.get(item_id, vec_floor)
        for item_id in dict.fromkeys([*(i for i, _ in lexical), *(i for i, _ in vector)])
    }
    inner = [*_best(matched, size), *_best(vector, size)]  # which, not in what order
    floor = min((combined[i] for i, _ in inner), default=0.0)
    top = max(combined.values(), default=0.0)
    if top - floor <= 1e-12:
        return {item_id: 1.0 for item_id in combined}
    return {
        item_id: min(1.0, max(0.0, (value - floor) / (top - floor)))
        for item_id, value in combined.items()
    }


def _bounded_scores(
    scores: dict[str, float], floor: float, ceiling: float
) -> tuple[dict[str, float], float]:
    """:func:`standard_scores`' result with each value :func:`bounded` at ``ceiling``."""
    return {i: bounded(z, ceiling) for i, z in scores.items()}, bounded(floor, ceiling)


def _best(results: Sequence[tuple[str, float]], depth: int) -> Sequence[tuple[str, float]]:
    """The best ``depth`` of ``results``: all of them as given when there are no more,
    else the best first."""
    if len(results) <= depth:
        return results
    return best_first(results)[:depth]


def fuse(
    lexical: Sequence[tuple[str, float]] | None,
    vector: Sequence[tuple[str, float]] | None,
    *,
    lexical_weight: float = 0.5,
    depth: int | None = None,
    method: str = "zscore",
    z_ceiling: float = 0.0,
) -> dict[str, float]:
    """Relevance in [0, 1] for every candidate of either retriever (``None`` = not run).

    ``depth`` is the number of candidates the normalisation looks at (see
    :func:`normalise_vector`); by default every candidate given.

    ``method`` ``"minmax"`` is the convex combination of the module docstring.
    ``"zscore"`` combines standard scores instead (each retriever's scores in
    standard deviations above the mean of its best ``depth``; an item one retriever
    did not return counts as that retriever's weakest), each :func:`bounded` at
    ``z_ceiling`` when it is above 0, then rescales the sum to [0, 1]. With one
    retriever both methods give its own normalised scores.
    """
    if method not in FUSIONS:
        raise ValueError(f"unknown fusion {method!r}; choose one of {', '.join(FUSIONS)}")
    if lexical is None and vector is None:
        return {}
    w = min(1.0, max(0.0, lexical_weight))
    if method == "zscore" and lexical and vector:
        return _zscore_fusion(lexical, vector, w, depth, z_ceiling)
    lex = normalise_lexical(lexical or [])
    vec = normalise_vector(vector or [], depth=depth)
    if lexical is None:
        return vec
    if vector is None:
        return lex
    return {
        item_id: w * lex.get(item_id, 0.0) + (1.0 - w) * vec.get(item_id, 0.0)
        for item_id in dict.fromkeys([*lex, *vec])
    }


Neighbours = Mapping[str, Sequence[tuple[str, int]]]
"""``{item id: [(neighbour id, offset), …]}``: offset −1 is the turn just before, +2 two after."""


def with_neighbours(
    relevance: Mapping[str, float],
    neighbours: Neighbours,
    *,
    weight: float,
) -> dict[str, float]:
    """Relevance of conversation turns read with the turns around them (noisy-or).

    A reply ("It was Matt Patterson!") often names nothing of what it answers; the
    turn before it does ("Who sang at your daughter's birthday?"). So each turn's
    relevance is combined with that of the other party's turns around it (the index
    decides who counts as a neighbour) as independent pieces of evidence::

        relevance'_i = 1 − (1 − r_i) · Π_o (1 − w_o · r_(i+o))     w_o = weight / |o|

    The result stays in [0, 1], equals ``r_i`` when no neighbour matches, and an item
    with no neighbours (a fact, a note) keeps its relevance unchanged. The links are
    read both ways, so a neighbour that was not a candidate itself (relevance 0) is
    added: a reply is found through the question it answers.
    """
    w = min(1.0, max(0.0, weight))
    out = dict(relevance)
    if w == 0.0 or not neighbours:
        return out
    # only a neighbour with relevance > 0 moves a turn: the links to the others are
    # not kept (most neighbours of a candidate are not candidates themselves)
    relevant = {item_id for item_id, r in relevance.items() if r > 0.0}
    links: dict[str, set[tuple[str, int]]] = {}
    for item_id, pairs in neighbours.items():
        for other, offset in pairs:
            if offset and other != item_id:
                if other in relevant:
                    links.setdefault(item_id, set()).add((other, offset))
                if item_id in relevant:
                    links.setdefault(other, set()).add((item_id, -offset))
    for item_id, around in links.items():
        keep = 1.0
        for other, offset in sorted(around):  # one order: the same bits every run
            keep *= 1.0 - (w / abs(offset)) * relevance[other]
        if keep < 1.0:
            out[item_id] = 1.0 - (1.0 - relevance.get(item_id, 0.0)) * keep
    return out


def answered(neighbours: Neighbours) -> dict[str, str]:
    """``{turn: the other party's turn right after it}`` (a neighbour at offset +1).

    :func:`with_neighbours`' links (other party's turns only), read both ways: a
    turn listed with the one just before it at −1 answered that one.
    """
    found: dict[str, str] = {}
    for item_id, pairs in neighbours.items():
        for other, offset in pairs:
            if offset == 1:
                found[item_id] = other
            elif offset == -1:
                found[other] = item_id
    return found


def answered_by_a_person(
    replies: Mapping[str, str], speaker_of: Mapping[str, str | None]
) -> list[str]:
    """The turns of ``replies`` whose reply came from a person, not an assistant.

    A person answering a question tells of themselves ("We've got a pup and a
    kitty"); an assistant answering the user tells what it knows, and the user's
    question ("Can you suggest shoes like my Nike Pegasus?") is the record of the
    user. Only a person's answer takes over from the question it answers.
    """
    return sorted(
        question
        for question, reply in replies.items()
        if (speaker_of.get(reply) or "").casefold() != ASSISTANT_SPEAKER
    )


def with_answer_focus(
    relevance: Mapping[str, float], asking: Mapping[str, float], *, focus: float
) -> dict[str, float]:
    """Prefer the answer to the question that was answered.

    "What pet do you have?" shares every word of "What pets does Melanie have?" and
    knows nothing of the pets; the reply after it ("We've got a pup and a kitty")
    does, and :func:`with_neighbours` has already lent it the question's relevance.
    ``asking`` maps the turns a reply followed to the share of their words that ask
    (:func:`kronika.core.text.question_share`); each is divided by
    ``1 + focus · share``, so a turn that only asks counts ``1 / (1 + focus)`` and
    one that mostly tells keeps most of its relevance. Everything else is unchanged.
    """
    if focus <= 0:
        return dict(relevance)
    return {
        item_id: value / (1.0 + focus * asking.get(item_id, 0.0))
        for item_id, value in relevance.items()
    }


def named_speakers(
    query: str, speakers: Iterable[str | None], *, assistant: bool | None = None
) -> set[str]:
    """The speakers among ``speakers`` whose name the query contains as whole words.

    Comparison is accent- and case-insensitive (``fold`` + ``casefold``), so
    "What did melanie's kids like?" names ``Melanie``. The assistant is also named by
    its role in any of the four languages ("Co polecił asystent?",
    :func:`kronika.core.roles.names_the_assistant`; ``assistant``: whether the query
    does, when that is already known).
    """
    words = f" {' '.join(folded_words(query))} "
    if assistant is None:
        assistant = names_the_assistant(query)
    found: set[str] = set()
    for name in {s for s in speakers if s}:
        folded = " ".join(folded_words(name))
        by_name = bool(folded) and f" {folded} " in words
        if by_name or (assistant and name.casefold() == ASSISTANT_SPEAKER):
            found.add(name)
    return found


def with_speaker_focus(
    relevance: Mapping[str, float],
    speaker_of: Mapping[str, str | None],
    named: set[str],
    *,
    focus: float,
) -> dict[str, float]:
    """Prefer what a person said when the query names exactly one speaker.

    "What did Caroline research?" is answered by Caroline's own turns far more often
    than by what others said to her, yet BM25 gives her name almost no weight when
    half the conversation is hers. Items by other speakers (or by nobody) are
    divided by ``1 + focus``, so relevance stays in [0, 1] and an item by the named
    speaker keeps its own. With no speaker named, or several, nothing changes.
    """
    if len(named) != 1:
        return dict(relevance)
    (name,) = named
    by_name = [item_id for item_id in relevance if speaker_of.get(item_id) == name]
    return with_preference(relevance, by_name, focus=focus)


def with_preference(
    relevance: Mapping[str, float], preferred: Iterable[str], *, focus: float
) -> dict[str, float]:
    """Items in ``preferred`` keep their relevance; the rest are divided by ``1 + focus``.

    The shape of every "this question wants that kind of memory" adjustment (a named
    speaker, a named period, a question asking when): relevance stays in [0, 1],
    nothing is dropped, and a strong match of the other kind can still win. "When did
    Caroline go to the support group?" is answered by the turn that says "yesterday"
    or "last Friday" far more often than by one that only names the group.
    """
    if focus <= 0:
        return dict(relevance)
    keep = set(preferred)
    scale = 1.0 / (1.0 + focus)
    return {
        item_id: value if item_id in keep else value * scale for item_id, value in relevance.items()
    }


TOLD_AFTER = 7 * 86400.0
"""Seconds after a period named by a query that still count as in it (at least)."""


def said_in(period: tuple[float, float]) -> tuple[float, float]:
    """The span (Unix seconds, inclusive) of what counts as said in ``period``: the
    period followed by as long again, at least :data:`TOLD_AFTER` (people tell of
    things after they happen)."""
    start, end = period
    return start, end + max(TOLD_AFTER, end - start)


def said_at_other_times(
    inside: Iterable[str],
    texts: Mapping[str, str],
    said_at: Mapping[str, float],
    span: tuple[float, float],
) -> list[str]:
    """Of the ``inside`` ids (said within ``span``, Unix seconds inclusive), those whose
    text (case and spacing aside) an item of ``texts`` said outside ``span`` says too. A
    request made again and again ("how do I politely remind a client about an
    invoice?") is said in any period: being said in this one tells nothing of it.
    Items of unknown time or text are none of them."""
    start, end = span
    elsewhere = {
        said_alike(text)
        for item_id, text in texts.items()
        if item_id in said_at and not start <= said_at[item_id] <= end
    }
    return [i for i in inside if i in texts and said_alike(texts[i]) in elsewhere]


def with_time_focus(
    relevance: Mapping[str, float],
    created_at: Mapping[str, float],
    period: tuple[float, float],
    *,
    focus: float,
) -> dict[str, float]:
    """Prefer what was said in the period a query names ("in October 2023").

    ``created_at`` and ``period`` (start, end inclusive) are Unix seconds. "What did
    Gina find for her store on 1 February, 2023?" is answered by what was said that
    day far more often than by a later mention of the store, yet neither retriever
    reads dates. People also tell of things after they happen ("last week I…"), so
    the period is followed by as long again (at least :data:`TOLD_AFTER`): what was
    said from its start to then counts as said in it. Other items are divided by
    ``1 + focus``, so relevance stays in [0, 1] and nothing is filtered out. An item
    of unknown time counts as outside.
    """
    start, end = said_in(period)
    said_then = [
        item_id for item_id in relevance if start <= created_at.get(item_id, -math.inf) <= end
    ]
    return with_preference(relevance, said_then, focus=focus)


def with_session_context(
    relevance: Mapping[str, float],
    session_of: Mapping[str, str | None],
    *,
    weight: float,
) -> dict[str, float]:
    """A turn of a conversation that matches as a whole counts a little more.

    ``relevance' = (r + weight · best r of its session) / (1 + weight)``: the best turn
    of each session keeps its relevance, and the others move towards it, so between
    two equally matching turns the one from the more relevant conversation wins.
    Items outside any session are their own session and keep their relevance.
    """
    if weight <= 0:
        return dict(relevance)
    placed = [(item_id, value, session_of.get(item_id)) for item_id, value in relevance.items()]
    best: dict[str, float] = {}
    for _, value, session in placed:
        if session is not None and value > best.get(session, 0.0):
            best[session] = value
    scale = 1.0 + weight
    return {
        item_id: (value + weight * (value if session is None else best.get(session, value))) / scale
        for item_id, value, session in placed
    }


def with_reranking(
    relevance: Mapping[str, float],
    scores: Mapping[str, float],
    *,
    weight: float,
) -> dict[str, float]:
    """Blend a reranker's scores into the relevance of the candidates it read.

    The reranked candidates keep the band of relevance they had (``lo`` … ``hi``, their
    lowest and highest); within it each moves towards the place its reranker score
    gives it: ``r' = (1 − weight) · r + weight · (lo + (hi − lo) · s)``, with ``s`` the
    reranker's score min-max normalised over them. A reranker's raw scale (logits,
    probabilities) does not matter, and the candidates it did not read keep theirs.

    >>> with_reranking({"a": 0.9, "b": 0.5, "c": 0.1}, {"a": -2.0, "b": 3.0}, weight=1.0)
    {'a': 0.5, 'b': 0.9, 'c': 0.1}
    """
    out = dict(relevance)
    read = [item_id for item_id in scores if item_id in relevance]
    if weight <= 0 or len(read) < 2:
        return out
    lo = min(relevance[item_id] for item_id in read)
    hi = max(relevance[item_id] for item_id in read)
    low = min(scores[item_id] for item_id in read)
    spread = max(scores[item_id] for item_id in read) - low
    for item_id in read:
        s = (scores[item_id] - low) / spread if spread > 0 else 0.5
        out[item_id] = (1.0 - weight) * relevance[item_id] + weight * (lo + (hi - lo) * s)
    return out
