"""Hybrid recall: lexical and vector candidates, fused, scored, packed (SPEC R1-R6).

1. Each retriever returns up to ``recall_candidates`` ids under the same filter:
   FTS5/BM25 for exact names and commands (over the query's words without its
   function words, :mod:`kronika.core.keywords`), cosine over embeddings for meaning.
   A question naming the user ("Where does David live now?") is first read as the
   user's own (:mod:`kronika.core.owner`), and a profile fact whose key the question
   gives another owner ("my dog's name") is no candidate
   (:mod:`kronika.core.possession`). The question is read for both searches by
   :mod:`kronika.engine.question`.
2. Per-query normalised scores are fused convexly into one relevance in [0, 1]
   (:mod:`kronika.core.fusion`), each vector candidate's cosine first read against
   the other candidates so a text close to every query does not lead
   (:mod:`kronika.core.hubness`); a conversation turn's relevance is then read
   together with the turns around it, which also brings in replies that name
   nothing of the question they answer, and a question another person answered
   counts less than the reply. A query naming one speaker ("what did
   Caroline say…") prefers that speaker's own turns, a query naming a date, month
   or year ("in October 2023") prefers what was said then (and, for keyed facts,
   the value true then, read from their history: :mod:`kronika.engine.then`, which
   also answers "before X" / "after X"), a question asking when
   prefers what says when ("last week"), and turns move a little towards the best
   turn of their session.
   With a reranker configured, it reads the best ``reranker_depth`` candidates beside
   the query and its scores are blended into theirs; if it cannot be used, recall keeps
   its own order, says so in the result's notes, and leaves it alone for a while
   (30 s, doubling with each failure in a row up to 10 minutes;
   :mod:`kronika.engine.reranking`).
3. The R3 score adds importance and access-aware recency:
   ``score = α·relevance + β·importance + γ·exp(−decay·Δt)``.
4. The best ``k`` are packed into the token budget, and their access is recorded.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from kronika.core.adaptive import ADAPTIVE, adaptive_lexical_weight, specific_words
from kronika.core.budget import pack
from kronika.core.floor import answers, evidenced
from kronika.core.fusion import (
    Neighbours,
    fuse,
    named_speakers,
    with_answer_focus,
    with_neighbours,
    with_preference,
    with_reranking,
    with_session_context,
    with_speaker_focus,
    with_time_focus,
)
from kronika.core.hubness import without_hubs
from kronika.core.keywords import has_content_words
from kronika.core.model import MemoryItem, RecallFilter, RecallHit, RecallResult, ScoreParts
from kronika.core.phatic import informative
from kronika.core.query import MODES, Mode
from kronika.core.ranking import best_ids
from kronika.core.roles import names_the_assistant
from kronika.core.scoring import ScoreWeights
from kronika.core.tense import tense_of
from kronika.core.timeexpr import asks_when, mentions_time
from kronika.engine.answered import answered_questions
from kronika.engine.best import best, once_each
from kronika.engine.candidates import NEIGHBOUR_SEEDS, CandidateReads, read_texts
from kronika.engine.held import RecallMark, audience_of
from kronika.engine.owner import not_asked
from kronika.engine.question import QuestionReader
from kronika.engine.relations import through_relations
from kronika.engine.reranking import Reranking
from kronika.engine.said_then import SaidThen, naming_period, said_also_outside, search_period
from kronika.engine.searches import Searches
from kronika.engine.then import HistoryReading, read_history
from kronika.errors import InvalidQuery
from kronika.ports import (
    CandidateVectors,
    Clock,
    Embedder,
    ItemIndex,
    Reranker,
    TokenCounter,
    Vector,
)
from kronika.settings import (
    CALIBRATED_ANSWER_FLOORS,
    CALIBRATED_FLOORS,
    EmbeddingGroup,
    RecallGroup,
    RerankerGroup,
    floor_value,
)

log = logging.getLogger("kronika.recall")


def _weights(recall: RecallGroup) -> ScoreWeights:
    return ScoreWeights.from_settings(
        recall.alpha, recall.beta, recall.gamma, recall.recency_half_life, recall.decay_base
    )


_RECALL, _RERANKER, _EMBEDDER = RecallGroup(), RerankerGroup(), EmbeddingGroup().embedder


@dataclass(frozen=True, slots=True)
class RecallSettings:
    """What one recall reads (:meth:`of`): the recall group, the reranker's share and the
    floors as numbers for the embedder. Each default is the settings' own."""

    candidates: int = _RECALL.recall_candidates
    results: int = _RECALL.recall_k
    lexical_weight: float = _RECALL.lexical_weight
    fusion: str = _RECALL.fusion
    adaptive_shift: float = _RECALL.adaptive_shift
    skip_function_words: bool = _RECALL.skip_function_words
    neighbour_weight: float = _RECALL.neighbour_weight
    neighbour_window: int = _RECALL.neighbour_window
    answer_focus: float = _RECALL.answer_focus
    speaker_focus: float = _RECALL.speaker_focus
    time_focus: float = _RECALL.time_focus
    when_focus: float = _RECALL.when_focus
    session_weight: float = _RECALL.session_weight
    hub_neighbours: int = _RECALL.hub_neighbours
    hub_scope: str = _RECALL.hub_scope
    fusion_z_ceiling: float = _RECALL.fusion_z_ceiling
    reranker_depth: int = _RERANKER.reranker_depth
    reranker_weight: float = _RERANKER.reranker_weight
    relevance_floor: float = floor_value(_RECALL.relevance_floor, CALIBRATED_FLOORS, _EMBEDDER)
    answer_floor: float = floor_value(_RECALL.answer_floor, CALIBRATED_ANSWER_FLOORS, _EMBEDDER)
    weights: ScoreWeights = _weights(_RECALL)

    @classmethod
    def of(cls, recall: RecallGroup, reranker: RerankerGroup, embedder: str) -> RecallSettings:
        """What recall reads of its group, of the reranker group and of the embedder's
        name (which an ``auto`` floor depends on)."""
        return cls(
            candidates=recall.recall_candidates,
            results=recall.recall_k,
            lexical_weight=recall.lexical_weight,
            fusion=recall.fusion,
            adaptive_shift=recall.adaptive_shift,
            skip_function_words=recall.skip_function_words,
            neighbour_weight=recall.neighbour_weight,
            neighbour_window=recall.neighbour_window,
            answer_focus=recall.answer_focus,
            speaker_focus=recall.speaker_focus,
            time_focus=recall.time_focus,
            when_focus=recall.when_focus,
            session_weight=recall.session_weight,
            hub_neighbours=recall.hub_neighbours,
            hub_scope=recall.hub_scope,
            fusion_z_ceiling=recall.fusion_z_ceiling,
            reranker_depth=reranker.reranker_depth,
            reranker_weight=reranker.reranker_weight,
            relevance_floor=floor_value(recall.relevance_floor, CALIBRATED_FLOORS, embedder),
            answer_floor=floor_value(recall.answer_floor, CALIBRATED_ANSWER_FLOORS, embedder),
            weights=_weights(recall),
        )


