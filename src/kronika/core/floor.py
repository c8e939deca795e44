"""The relevance floor: recall keeps only candidates with absolute evidence.

Relevance after fusion is normalised per query (the best candidate scores 1 whatever
it is), so it cannot tell "nothing related" from "something related". The floor reads
what is absolute instead. A candidate has evidence when

* keyword search matched it on a word that says what the query is about (a content
  word: :func:`kronika.core.keywords.keyword_phrase` kept it), or
* the cosine between its embedding and the query's is at least ``floor``, or
* it is a conversation turn next to one of the other party's turns that has evidence
  (a reply names nothing of the question it answers).

A floor of 0 keeps every candidate.

Before any candidate is read, :func:`answers` asks whether the query is answered at
all: only when the memory closest to it in meaning (the best cosine of the vector
search, over everything the recall may return) reaches ``answer_floor``. Of the
readings measured to tell a question nothing stored answers from one something does,
it is the best, and a weak one (docs/benchmarks-abstention.md): a keyword match tells
less (a question about a cat nobody has shares "name" with the name of the dog), and
so does the best cosine read against the query's other cosines (a z-score, a margin
over the k-th neighbour) or against how close the memory is to every other memory.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence

Links = Mapping[str, Sequence[tuple[str, int]]]


def evidenced(
    candidates: Iterable[str],
    *,
    matched: Collection[str],
    similarity: Mapping[str, float],
    floor: float,
    links: Links,
) -> set[str]:
    """The ``candidates`` with evidence (all of them when ``floor`` is 0).

    ``matched``: the ids keyword search found on content words; ``similarity``: the
    cosine of the ids the vector search returned; ``links``: a turn's neighbours, read
    both ways.
    """
    pool = list(candidates)
    if floor <= 0:
        return set(pool)
    own = {i for i in pool if i in matched or similarity.get(i, -1.0) >= floor}
    kept = set(own)
    for item_id, around in links.items():
        near = [n for n, _ in around]
        if item_id in own:
            kept.update(near)
        elif any(n in own for n in near):
            kept.add(item_id)
    return kept & set(pool)


def answers(cosines: Iterable[float], floor: float) -> bool:
    """Whether a query whose vector candidates have these cosines is answered at all:
    the best cosine reaches ``floor``. Without vector candidates (a lexical recall, or
    nothing embedded yet) there is nothing to read, and the query is answered; a floor
    of 0 answers every query."""
    if floor <= 0:
        return True
    best = max(cosines, default=None)
    return best is None or best >= floor
