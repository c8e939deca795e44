"""Cosines read against each candidate's own neighbourhood (hubness reduction, CSLS).

Some texts lie close to almost every query: with a multilingual sentence encoder a
short errand ("how do I politely remind someone about an invoice?") or a greeting has
a cosine of 0.25–0.37 with most short questions, more than a keyed fact (``city:
Bristol``) has with the question it answers (0.14). Such *hubs* win the vector list
for questions they say nothing about. Cross-domain similarity local scaling (Conneau
et al., 2018, "Word translation without parallel data") corrects a cosine by how close
the candidate is to everything around it::

    score(q, x) = cos(q, x) − ½ · r_x
    r_x         = mean cosine of x with its ``neighbours`` most similar other candidates

(CSLS is ``2·cos − r_q − r_x``; ``r_q`` is the same for every candidate of one query, so
halving leaves the order and the scale of the cosines.) The neighbourhood is the
query's own candidates (the best ``recall_candidates`` of the vector search), so no
statistic has to be kept in the index: a hub is a candidate that resembles many of the
others. ``neighbours`` = 10 is the value of the paper. The result only orders the
vector list for fusion; the relevance floor reads the cosines themselves.

Closeness to one's own kin is no hubness. The turns of one conversation session
resemble each other, and so do the versions of one keyed fact (its history): when
the answer is such a turn, its nearest fellow candidates are its own session's turns,
and read against them it would lose its lead for being coherent, not for being close
to everything. Given ``families`` (each candidate's session, or its fact's key), a
candidate is read against its nearest candidates of *other* families only
(``hub_scope = "others"``; the default, ``"all"``, reads every candidate as CSLS does).
Measured by cross-validation it does not do better (docs/benchmarks-folds.md): with
``"others"`` LongMemEval loses as much as with ``"all"``, so what hub reduction costs
there is not the answer's own session.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

HUB_NEIGHBOURS = 10
"""Neighbours a candidate's closeness to the rest is averaged over (CSLS's K)."""
HUB_SCOPES = ("others", "all")
"""Whom a candidate is read against: candidates of other families (sessions, keys)
only, or every candidate."""


def family(agent: str, session_id: str | None, key: str | None) -> str | None:
    """The family of an item for :func:`without_hubs`: its fact's key when it has one
    (every version of the fact), else its conversation session, else none."""
    if key:
        return f"{agent}\x1fkey\x1f{key}"
    if session_id:
        return f"{agent}\x1fsession\x1f{session_id}"
    return None


def without_hubs(
    results: Sequence[tuple[str, float]],
    vectors: Mapping[str, npt.ArrayLike],
    *,
    neighbours: int = HUB_NEIGHBOURS,
    families: Mapping[str, str] | None = None,
) -> list[tuple[str, float]]:
    """``results`` (id, cosine) with each cosine lowered by half its candidate's closeness
    to the others (module docstring), in the order given.

    ``vectors`` holds the candidates' embeddings (any length, normalised here). A
    candidate without one is lowered by the mean closeness of those with one. With
    ``neighbours`` 0, or fewer than two candidates with a vector, ``results`` is
    returned unchanged.

    ``families`` (id → session or key): candidates of one family are no neighbours of
    each other; a candidate with fewer than ``neighbours`` candidates of other families
    is averaged over those it has, and one with none counts as usual (the mean
    closeness of the others).
    """
    have = [item_id for item_id, _ in results if item_id in vectors]
    k = min(neighbours, len(have) - 1)
    if k < 1:
        return list(results)
    matrix = np.asarray([np.asarray(vectors[i], dtype=np.float64) for i in have])
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    matrix = matrix / np.where(norms > 0, norms, 1.0)
    similar = matrix @ matrix.T
    np.fill_diagonal(similar, -np.inf)
    if families:
        codes: dict[str, int] = {}
        kin = np.asarray(
            [codes.setdefault(families[i], len(codes)) if i in families else -1 for i in have]
        )
        similar[(kin[:, None] == kin[None, :]) & (kin[:, None] >= 0)] = -np.inf
    nearest = -np.partition(-similar, k - 1, axis=1)[:, :k]
    finite = np.isfinite(nearest)
    counted = finite.sum(axis=1)
    sums = np.where(finite, nearest, 0.0).sum(axis=1)
    means = {
        item_id: float(total / n)
        for item_id, total, n in zip(have, sums, counted, strict=True)
        if n
    }
    if not means:
        return list(results)
    usual = float(np.mean(list(means.values())))
    closeness = {item_id: means.get(item_id, usual) for item_id in have}
    return [(item_id, score - 0.5 * closeness.get(item_id, usual)) for item_id, score in results]
