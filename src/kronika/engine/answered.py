"""The questions of a conversation that another person answered, read for recall's
answer focus (:func:`kronika.core.fusion.with_answer_focus`): a question someone
answered counts less than the reply that answers it."""

from __future__ import annotations

from collections.abc import Mapping

from kronika.core.fusion import Neighbours, answered, answered_by_a_person
from kronika.core.ranking import best_ids
from kronika.core.text import question_share
from kronika.engine.candidates import NEIGHBOUR_SEEDS, CandidateReads


def answered_questions(
    relevance: Mapping[str, float],
    links: Neighbours,
    reads: CandidateReads,
    *,
    assistant_asked: bool,
) -> tuple[dict[str, str], dict[str, float]]:
    """The best candidates that another person (not the assistant) answered next,
    with their text, and how much each of them asks
    (:func:`kronika.core.text.question_share`).

    When the query asks what the assistant said (``assistant_asked``: "Jaki serial
    polecił asystent?"), the assistant's reply is the answer and the turn it
    replied to is the request, whole: it asks, however it is put ("poleć mi jakiś
    serial" has no question mark).

    Only the best :data:`~kronika.engine.candidates.NEIGHBOUR_SEEDS` can reach the top,
    so only they are read: the speakers of their replies from the score columns, then
    their own text (the text alone: whole items are built for the hits only).
    """
    top = set(best_ids(relevance, NEIGHBOUR_SEEDS))
    replies = {turn: reply for turn, reply in answered(links).items() if turn in top}
    if not replies:
        return {}, {}
    repliers = reads.score_features(sorted(set(replies.values())))
    asked = answered_by_a_person(replies, dict(zip(repliers.ids, repliers.speaker, strict=True)))
    texts = reads.texts(asked)
    asking = {item_id: question_share(text) for item_id, text in texts.items()}
    if assistant_asked:
        asking |= {turn: 1.0 for turn in replies.keys() - set(asked)}
    return texts, asking