class Recaller:
    """Runs one recall against the index."""

    def __init__(
        self,
        *,
        index: ItemIndex,
        embedder: Embedder,
        tokens: TokenCounter,
        clock: Clock,
        settings: RecallSettings,
        reranker: Reranker | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._index = index
        self._tokens = tokens
        self._clock = clock
        self._settings = settings
        # the reranker, when one is configured and weighs in (engine/reranking.py)
        self._reranking = (
            Reranking(reranker, settings.reranker_depth, settings.weights, monotonic)
            if reranker is not None and settings.reranker_depth > 1 and settings.reranker_weight > 0
            else None
        )
        # an isinstance of a runtime Protocol is slow: asked once, not at every recall
        self._vectors_of = index.vectors_of if isinstance(index, CandidateVectors) else None
        self._families_of = index.families_of if isinstance(index, CandidateVectors) else None
        # the index's mark of its items, asked once per recall for the names and keys
        self._mark = RecallMark(index)
        # the question read for the searches (engine/question.py)
        self._questions = QuestionReader(
            index,
            embedder,
            self._mark,
            time_focus=settings.time_focus,
            skip_function_words=settings.skip_function_words,
        )
        self._searches = Searches(index)

    def recall(
        self,
        query: str,
        flt: RecallFilter,
        *,
        k: int,
        mode: Mode = "hybrid",
        now: datetime | None = None,
        budget_tokens: int | None = None,
        record_access: bool = True,
        query_vector: Vector | None = None,
    ) -> RecallResult:
        if mode not in MODES:
            raise InvalidQuery(f"unknown recall mode {mode!r}; choose one of {', '.join(MODES)}")
        if k < 1:
            raise InvalidQuery("k must be at least 1")
        moment = now or self._clock.now()
        self._mark.renew()  # the items may have changed since the last recall
        limit = max(self._settings.candidates, k)
        question = self._questions.read(query, flt, mode, moment, query_vector)
        words, side_by_side, vector = question.words, question.whole_phrase, question.vector
        # both at once where the index can (a server: one round trip, engine/searches.py)
        lexical, dense = self._searches.run(words, vector, flt, limit, whole_phrase=side_by_side)
        period = question.period
        # what was said in a period the question names is searched for too, since no
        # item's words say when it was said (engine/said_then.py)
        said = (
            search_period(
                self._searches, words, vector, flt, limit, period, whole_phrase=side_by_side
            )
            if period is not None
            else None
        )
        if said is not None:
            lexical, dense = said.merged(lexical, dense)
        # a named period or "before X" also reads the history of keyed facts (engine/then.py)
        history = (
            read_history(
                self._index,
                flt,
                query=query,
                period=period,
                words=words,
                whole_phrase=side_by_side,
                vector=vector,
                limit=limit,
                keyed=question.keyed,
            )
            if self._settings.time_focus > 0 and query.strip()
            else None
        )
        if history is not None:
            lexical, dense = history.merged(lexical, dense)
        # a fact of the user's keyed as something of another's is no answer, and "Where do
        # I live?" is not answered by the page of the user's mother
        if query.strip():
            asked, names = question.asked.text, question.names
            unasked = not_asked(self._index, (lexical, dense), query, asked, names)
            lexical, dense = _without(lexical, unasked), _without(dense, unasked)
        if not answers((cosine for _, cosine in dense or ()), self._settings.answer_floor):
            return self._unanswered(query, dense, budget_tokens)
        vectors, families = self._candidate_vectors(dense)
        # An item that tells nothing ("hello, how are you?", "thanks") does not answer
        # a query that asks something: when one reaches the top, the ranking is made
        # again without it, and without every other such candidate, read at once (a
        # memory of small talk would otherwise bring the next greeting up each time;
        # :mod:`kronika.core.phatic`). A neighbour it brings in later is left out the
        # same way, in one more ranking.
        asks = informative(query)
        # "What did the assistant suggest?" names the assistant by its role
        assistant_asked = names_the_assistant(query)
        excluded: set[str] = set()
        screened = False
        while True:
            scored, ranked, notes = self._rank(
                query,
                flt,
                k,
                moment,
                lexical,
                dense,
                excluded,
                period,
                history,
                said,
                vectors,
                families,
                assistant_asked=assistant_asked,
            )
            idle = {hit.item.id for hit in scored if asks and not informative(hit.item.content)}
            if not idle:
                break
            excluded |= idle
            if not screened:
                screened = True
                excluded |= self._idle([i for i in ranked if i not in excluded])
        kept, dropped = pack(scored, lambda hit: hit.tokens, budget_tokens)
        if record_access and kept:
            self._index.record_access([hit.item.id for hit in kept], moment)
        for hit in kept:
            log.debug(
                "recalled %s score=%.4f rel=%.4f imp=%.2f rec=%.4f",
                hit.item.id,
                hit.score.total,
                hit.score.relevance,
                hit.score.importance,
                hit.score.recency,
            )
        return RecallResult(
            query=query,
            hits=tuple(kept),
            total_tokens=sum(hit.tokens for hit in kept),
            budget_tokens=budget_tokens,
            candidates=len(ranked),
            dropped_for_budget=dropped,
            notes=tuple(notes),
        )

    def _unanswered(
        self, query: str, dense: Sequence[tuple[str, float]] | None, budget_tokens: int | None
    ) -> RecallResult:
        """No hits: nothing stored is close enough to ``query`` to answer it
        (:func:`kronika.core.floor.answers`), and the note that says so."""
        closest = max(score for _, score in dense or [])
        floor = self._settings.answer_floor
        log.debug("answer floor: the best cosine %.3f is below %g", closest, floor)
        note = (
            f"nothing matched closely enough: the closest memory's cosine with the query"
            f" ({closest:.3f}) is below the answer floor ({floor:g})"
        )
        return RecallResult(
            query=query,
            hits=(),
            total_tokens=0,
            budget_tokens=budget_tokens,
            candidates=0,
            notes=(note,),
        )

    def _rank(
        self,
        query: str,
        flt: RecallFilter,
        k: int,
        moment: datetime,
        lexical: list[tuple[str, float]] | None,
        dense: list[tuple[str, float]] | None,
        excluded: set[str],
        period: tuple[datetime, datetime] | None,
        history: HistoryReading | None,
        said: SaidThen | None,
        vectors: Mapping[str, Vector],
        families: Mapping[str, str],
        *,
        assistant_asked: bool,
    ) -> tuple[list[RecallHit], list[str], list[str]]:
        """The ``k`` best of the candidates both searches found (best first), the ids of
        every candidate ranked, and notes on the ranking; ``excluded`` ids are no
        candidates, not even as a neighbour of one. ``vectors``: the vector candidates'
        embeddings, to read each against the others (:mod:`kronika.core.hubness`), those
        of other ``families`` only (sessions, keys) when any are given.
        ``assistant_asked``: whether the query names the assistant by its role
        (:func:`kronika.core.roles.names_the_assistant`)."""
        lexical, dense = _without(lexical, excluded), _without(dense, excluded)
        method, weight = self._settings.fusion, self._settings.lexical_weight
        depth = self._settings.candidates
        if said is not None:  # what was said then is put on the one scale with the rest
            depth = max(depth, len(lexical or ()), len(dense or ()))
        if method == ADAPTIVE:  # zscore at the query's own weight (core/adaptive.py)
            method = "zscore"
            weight = self._adaptive_weight(query, lexical, dense)
        relevance = fuse(
            lexical,
            without_hubs(
                dense, vectors, neighbours=self._settings.hub_neighbours, families=families
            )
            if dense and vectors
            else dense,
            lexical_weight=weight,
            depth=depth,
            method=method,
            z_ceiling=self._settings.fusion_z_ceiling,
        )
        if history is not None:
            relevance = history.ordered(relevance, focus=self._settings.time_focus)
        window = self._settings.neighbour_window
        context = self._settings.neighbour_weight > 0 and window > 0
        # Context changes the order near the top; the best NEIGHBOUR_SEEDS candidates
        # (whatever k is) bring their neighbours, so the cost does not grow with k.
        wanted = context or self._settings.answer_focus > 0
        seeds = best_ids(relevance, NEIGHBOUR_SEEDS) if wanted else []
        reads = CandidateReads(self._index, list(relevance), seeds, flt, max(window, 1))
        links: Neighbours = reads.links
        if context:
            relevance = with_neighbours(relevance, links, weight=self._settings.neighbour_weight)
            if excluded:
                relevance = {i: r for i, r in relevance.items() if i not in excluded}
        # score on a few columns first; build whole items only for the winners (and the
        # candidates the reranker reads); the questions that were answered, and the best
        # candidates of a question asking when, are read for their text alone
        fetched: dict[str, MemoryItem] = {}
        texts: dict[str, str] = {}
        if self._settings.answer_focus > 0 and links:
            texts, asking = answered_questions(
                relevance, links, reads, assistant_asked=assistant_asked
            )
            relevance = with_answer_focus(relevance, asking, focus=self._settings.answer_focus)
        reached: dict[str, str] = {}
        if self._settings.answer_focus > 0 and lexical and query.strip():
            relevance, reached = through_relations(
                self._index,
                reads.get_items,
                flt,
                query,
                relevance,
                (item_id for item_id, _ in lexical),
                focus=self._settings.answer_focus,
            )
            relevance = {i: r for i, r in relevance.items() if i not in excluded}
        lexical_rank = {item_id: rank for rank, (item_id, _) in enumerate(lexical or [], 1)}
        similarity = dict(dense or [])
        features = reads.score_features(list(relevance))
        if self._settings.speaker_focus > 0 and query.strip():
            speaker_of = dict(zip(features.ids, features.speaker, strict=True))
            named = named_speakers(query, speaker_of.values(), assistant=assistant_asked)
            relevance = with_speaker_focus(
                relevance, speaker_of, named, focus=self._settings.speaker_focus
            )
        named_then: list[str] = []
        if period is not None:
            log.debug(
                "query names %s .. %s: preferring what was said (or true) then",
                period[0].date(),
                period[1].date(),
            )
            placed = dict(zip(features.ids, features.created_at.tolist(), strict=True))
            # "a trip to Lisbon in September", said in June, is about then too, unless
            # the question asks what happened then ("What happened in February?")
            if tense_of(query) != "past":
                named_then = naming_period(relevance, placed, period, reads, texts)
            for item_id in said_also_outside(relevance, placed, period, reads, texts):
                del placed[item_id]
            relevance = with_time_focus(
                relevance,
                placed
                | dict.fromkeys(named_then, period[0].timestamp())
                | (history.placed if history is not None else {}),
                (period[0].timestamp(), period[1].timestamp()),
                focus=self._settings.time_focus,
            )
        if self._settings.when_focus > 0 and asks_when(query):
            # The question asks for a time: prefer what says one ("last week", "in October").
            # Only the best NEIGHBOUR_SEEDS are read; the rest count as saying none.
            seeds = best_ids(relevance, NEIGHBOUR_SEEDS)
            texts |= reads.texts([item_id for item_id in seeds if item_id not in texts])
            told = [i for i in seeds if i in texts and mentions_time(texts[i])]
            log.debug(
                "query asks when: %d of the best %d candidates say when", len(told), len(seeds)
            )
            relevance = with_preference(relevance, told, focus=self._settings.when_focus)
        if self._settings.session_weight > 0:
            session_of = dict(zip(features.ids, features.session_id, strict=True))
            relevance = with_session_context(
                relevance, session_of, weight=self._settings.session_weight
            )
        notes: list[str] = []
        if self._settings.relevance_floor > 0 and relevance:
            # the closest of what was said in a period the question names have its
            # evidence: as many as a recall returns by default, whatever this one's k
            given = said.closest(self._settings.results, relevance) if said is not None else []
            given = [*given, *named_then]
            relevance = self._above_floor(
                query, relevance, lexical, similarity, links, history, reached, given, notes
            )
        reranked: dict[str, float] = {}
        if self._reranking is not None and query.strip():
            reranked, note = self._reranking.scores(
                query, flt, features, relevance, moment, fetched, reads
            )
            if note:
                notes.append(note)
            relevance = with_reranking(relevance, reranked, weight=self._settings.reranker_weight)
        # one text said again and again is one memory: its best copy takes one place, so
        # the best are read until k texts are found (or every candidate is); with no text
        # repeated among the best k, they are all that is read
        items = dict(fetched)  # (the reranker's reads, checked as they were read)
        read_to = k
        while True:
            top = best(features, relevance, moment, self._settings.weights, read_to, reads.usage)
            missing = [w.item_id for w in top if w.item_id not in items]
            items |= audience_of(reads.get_items(missing), flt)
            winners = once_each(top, items)[:k]
            if len(winners) == k or len(top) < read_to:
                break
            read_to *= 2
        scored = [
            RecallHit(
                item=items[w.item_id],
                score=ScoreParts(
                    relevance=w.relevance,
                    importance=w.importance,
                    recency=w.recency,
                    total=w.total,
                    lexical_rank=lexical_rank.get(w.item_id),
                    vector_similarity=similarity.get(w.item_id),
                    rerank_score=reranked.get(w.item_id),
                    history=history.reasons.get(w.item_id) if history is not None else None,
                ),
                tokens=self._tokens.count(items[w.item_id].content),
            )
            for w in winners
            if w.item_id in items
        ]
        return scored, list(relevance), notes

    def _idle(self, ids: Sequence[str]) -> set[str]:
        """The items of ``ids`` that tell nothing (:func:`~kronika.core.phatic.informative`),
        their texts read in one go."""
        if not ids:
            return set()
        texts = read_texts(self._index, ids)
        return {item_id for item_id, text in texts.items() if not informative(text)}

    def _adaptive_weight(
        self,
        query: str,
        lexical: Sequence[tuple[str, float]] | None,
        dense: Sequence[tuple[str, float]] | None,
    ) -> float:
        """The lexical weight of ``fusion = adaptive`` for ``query``; the speakers of the
        candidates are read only when the query names someone (their names are no
        specific words)."""
        base, shift = self._settings.lexical_weight, self._settings.adaptive_shift
        if not specific_words(query):
            return adaptive_lexical_weight(query, base, shift)
        ids = list(dict.fromkeys(i for found in (lexical, dense) for i, _ in found or ()))
        speakers = set(self._index.score_features(ids).speaker) if ids else set()
        return adaptive_lexical_weight(query, base, shift, speakers)

    def _candidate_vectors(
        self, dense: Sequence[tuple[str, float]] | None
    ) -> tuple[dict[str, Vector], dict[str, str]]:
        """The stored vectors of the vector candidates, when hub reduction is on and the
        index can give them (:class:`~kronika.ports.CandidateVectors`), and their
        families (sessions, keys) with ``hub_scope = "others"``; else none."""
        if not dense or self._settings.hub_neighbours <= 0 or self._vectors_of is None:
            return {}, {}
        ids = [item_id for item_id, _ in dense]
        vectors = self._vectors_of(ids)
        if self._settings.hub_scope != "others" or self._families_of is None:
            return vectors, {}
        return vectors, self._families_of(ids)

    def _above_floor(
        self,
        query: str,
        relevance: Mapping[str, float],
        lexical: Sequence[tuple[str, float]] | None,
        similarity: Mapping[str, float],
        links: Neighbours,
        history: HistoryReading | None,
        reached: Mapping[str, str],
        said_then: Sequence[str],
        notes: list[str],
    ) -> dict[str, float]:
        """The candidates with absolute evidence (:mod:`kronika.core.floor`); a note when
        none is left. A past value the history chose (true then, or before / after X)
        has the evidence of its key: the versions of one key are one answer to the
        question, and the time decides which. A page reached through a fact naming its
        person (:mod:`kronika.engine.relations`) has the evidence of the fact. The
        closest items ``said_then``, in the period the question names, have the
        evidence of the period (:mod:`kronika.engine.said_then`)."""
        content = not self._settings.skip_function_words or has_content_words(query)
        matched = {item_id for item_id, _ in lexical or []} if content else set()
        kept = evidenced(
            relevance,
            matched=matched,
            similarity=similarity,
            floor=self._settings.relevance_floor,
            links=links,
        )
        if history is not None:
            kept |= {
                chosen
                for chosen, chain in history.lifted.items()
                if chosen in relevance and any(i in kept for i in chain)
            }
        kept |= {page for page, fact in reached.items() if fact in kept and page in relevance}
        kept.update(item_id for item_id in said_then if item_id in relevance)
        log.debug("relevance floor: %d of %d candidates have evidence", len(kept), len(relevance))
        if not kept:
            notes.append(
                f"nothing matched closely enough: none of the {len(relevance)} candidates shares"
                " a content word with the query or reaches the relevance floor"
                f" ({self._settings.relevance_floor:g})"
            )
        return {item_id: r for item_id, r in relevance.items() if item_id in kept}


def _without(
    found: list[tuple[str, float]] | None, excluded: set[str]
) -> list[tuple[str, float]] | None:
    """``found`` without the ids in ``excluded``."""
    if found is None or not excluded:
        return found
    return [(item_id, score) for item_id, score in found if item_id not in excluded]
